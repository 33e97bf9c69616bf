"""flows package (see ARCHITECTURE in docs/)."""
