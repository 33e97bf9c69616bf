"""deployments package (see ARCHITECTURE in docs/)."""
