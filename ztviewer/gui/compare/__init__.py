"""File ▸ Compare…: a tab comparing two files or sets (rendering a
:class:`~ztviewer.session.comparison.ComparisonSession`)."""
