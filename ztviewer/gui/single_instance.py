"""One running ztviewer per user and display: a second launch hands its files to the first over a local socket.

The socket's name is keyed by the user *and* the display or login session (see :func:`session_key`), so another
seat, a remote session or a nested display of the same user gets its own window instead of feeding files to a
window it cannot see; tests give every run its own name (``ZTVIEWER_INSTANCE_NAME``).

Also turns macOS ``QFileOpenEvent`` (documents double-clicked in Finder arrive as events, not argv) into
the same "open these files" request.
"""
from __future__ import annotations

import getpass
import hashlib
import os
from collections.abc import Mapping

from PySide6.QtCore import QByteArray, QEvent, QObject, Signal
from PySide6.QtGui import QFileOpenEvent
from PySide6.QtNetwork import QLocalServer, QLocalSocket

CONNECT_TIMEOUT_MS = 300
WRITE_TIMEOUT_MS = 1000
# Once connected, the running instance exists: it may be busy on its GUI thread (opening a large file, a loaded
# machine) before it reads the request. Giving up early would open a second window *and* the file in the first.
ACK_TIMEOUT_MS = 15_000


def server_name(environ: Mapping[str, str] | None = None) -> str:
    """Name of the local socket for this user and display/session (``ZTVIEWER_INSTANCE_NAME`` overrides it)."""
    environ = os.environ if environ is None else environ
    override = environ.get("ZTVIEWER_INSTANCE_NAME")
    if override:
        return override
    key = f"{_user_name(environ)}\0{session_key(environ)}"
    return f"ztviewer-{hashlib.sha1(key.encode()).hexdigest()[:16]}"


def session_key(environ: Mapping[str, str]) -> str:
    """What tells this user's screens and login sessions apart.

    The display when there is one (``WAYLAND_DISPLAY``, ``DISPLAY`` without its screen number: a terminal and a
    double-click in the same desktop agree on it), else the login session: ``XDG_SESSION_ID`` (Linux),
    ``SECURITYSESSIONID`` (macOS), the Windows session id.
    """
    parts = []
    if environ.get("WAYLAND_DISPLAY"):
        parts.append("wayland=" + environ["WAYLAND_DISPLAY"])
    if environ.get("DISPLAY"):
        display = environ["DISPLAY"]
        host, _, number = display.rpartition(":")
        parts.append(f"x11={host}:{number.split('.')[0]}" if number else "x11=" + display)
    if parts:
        return ";".join(parts)
    for variable in ("XDG_SESSION_ID", "SECURITYSESSIONID"):
        if environ.get(variable):
            return f"{variable}={environ[variable]}"
    windows = _windows_session_id()
    return "" if windows is None else f"windows-session={windows}"


def _windows_session_id() -> int | None:
    """The Terminal Services session of this process where the system has one (Windows), else ``None``."""
    import ctypes  # asked only where no display or login session names the session

    windll = getattr(ctypes, "windll", None)
    if windll is None:
        return None
    session = ctypes.c_ulong(0)
    ok = windll.kernel32.ProcessIdToSessionId(os.getpid(), ctypes.byref(session))
    return int(session.value) if ok else None


def _user_name(environ: Mapping[str, str]) -> str:
    try:
        return getpass.getuser()
    except (ImportError, KeyError, OSError):  # no login name in the environment and no password database
        return environ.get("USERNAME") or environ.get("USER") or "user"


def forward_to_running_instance(paths: list[str], name: str | None = None) -> bool:
    """Send ``paths`` to a running instance; ``True`` when it took them (then this process can exit)."""
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    import json  # only a second launch talks to the first

    payload = json.dumps({"open": [os.path.abspath(p) for p in paths]}).encode() + b"\n"
    socket.write(QByteArray(payload))
    sent = socket.waitForBytesWritten(WRITE_TIMEOUT_MS)
    reply = bytearray()
    while sent and len(reply) < 3 and socket.waitForReadyRead(ACK_TIMEOUT_MS):  # the acknowledgement
        reply += bytes(socket.readAll().data())
    acknowledged = bytes(reply) == b"ok\n"
    socket.disconnectFromServer()
    return sent and acknowledged


class InstanceServer(QObject):
    """Listens for other launches and emits the files they hand over."""

    files_requested = Signal(list)

    def __init__(self, name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name or server_name()
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        self._buffers: dict[QLocalSocket, bytearray] = {}

    def listen(self) -> bool:
        if self._server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)  # a stale socket left by a crashed instance
        return self._server.listen(self.name)

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._buffers[socket] = bytearray()
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(lambda s=socket: self._drop(s))

    def _read(self, socket: QLocalSocket) -> None:
        buffer = self._buffers.setdefault(socket, bytearray())
        buffer += bytes(socket.readAll().data())
        if b"\n" not in buffer or len(buffer) > 1 << 20:
            return
        line = bytes(buffer).split(b"\n", 1)[0]
        buffer.clear()
        import json  # only a second launch talks to the first

        try:
            paths = [str(p) for p in json.loads(line)["open"]]
        except (ValueError, KeyError, TypeError):
            return
        socket.write(QByteArray(b"ok\n"))
        socket.flush()
        self.files_requested.emit(paths)

    def _drop(self, socket: QLocalSocket) -> None:
        self._buffers.pop(socket, None)
        socket.deleteLater()


#: the Qt platforms that send ``QFileOpenEvent`` ("currently supported for macOS only", Qt's documentation; iOS too).
#: Elsewhere files arrive on the command line, and an application-wide filter would only add a Python call to every
#: event of the application (some 2,000 before the first file is shown).
FILE_OPEN_PLATFORMS = ("cocoa", "ios")


def sends_file_open_events(platform_name: str) -> bool:
    """Whether Qt's platform ``platform_name`` (``QGuiApplication.platformName()``) sends ``QFileOpenEvent``."""
    return platform_name in FILE_OPEN_PLATFORMS


class FileOpenEventFilter(QObject):
    """Catches ``QEvent.FileOpen`` on the application (macOS Finder, "Open With")."""

    files_requested = Signal(list)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FileOpen and isinstance(event, QFileOpenEvent):
            path = event.file() or event.url().toLocalFile()
            if path:
                self.files_requested.emit([path])
                return True
        return False
