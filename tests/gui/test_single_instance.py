"""Issue 7: a second launch hands its file to the running window; Finder-style QFileOpenEvent opens files;
the desktop entry's Exec line opens the file it is given."""
from __future__ import annotations

import ctypes
import os
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy
from PySide6.QtGui import QFileOpenEvent
from PySide6.QtWidgets import QApplication

from tests.gui.window_helpers import open_in_window
from ztviewer import desktop
from ztviewer.gui import single_instance
from ztviewer.gui.app import bring_forward
from ztviewer.gui.single_instance import (
    FileOpenEventFilter,
    InstanceServer,
    forward_to_running_instance,
    server_name,
)


@pytest.fixture
def two_files(tmp_path):
    paths = []
    for name in ("first.safetensors", "second.safetensors"):
        path = tmp_path / name
        safetensors.numpy.save_file({"w": np.arange(4, dtype=np.float32)}, str(path))
        paths.append(path)
    return paths


@pytest.fixture
def instance_name(monkeypatch):
    name = f"ztviewer-test-{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("ZTVIEWER_INSTANCE_NAME", name)
    return name


def _env(**extra) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("ZTVIEWER_NEW_INSTANCE", None)
    return {**env, **extra}


def test_second_launch_opens_its_file_in_the_first_process(qtbot, window, two_files, instance_name):
    first, second = two_files
    server = InstanceServer(instance_name, parent=window)
    assert server.listen()
    server.files_requested.connect(lambda paths: bring_forward(window, paths))
    open_in_window(qtbot, window, first)
    launcher = subprocess.Popen([sys.executable, "-m", "ztviewer", str(second)], env=_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        qtbot.waitUntil(lambda: launcher.poll() is not None, timeout=60_000)  # a cold PySide6 start under load
    finally:
        if launcher.poll() is None:  # it opened a window of its own instead of handing the file over
            launcher.kill()
            launcher.wait()
    assert launcher.returncode == 0, launcher.stderr.read().decode()
    qtbot.waitUntil(lambda: window.view_for(str(second)) is not None, timeout=10_000)
    assert window.tabs.count() == 2
    server.close()


def test_without_a_running_instance_nothing_is_forwarded(instance_name, two_files):
    assert forward_to_running_instance([str(two_files[0])]) is False


def test_garbage_on_the_socket_is_ignored(qtbot, window, instance_name):
    from PySide6.QtNetwork import QLocalSocket

    server = InstanceServer(instance_name, parent=window)
    assert server.listen()
    received = []
    server.files_requested.connect(received.append)
    socket = QLocalSocket()
    socket.connectToServer(instance_name)
    assert socket.waitForConnected(1000)
    socket.write(b"this is not json\n")
    socket.waitForBytesWritten(1000)
    qtbot.wait(100)
    assert received == []
    server.close()


def test_file_open_event_opens_the_file(qtbot, window, two_files):
    events = FileOpenEventFilter(window)
    QApplication.instance().installEventFilter(events)
    events.files_requested.connect(lambda paths: bring_forward(window, paths))
    try:
        QApplication.sendEvent(QApplication.instance(), QFileOpenEvent(str(two_files[1])))
        qtbot.waitUntil(lambda: window.view_for(str(two_files[1])) is not None, timeout=10_000)
    finally:
        QApplication.instance().removeEventFilter(events)


def test_desktop_entry_exec_line_opens_the_file(tmp_path, two_files):
    home = tmp_path / "xdg"
    desktop.install(home)
    entry = (home / "applications" / "ztviewer.desktop").read_text()
    exec_line = next(line.split("=", 1)[1] for line in entry.splitlines() if line.startswith("Exec="))
    argv = [str(two_files[0]) if part == "%F" else part for part in shlex.split(exec_line)]
    proc = subprocess.run(argv, env=_env(ZTVIEWER_SMOKE_TEST="1", ZTVIEWER_NEW_INSTANCE="1"),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"title='{Path(two_files[0]).name} — ztviewer'" in proc.stdout


def _users_environment() -> dict:
    """The environment of a launch by the user: no test override of the socket name."""
    env = dict(os.environ)
    env.pop("ZTVIEWER_INSTANCE_NAME", None)
    return env


def test_the_socket_is_keyed_by_user_and_display():
    base = {"USER": "ada", "DISPLAY": ":0"}
    assert server_name(base) == server_name({**base, "DISPLAY": ":0.0"})  # the screen number does not matter
    assert server_name(base) != server_name({**base, "DISPLAY": ":1"})
    assert server_name(base) != server_name({**base, "WAYLAND_DISPLAY": "wayland-0"})
    assert server_name(base) != server_name({**base, "DISPLAY": "remote:0"})
    headless = {"USER": "ada"}
    assert server_name({**headless, "XDG_SESSION_ID": "3"}) != server_name({**headless, "XDG_SESSION_ID": "4"})
    assert server_name({**headless, "SECURITYSESSIONID": "a1"}) != server_name({**headless, "SECURITYSESSIONID": "b2"})
    assert server_name({**base, "ZTVIEWER_INSTANCE_NAME": "mine"}) == "mine"
    assert server_name(base).startswith("ztviewer-") and "ada" not in server_name(base)


def test_the_windows_session_counts_where_there_is_one(monkeypatch):
    class Kernel32:
        @staticmethod
        def ProcessIdToSessionId(pid, out):
            out._obj.value = 2
            return 1

    class WinDLL:
        kernel32 = Kernel32()

    headless = {"USER": "ada"}
    plain = server_name(headless)
    monkeypatch.setattr(ctypes, "windll", WinDLL(), raising=False)
    assert single_instance.session_key(headless) == "windows-session=2"
    assert server_name(headless) != plain


def test_tests_never_reach_a_window_the_user_has_open(qtbot, window, two_files, instance_name):
    """A window the user opened (default socket name) gets nothing from a launch a test makes: the test's
    launch opens its own window."""
    users_name = server_name(_users_environment())
    assert server_name() != users_name  # tests/conftest.py gives each run its own name (here: this test's own)
    users_window = InstanceServer(users_name, parent=window)
    # when the user does have a window open the socket is taken; the launch must still open its own window
    listening = users_window._server.listen(users_name)
    received = []
    users_window.files_requested.connect(received.append)
    try:
        launcher = subprocess.Popen([sys.executable, "-m", "ztviewer", str(two_files[0])],
                                    env=_env(ZTVIEWER_SMOKE_TEST="1"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        qtbot.waitUntil(lambda: launcher.poll() is not None, timeout=60_000)
        out = launcher.stdout.read().decode()
        assert launcher.returncode == 0, launcher.stderr.read().decode()
        assert f"title='{Path(two_files[0]).name} — ztviewer'" in out
        qtbot.wait(50)
        assert received == [] or not listening
    finally:
        users_window.close()
