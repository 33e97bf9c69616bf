"""tasks package (see ARCHITECTURE in docs/)."""
