"""One running ztviewer per user: a second launch hands its files to the first over a local socket.

Also turns macOS ``QFileOpenEvent`` (documents double-clicked in Finder arrive as events, not argv) into
the same "open these files" request.
"""
from __future__ import annotations

import getpass
import hashlib
import json
import os

from PySide6.QtCore import QByteArray, QEvent, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

CONNECT_TIMEOUT_MS = 300
WRITE_TIMEOUT_MS = 1000


def server_name() -> str:
    """Per-user name of the local socket (``ZTVIEWER_INSTANCE_NAME`` overrides it, e.g. in tests)."""
    override = os.environ.get("ZTVIEWER_INSTANCE_NAME")
    if override:
        return override
    user = hashlib.sha1(getpass.getuser().encode()).hexdigest()[:12]
    return f"ztviewer-{user}"


def forward_to_running_instance(paths: list[str], name: str | None = None) -> bool:
    """Send ``paths`` to a running instance; ``True`` when it took them (then this process can exit)."""
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    payload = json.dumps({"open": [os.path.abspath(p) for p in paths]}).encode() + b"\n"
    socket.write(QByteArray(payload))
    sent = socket.waitForBytesWritten(WRITE_TIMEOUT_MS)
    socket.waitForReadyRead(WRITE_TIMEOUT_MS)  # the acknowledgement: the instance has the request
    acknowledged = bytes(socket.readAll().data()) == b"ok\n"
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


class FileOpenEventFilter(QObject):
    """Catches ``QEvent.FileOpen`` on the application (macOS Finder, "Open With")."""

    files_requested = Signal(list)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if event.type() == QEvent.Type.FileOpen:
            path = event.file() or event.url().toLocalFile()
            if path:
                self.files_requested.emit([path])
                return True
        return False
