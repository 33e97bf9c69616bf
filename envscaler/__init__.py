"""The `envscaler` command-line front door (the core lives in `envscaler_core`)."""
