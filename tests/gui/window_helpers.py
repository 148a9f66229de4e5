"""Helpers for driving the main window in tests."""
from __future__ import annotations


def open_in_window(qtbot, window, path, timeout: int = 10_000):
    """Open ``path`` through the window and wait for its tab (the parse runs on a worker)."""
    window.opener.open_path(str(path))
    qtbot.waitUntil(lambda: window.view_for(str(path)) is not None, timeout=timeout)
    return window.view_for(str(path))
