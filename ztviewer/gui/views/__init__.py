"""Widgets that show one aspect of an open file."""
