"""Start the desktop app: ``ztviewer [FILE…]`` / ``python -m ztviewer [FILE…]`` end up in :func:`main`."""
from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence

from PySide6.QtCore import QCoreApplication, QMessageLogContext, QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from ztviewer import __version__

ORGANIZATION = "ztviewer"
APPLICATION = "ztviewer"


def create_application(argv: Sequence[str] | None = None) -> QApplication:
    """The running QApplication, or a new one named for QSettings."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):   # none yet (a bare QCoreApplication cannot show windows either)
        if app is not None:
            raise RuntimeError("a QCoreApplication is running; ztviewer's windows need a QApplication")
        serial_fills()
        quiet_platform_notices()
        app = QApplication(list(argv) if argv is not None else sys.argv[:1])
    if not QCoreApplication.organizationName():
        QCoreApplication.setOrganizationName(ORGANIZATION)
    if not QCoreApplication.applicationName() or QCoreApplication.applicationName() == "python":
        QCoreApplication.setApplicationName(APPLICATION)
    QCoreApplication.setApplicationVersion(__version__)
    QApplication.setApplicationDisplayName("ztviewer")
    return app


#: what Qt's platform plugins print that says nothing to a user: the offscreen and minimal platforms have no
#: window manager to pass size hints to
PLATFORM_NOTICES = ("This plugin does not support propagateSizeHints()",)


def quiet_platform_notices() -> object:
    """Drop :data:`PLATFORM_NOTICES` from Qt's log; every other message is printed as Qt would. Returns the
    handler it replaced."""
    previous = None

    def handler(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
        if message in PLATFORM_NOTICES:
            return
        if previous is not None:
            previous(kind, context, message)
        else:
            print(message, file=sys.stderr)

    previous = qInstallMessageHandler(handler)
    return previous


def serial_fills() -> None:
    """Keep Qt's raster fills on the painting thread (``QT_NO_GUI_THREADPOOL``, read once by Qt, so before the
    application exists), unless ``ZTVIEWER_QT_GUI_THREADPOOL=1``. Qt hands every fill of 96 or more rows to its
    own thread pool and waits for it: painting the first window made ~300 such hand-offs, each a wake-up of
    another thread, which on a busy machine cost more wall time than the fills (start-up 1.51 -> 1.34 s, same
    CPU). Our large images (heatmaps) are drawn downsampled to the screen, where a serial fill takes a few ms."""
    if not os.environ.get("ZTVIEWER_QT_GUI_THREADPOOL"):
        os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def main(files: list[str] | None = None, new_instance: bool = False,
         compare: Sequence[str] | None = None) -> int:
    """Create the app and window, open ``files`` (each parsed on a worker) and run the event loop.

    When another ztviewer is already running for this user, ``files`` are handed to it instead and this
    process exits (``new_instance`` or ``ZTVIEWER_NEW_INSTANCE=1`` always starts a new window). ``compare``
    ``(A, B)`` opens a Compare tab (in this process: a comparison is not handed over).
    """
    from .main_window import MainWindow
    from .single_instance import (
        FileOpenEventFilter,
        InstanceServer,
        forward_to_running_instance,
        sends_file_open_events,
    )

    files = list(files or [])
    separate = new_instance or bool(os.environ.get("ZTVIEWER_NEW_INSTANCE"))
    if files and not compare and not separate and forward_to_running_instance(files):
        return 0
    app = create_application()
    window = MainWindow()
    # the files are parsed on workers while the window is shown: most of that is C++ that lets Python run
    window.opener.open_paths(files)
    if not separate:
        server = InstanceServer(parent=window)
        server.listen()
        server.files_requested.connect(lambda paths: bring_forward(window, paths))
    if sends_file_open_events(QApplication.platformName()):
        file_events = FileOpenEventFilter(window)
        app.installEventFilter(file_events)
        file_events.files_requested.connect(lambda paths: bring_forward(window, paths))
    window.show()
    if compare:
        window.opener.compare_paths(*compare)
    if os.environ.get("ZTVIEWER_SMOKE_TEST"):
        report_when_opened(window, app)
    QTimer.singleShot(0, resume_garbage_collection)
    return app.exec()


def resume_garbage_collection() -> None:
    """Once the event loop runs: what start-up made is kept out of later collections (``gc.freeze``; its few
    cycles stay), and collection (turned off by the launcher for start-up) resumes."""
    gc.freeze()
    gc.enable()


def bring_forward(window, paths: list[str]) -> None:
    window.opener.open_paths(paths)
    if window.isMinimized():
        window.showNormal()
    if QApplication.platformName() != "offscreen":  # headless platforms cannot raise windows
        window.raise_()
        window.activateWindow()


def report_when_opened(window, app: QApplication, timeout_ms: int = 30_000) -> None:
    """``ZTVIEWER_SMOKE_TEST=1``: once every file has opened, print the window title, one line per tab (tensors,
    error problems) and any failure, then quit: status 0 only when every file opened without an error problem
    (packaging, wheel and desktop-entry tests run the real launcher this way, headless)."""
    from PySide6.QtCore import QElapsedTimer

    clock = QElapsedTimer()
    clock.start()
    timer = QTimer(window)

    def poll() -> None:
        done = not window.opener.opening
        if done or clock.elapsed() > timeout_ms:
            timer.stop()
            shown = window.windowTitle().replace("[*]", "*" if window.isWindowModified() else "")
            print(f"ztviewer-smoke: title={shown!r} tabs={window.tabs.count()}", flush=True)
            errors = 0
            for view in window.file_views():
                tf = view.tensor_file
                count = sum(p.is_error for p in tf.all_problems())
                errors += count
                print(f"ztviewer-smoke: opened {os.path.basename(tf.path)!r} tensors={len(tf.tensors)} "
                      f"errors={count}", flush=True)
            failure = getattr(window, "last_error", None)
            if failure:
                print(f"ztviewer-smoke: failed {failure}", flush=True)
            app.exit(0 if done and not errors and not failure else 1)

    timer.timeout.connect(poll)
    timer.start(50)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
