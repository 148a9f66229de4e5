"""Qt-free state and decisions behind the views of an open file (no Qt here): what a view shows is decided here
and only rendered by :mod:`ztviewer.gui`, so it can be driven from a test or a notebook."""
