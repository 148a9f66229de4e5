"""The desktop app (PySide6 widgets). Start it with :func:`ztviewer.gui.app.main`."""
from ztviewer.workers import qt_compat  # noqa: F401  (binding work-arounds before any widget exists)
