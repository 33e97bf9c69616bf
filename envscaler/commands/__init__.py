"""One module per CLI verb. Each exposes `register(app, verb, help_text)`."""
