"""Issue 14: the first minutes of a new user: --help, a pipe closed early, a system without a display or Qt's
libraries, a demo without its files, a desktop install that cannot complete, install.sh outside a venv."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ztviewer import desktop, gui_requirements, launch
from ztviewer.file_types import MIME_TYPES

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "ztviewer" / "resources" / "samples" / "tiny-llama.zt"


def _run(argv, env=None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, env=env, **kwargs)


def test_help_describes_the_window_and_its_options():
    out = _run([sys.executable, "-m", "ztviewer", "--help"]).stdout
    for word in ("window", "FILE…", "--demo", "--new-instance", "--install-desktop", "--uninstall-desktop", "info"):
        assert word in out, word


def test_info_into_a_pipe_closed_early_ends_quietly(tmp_path):
    """``ztviewer info big.zt | head -1``: no "Broken pipe" message, the status a shell gives such a tool."""
    import numpy as np

    from ztviewer.codec.arrays import save_arrays

    big = tmp_path / "big.zt"  # its listing is far larger than a pipe's buffer
    save_arrays(big, {f"layer.{i}.weight": np.zeros(2, np.float32) for i in range(4000)})
    info = subprocess.Popen([sys.executable, "-m", "ztviewer", "info", str(big)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    info.stdout.readline()
    info.stdout.close()  # the reader goes away after one line, as head does
    _, err = info.communicate(timeout=120)
    assert err.decode() == ""
    assert info.returncode == 141


def _no_display_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return {**env, "ZTVIEWER_NEW_INSTANCE": "1"}


@pytest.mark.skipif(not hasattr(os, "uname") or sys.platform == "darwin", reason="X11/Wayland systems only")
def test_without_a_display_the_window_says_so_instead_of_aborting():
    done = _run([sys.executable, "-m", "ztviewer", str(SAMPLE)], env=_no_display_env())
    assert done.returncode == 1
    assert "needs a display" in done.stderr and "DISPLAY" in done.stderr and "Traceback" not in done.stderr


def test_a_missing_qt_library_is_named_with_its_packages(tmp_path):
    """A PySide6 whose QtGui cannot load libEGL (as on a minimal Linux) gives the install commands."""
    fake = tmp_path / "PySide6"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "QtGui.py").write_text(
        "raise ImportError('libEGL.so.1: cannot open shared object file: No such file or directory')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "QT_QPA_PLATFORM": "offscreen", "ZTVIEWER_NEW_INSTANCE": "1"}
    done = _run([sys.executable, "-m", "ztviewer", str(SAMPLE)], env=env)
    assert done.returncode == 1, done.stderr
    assert "libEGL" in done.stderr and "Traceback" not in done.stderr
    assert "apt install libegl1" in done.stderr and "dnf install libglvnd-egl" in done.stderr
    assert "pacman -S libglvnd" in done.stderr


def test_display_and_plugin_checks():
    linux_like = hasattr(os, "uname") and sys.platform not in ("darwin", "win32")
    fine = lambda: None  # noqa: E731
    reachable = lambda environ, platform: None  # noqa: E731
    assert gui_requirements.problem({"QT_QPA_PLATFORM": "offscreen"}, fine) is None
    if linux_like:
        assert "needs a display" in gui_requirements.problem({}, fine)
        assert "Wayland" in gui_requirements.problem({"QT_QPA_PLATFORM": "wayland", "DISPLAY": ":0"}, fine)
        found = {"xcb": "libxcb.so.1"}
        message = gui_requirements.problem({"DISPLAY": ":0"}, fine, found.get, reachable)
        assert "libxcb-cursor" in message and "libxcb-cursor0" in message and "xcb-util-cursor" in message
        assert gui_requirements.problem({"DISPLAY": ":0"}, fine, lambda name: "lib.so", reachable) is None
        # cannot look libraries up: no guess
        assert gui_requirements.problem({"DISPLAY": ":0"}, fine, lambda name: None, reachable) is None
        assert gui_requirements.problem({"WAYLAND_DISPLAY": "wayland-0"}, fine, lambda name: None, reachable) is None
    assert gui_requirements.library_in("libxkbcommon.so.0: cannot open shared object file") == "xkbcommon"


@pytest.mark.skipif(not hasattr(os, "uname") or sys.platform == "darwin", reason="X11/Wayland systems only")
def test_a_display_that_names_no_running_server_is_said_before_qt_aborts(tmp_path):
    """Issue 29 item 9: DISPLAY / WAYLAND_DISPLAY pointing at nothing made Qt abort (status 134) with a hint about
    xcb-cursor; the launcher now finds that nothing answers there and says so."""
    env = {**_no_display_env(), "DISPLAY": ":97", "WAYLAND_DISPLAY": "no-such-wayland",
           "XDG_RUNTIME_DIR": str(tmp_path)}
    done = _run([sys.executable, "-m", "ztviewer", str(SAMPLE)], env=env)
    assert done.returncode == 1, done.stderr
    assert "DISPLAY=:97 names an X server that is not running here" in done.stderr
    assert "WAYLAND_DISPLAY=no-such-wayland names a Wayland compositor" in done.stderr
    assert "Traceback" not in done.stderr and "xcb-cursor" not in done.stderr
    remote = gui_requirements.x11_unreachable("127.0.0.1:59")  # port 6059: nothing listens there
    assert remote == "DISPLAY=127.0.0.1:59 names an X server that does not answer (nothing listens at 127.0.0.1:6059)"


def test_a_display_that_answers_passes(tmp_path):
    import socket

    if not hasattr(socket, "AF_UNIX") or sys.platform == "win32":
        pytest.skip("no Unix sockets")
    path = tmp_path / "wl-0"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(1)
        environ = {"WAYLAND_DISPLAY": "wl-0", "XDG_RUNTIME_DIR": str(tmp_path)}
        assert gui_requirements.wayland_unreachable(environ) is None
        assert gui_requirements.display_unreachable({**environ, "DISPLAY": ":97"}, "") is None  # one answers
    assert "not running" in gui_requirements.display_unreachable({"DISPLAY": ":97"}, "")


def test_library_lookup_runs_ldconfig_once_and_agrees_with_ctypes(monkeypatch):
    """The X11 check asks for 16 libraries: one ``ldconfig -p`` answers them all, as ``find_library`` (which runs
    it for every name) would."""
    import ctypes.util
    import subprocess

    if not os.path.exists("/sbin/ldconfig"):
        pytest.skip("no glibc ldconfig here: ctypes.util.find_library is used as it is")
    names = ["xcb", *gui_requirements.XCB_PLUGIN_LIBRARIES, *gui_requirements.PACKAGES, "c", "glib-2.0",
             "no-such-library-here"]
    expected = [ctypes.util.find_library(name) for name in names]
    runs = []
    real_run = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: runs.append(a[0]) or real_run(*a, **k))
    find = gui_requirements.cached_library_finder()
    assert [find(name) for name in names] == expected
    assert runs == [["/sbin/ldconfig", "-p"]] and expected[-1] is None


def test_demo_without_its_files_says_so(monkeypatch, tmp_path, capsys):
    from ztviewer import paths

    monkeypatch.setattr(paths, "SAMPLES", tmp_path)
    monkeypatch.setattr(launch, "SAMPLES_DIR", tmp_path)
    monkeypatch.setattr(gui_requirements, "problem", lambda: pytest.fail("the window must not start"))
    assert launch.launch_gui(["--demo"]) == 1
    assert "demo files are missing" in capsys.readouterr().err


# -- desktop integration ------------------------------------------------------------------------------------
@pytest.fixture
def xdg(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(desktop, "_run", lambda *cmd: None)  # no xdg tools: files only
    return tmp_path


def test_install_without_resources_writes_nothing(xdg, monkeypatch, capsys):
    monkeypatch.setattr(desktop, "ICONS", xdg / "nowhere")
    assert desktop.main(["install"]) == 1
    assert "lacks its desktop files" in capsys.readouterr().err
    assert not (xdg / "data").exists()


def test_a_failed_install_leaves_no_half_made_folders(xdg, monkeypatch):
    (xdg / "data").mkdir()
    copies = []
    real_copy = shutil.copyfile

    def failing_copy(src, dst):
        copies.append(dst)
        if len(copies) == 4:
            raise OSError(28, "No space left on device")
        real_copy(src, dst)

    monkeypatch.setattr(desktop.shutil, "copyfile", failing_copy)
    with pytest.raises(OSError, match="No space"):
        desktop.install()
    assert list((xdg / "data").iterdir()) == []


def test_install_refuses_an_interpreter_that_has_ztviewer_only_through_pythonpath(xdg, monkeypatch, capsys):
    monkeypatch.setattr(desktop, "_has_ztviewer", lambda python: False)
    assert desktop.main(["install"]) == 1
    assert "cannot start ztviewer" in capsys.readouterr().err
    assert not (xdg / "data").exists()


def test_uninstall_removes_default_application_entries(xdg):
    desktop.install()
    mimeapps = xdg / "config" / "mimeapps.list"
    mimeapps.parent.mkdir(parents=True, exist_ok=True)
    mimeapps.write_text("[Default Applications]\n" + "".join(f"{m}=ztviewer.desktop\n" for m in MIME_TYPES)
                        + "text/plain=gedit.desktop\napplication/x-safetensors=other.desktop;ztviewer.desktop;\n"
                        "[Added Associations]\napplication/x-ztensor=ztviewer.desktop;\n")
    changes = desktop.uninstall()
    assert changes.edited == [mimeapps] and mimeapps not in changes.files
    assert mimeapps.read_text() == ("[Default Applications]\ntext/plain=gedit.desktop\n"
                                    "application/x-safetensors=other.desktop;\n[Added Associations]\n")
    assert not (xdg / "data" / "applications" / "ztviewer.desktop").exists()


def test_install_without_xdg_mime_does_not_claim_to_be_the_default(xdg, capsys):
    assert desktop.main(["install"]) == 0
    out = capsys.readouterr().out
    assert "ztviewer was not made the default application: xdg-mime (xdg-utils) is not installed" in out
    assert "is now the default" not in out
    assert (xdg / "data" / "applications" / "ztviewer.desktop").is_file()


def test_uninstall_leaves_no_empty_folder_and_no_mimeapps_list_of_headers(xdg, capsys):
    desktop.install()
    mimeapps = xdg / "config" / "mimeapps.list"
    mimeapps.parent.mkdir(parents=True, exist_ok=True)
    mimeapps.write_text("[Default Applications]\n" + "".join(f"{m}=ztviewer.desktop\n" for m in MIME_TYPES)
                        + "\n[Added Associations]\napplication/x-ztensor=ztviewer.desktop;\n")
    assert desktop.main(["uninstall"]) == 0
    out = capsys.readouterr().out
    assert not mimeapps.exists() and f"removed {mimeapps}\n" in out
    assert list((xdg / "data").rglob("*")) == []
    assert "folders left empty" in out


def test_install_script_outside_a_venv_refuses_an_interpreter_without_ztviewer(tmp_path):
    """A python3 without ztviewer (here: -I ignores site-packages… via a wrapper) and no ztviewer on PATH."""
    wrapper = tmp_path / "bin" / "python-without-ztviewer"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")  # -S: no site-packages, so no ztviewer
    wrapper.chmod(0o755)
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "PYTHON": str(wrapper), "HOME": str(tmp_path),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "packaging", checkout / "packaging")  # no .venv beside it
    done = _run(["sh", str(checkout / "packaging" / "linux" / "install.sh")], env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no Python with ztviewer" in done.stderr and "pipx install ." in done.stderr
    assert not (tmp_path / "data").exists()


def test_install_script_uses_an_interpreter_that_has_ztviewer(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHON": sys.executable, "HOME": str(tmp_path),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = _run(["sh", str(ROOT / "packaging" / "linux" / "install.sh")], env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    entry = (tmp_path / "data" / "applications" / "ztviewer.desktop").read_text()
    exec_line = next(line for line in entry.splitlines() if line.startswith("Exec="))
    assert exec_line.split("=", 1)[1].split()[0] in (str(Path(sys.executable).with_name("ztviewer")), sys.executable)


def test_gui_script_reads_its_command_line(monkeypatch, capsys):
    """ztviewer-gui (no console on Windows) takes the window's options and files like ztviewer does."""
    import tomllib
    from pathlib import Path

    from ztviewer import launch

    scripts = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["gui-scripts"]
    assert scripts["ztviewer-gui"] == "ztviewer.launch:gui_main"
    monkeypatch.setattr(sys, "argv", ["ztviewer-gui", "--help"])
    with pytest.raises(SystemExit) as stop:
        launch.gui_main()
    assert stop.value.code == 0
    assert "--demo" in capsys.readouterr().out
    seen: list[list[str]] = []
    monkeypatch.setattr(launch, "launch_gui", lambda argv: seen.append(list(argv)) or 0)
    monkeypatch.setattr(sys, "argv", ["ztviewer-gui", "a.zt", "--new-instance"])
    assert launch.gui_main() == 0
    assert seen == [["a.zt", "--new-instance"]]
