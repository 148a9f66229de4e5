"""Help ▸ Keyboard Shortcuts / Quick Guide, Open Recent twins, re-opening a file still being parsed."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from PySide6.QtGui import QAction, QKeySequence

from tests.gui.synthetic_files import sample_safetensors
from tests.gui.window_helpers import open_in_window
from ztviewer.gui.dialogs.help import ShortcutsDialog, shortcut_rows
from ztviewer.gui.recent_files import distinguishing_labels


def test_twins_get_the_shortest_parent_path_that_tells_them_apart():
    paths = [os.path.join(os.sep, "a", "run1", "model.zt"), os.path.join(os.sep, "b", "run1", "model.zt"),
             os.path.join(os.sep, "x", "run2", "model.zt"), os.path.join(os.sep, "y", "other.zt")]
    assert distinguishing_labels(paths) == ["model.zt — " + os.path.join("a", "run1"),
                                            "model.zt — " + os.path.join("b", "run1"),
                                            "model.zt — run2", "other.zt"]
    assert distinguishing_labels([os.path.join(os.sep, "q", "m.zt")]) == ["m.zt"]


def test_recent_menu_tells_twins_apart(window, tmp_path):
    first, second = tmp_path / "one" / "w.safetensors", tmp_path / "two" / "w.safetensors"
    for path in (first, second):
        path.parent.mkdir()
        path.write_bytes(b"")
    window.recent.add(str(first))
    window.recent.add(str(second))
    menu = window.actions_.recent_menu
    menu.aboutToShow.emit()
    entries = [a for a in menu.actions() if a.toolTip() in (str(first), str(second))]
    assert [a.text() for a in entries] == ["&1 w.safetensors — two", "&2 w.safetensors — one"]
    assert [a.toolTip() for a in entries] == [str(second), str(first)]


def test_shortcuts_come_from_the_actions(qtbot, qtmodeltester, window, tmp_path):
    rows = shortcut_rows(window)
    by_command = {(r.where, r.command): r.keys for r in rows}
    native = QKeySequence.SequenceFormat.NativeText
    assert by_command[("File", "Open")].startswith(window.actions_.open.shortcut().toString(native))
    assert by_command[("Help", "Keyboard Shortcuts")] == "Ctrl+F1"
    assert by_command[("Edit", "Undo")].startswith(window.editing.undo_action.shortcut().toString(native))
    # a new action is listed without touching any list: the table reads the menus
    extra = QAction("Frobnicate", window)
    extra.setShortcut("Ctrl+Alt+F9")
    window.menuBar().actions()[0].menu().addAction(extra)
    assert any(r.command == "Frobnicate" and r.keys == "Ctrl+Alt+F9" for r in shortcut_rows(window))
    # the open views' own shortcuts (hex view, heatmap's Values button) appear once a file is open
    weights = sample_safetensors(tmp_path)
    open_in_window(qtbot, window, weights)
    rows = shortcut_rows(window)
    assert any(r.keys == "Ctrl+Shift+R" and r.where != "Window" for r in rows)
    assert len({(r.command, r.keys) for r in rows}) == len(rows)
    dialog = ShortcutsDialog(window)   # the window's own (show_shortcuts) deletes itself when closed
    qtmodeltester.check(dialog.proxy, force_py=True)
    assert dialog.model.rowCount() == len(rows)
    dialog.filter_edit.setText("keyboard shortcuts")
    assert dialog.proxy.rowCount() == 1
    shown = window.show_shortcuts()
    assert shown.isVisible() and shown.model.rowCount() == len(rows)
    shown.close()


def test_quick_guide_names_the_current_keys(qtbot, window):
    dialog = window.show_quick_guide()
    qtbot.addWidget(dialog)
    text = dialog.browser.toPlainText()
    for words in ("Open", "Tree", "Bytes", "Inspect", "Problems", "Check File", "Verify", "Edit", "Save", "Compare"):
        assert words in text
    assert window.actions_.check_file.shortcut().toString(QKeySequence.SequenceFormat.NativeText) in text
    assert "{" not in text


@pytest.fixture
def slow_parse(monkeypatch):
    from ztviewer.workers import tasks

    release = threading.Event()
    read = tasks.read_tensor_file

    def held_read(path):
        release.wait(10)
        return read(path)

    monkeypatch.setattr(tasks, "read_tensor_file", held_read)
    yield release
    release.set()


def test_reopening_a_file_still_parsing_keeps_one_tab(qtbot, window, tmp_path, slow_parse):
    weights = sample_safetensors(tmp_path)
    other = tmp_path / "other.safetensors"
    other.write_bytes(Path(weights).read_bytes())
    assert window.opener.open_path(str(weights)) is not None
    window.opener.open_path(str(other))
    assert window.opener.open_path(str(weights)) is None           # still parsing: its tab comes to the front
    assert window.tabs.count() == 2
    assert window.tabs.currentIndex() == 0
    slow_parse.set()
    qtbot.waitUntil(lambda: window.view_for(str(weights)) is not None and window.view_for(str(other)) is not None,
                    timeout=10_000)
    assert window.tabs.count() == 2


def test_a_recent_file_is_written_after_the_events_waiting(qtbot, window, tmp_path):
    """Opening a file shows it before the settings file is written (and synced to disk); the menu and a new
    window see the path once the event loop has turned."""
    from ztviewer.gui.recent_files import KEY

    path = tmp_path / "w.safetensors"
    path.write_bytes(b"")
    window.recent.add(str(path))
    assert window.recent.paths()[0] == str(path)
    assert str(path) not in (window.settings.value(KEY) or [])
    qtbot.waitUntil(lambda: str(path) in (window.settings.value(KEY) or []), timeout=2000)
    assert window.recent.paths()[0] == str(path)


def test_help_menu_opens_the_demo_files(qtbot, window):
    from ztviewer.paths import demo_files

    demos = demo_files()
    assert len(demos) >= 3
    assert window.actions_.demo in window.actions_.menus.help.actions()
    window.actions_.demo.trigger()
    for path in demos:
        qtbot.waitUntil(lambda p=path: window.view_for(p) is not None, timeout=20000)


@pytest.mark.no_qt_log
def test_platform_notices_are_dropped_and_the_rest_printed(capfd):
    from PySide6.QtCore import qInstallMessageHandler, qWarning

    from ztviewer.gui.app import quiet_platform_notices

    previous = quiet_platform_notices()
    try:
        qWarning("This plugin does not support propagateSizeHints()")
        qWarning("ztviewer-test: a warning that must be shown")
    finally:
        qInstallMessageHandler(previous)  # type: ignore[arg-type]
    err = capfd.readouterr().err
    assert "propagateSizeHints" not in err
    assert "ztviewer-test: a warning that must be shown" in err
