"""Small dialogs."""
