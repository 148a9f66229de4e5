"""Start the desktop app: ``ztviewer [FILE…]`` / ``python -m ztviewer [FILE…]`` end up in :func:`main`."""
from __future__ import annotations

import sys
from typing import Sequence

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication

from ztviewer import __version__

ORGANIZATION = "ztviewer"
APPLICATION = "ztviewer"


def create_application(argv: Sequence[str] | None = None) -> QApplication:
    """The running QApplication, or a new one named for QSettings."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(list(argv) if argv is not None else sys.argv[:1])
    if not QCoreApplication.organizationName():
        QCoreApplication.setOrganizationName(ORGANIZATION)
    if not QCoreApplication.applicationName() or QCoreApplication.applicationName() == "python":
        QCoreApplication.setApplicationName(APPLICATION)
    QCoreApplication.setApplicationVersion(__version__)
    QApplication.setApplicationDisplayName("ztviewer")
    return app


def main(files: list[str] | None = None) -> int:
    """Create the app and window, open ``files`` (each parsed on a worker) and run the event loop."""
    from .main_window import MainWindow

    app = create_application()
    window = MainWindow()
    window.show()
    window.open_paths(files or [])
    return app.exec()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
