"""sandbox package (see ARCHITECTURE in docs/)."""
