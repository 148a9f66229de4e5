"""Worker tests run headless; signals are delivered through the Qt event loop of pytest-qt's qapp."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import ztviewer.workers  # noqa: F401  (binding work-arounds first)
