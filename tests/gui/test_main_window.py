"""The window shell: open (dialog filters, command line, drag-and-drop, recent), tabs, reload, settings."""
from __future__ import annotations

import os

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QMessageBox

from tests.gui.synthetic_files import sample_safetensors
from tests.gui.window_helpers import open_in_window
from ztviewer.file_types import open_filters
from ztviewer.gui.dialogs.goto_offset import GoToOffsetDialog, parse_offset
from ztviewer.gui.file_view import FileView
from ztviewer.gui.main_window import MainWindow


@pytest.fixture
def weights(tmp_path):
    return sample_safetensors(tmp_path)


def test_empty_window_shows_the_welcome_page(window):
    assert window.stack.currentWidget() is window.welcome
    assert window.windowTitle() == "ztviewer"
    assert not window.actions_.reload.isEnabled() and not window.actions_.verify_all.isEnabled()
    assert window.actions_.open.isEnabled()


def test_standard_shortcuts(window):
    actions = window.actions_
    assert actions.open.shortcut() == QKeySequence(QKeySequence.StandardKey.Open)
    assert actions.close.shortcut() == QKeySequence(QKeySequence.StandardKey.Close)
    assert actions.find.shortcut() == QKeySequence(QKeySequence.StandardKey.Find)
    assert actions.reload.shortcut() == QKeySequence(QKeySequence.StandardKey.Refresh)
    assert QKeySequence("Ctrl+Q") in actions.quit.shortcuts()
    assert actions.goto.shortcut() == QKeySequence("Ctrl+G")
    filters = open_filters()
    assert any("*.zt" in f for f in filters) and any("*.safetensors" in f for f in filters)


def test_open_a_file_into_a_tab(qtbot, window, weights):
    view = open_in_window(qtbot, window, weights)
    assert isinstance(view, FileView) and window.current_view() is view
    assert window.stack.currentWidget() is window.tabs
    assert window.windowTitle().startswith("weights.safetensors")
    assert window.format_label.text().startswith("safetensors")
    assert window.tensors_label.text() == "4 tensors"
    assert window.size_label.toolTip().startswith(f"{os.path.getsize(weights):,} bytes")
    assert window.actions_.reload.isEnabled()
    assert window.properties_panel.value_of("File", "format") == "safetensors"


def test_opening_an_open_file_again_switches_to_its_tab(qtbot, window, weights, tmp_path):
    other = sample_safetensors(tmp_path, "other.safetensors")
    first = open_in_window(qtbot, window, weights)
    open_in_window(qtbot, window, other)
    assert window.tabs.count() == 2 and window.current_view() is not first
    assert window.opener.open_path(weights) is None
    assert window.tabs.count() == 2 and window.current_view() is first


def drop(window, paths, modifiers=Qt.KeyboardModifier.NoModifier):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = QDragEnterEvent(QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    event = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, modifiers)
    QApplication.sendEvent(window, event)
    return event


def test_drag_and_drop_opens_several_files(qtbot, window, weights, tmp_path):
    """Two files dropped together are compared (issue 18); with Shift held both open as files."""
    other = sample_safetensors(tmp_path, "other.safetensors")
    drop(window, [weights, other], Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: len(window.file_views()) == 2, timeout=10_000)
    assert {os.path.basename(v.tensor_file.path) for v in window.file_views()} == {"weights.safetensors",
                                                                                  "other.safetensors"}


def test_dragging_something_else_is_refused(window):
    mime = QMimeData()
    mime.setText("not a file")
    enter = QDragEnterEvent(QPoint(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    enter.ignore()
    QApplication.sendEvent(window, enter)
    assert not enter.isAccepted()


def test_recent_files_remember_and_reopen(qtbot, window, weights, settings):
    open_in_window(qtbot, window, weights)
    assert window.recent.paths()[0] == os.path.abspath(weights)
    window.close_current()
    assert window.stack.currentWidget() is window.welcome
    menu = window.actions_.recent_menu
    menu.aboutToShow.emit()
    action = next(a for a in menu.actions() if a.text().endswith("weights.safetensors"))
    action.trigger()
    qtbot.waitUntil(lambda: window.view_for(weights) is not None, timeout=10_000)
    fresh = MainWindow(settings=settings)
    qtbot.addWidget(fresh)
    assert fresh.recent.paths()[0] == os.path.abspath(weights)


def test_reload_replaces_the_view_and_keeps_the_tab(qtbot, window, weights):
    old = open_in_window(qtbot, window, weights)
    old.filter_edit.setText("embed")
    window.reload_current()
    qtbot.waitUntil(lambda: window.current_view() is not old and window.current_view() is not None, timeout=10_000)
    new = window.current_view()
    assert new.tensor_file.path == old.tensor_file.path and window.tabs.count() == 1
    assert new.filter_edit.text() == "embed"


def test_ctrl_w_closes_and_ctrl_f_focuses_the_filter(qtbot, window, weights):
    view = open_in_window(qtbot, window, weights)
    window.activateWindow()
    window.actions_.find.trigger()
    assert view.filter_edit.hasFocus() or QApplication.focusWidget() is view.filter_edit
    window.actions_.close.trigger()
    assert window.tabs.count() == 0


def test_a_missing_file_is_a_message_not_a_traceback(qtbot, window, tmp_path):
    window.opener.open_path(str(tmp_path / "gone.zt"))
    qtbot.waitUntil(lambda: bool(window.last_error), timeout=10_000)
    assert "gone.zt" in window.last_error and "Traceback" not in window.last_error
    assert window.tabs.count() == 0
    box = window.findChild(QMessageBox, "errorMessage")
    assert box is not None and box.isVisible() and "gone.zt" in box.text()
    box.close()


def test_geometry_and_dock_layout_are_remembered(qtbot, settings, weights):
    first = MainWindow(settings=settings)
    qtbot.addWidget(first)
    first.show()
    first.resize(640, 480)
    first.inspector_dock.hide()
    first.actions_.group.setChecked(True)
    first.close()
    assert settings.value("window/geometry") is not None and settings.value("window/state") is not None
    second = MainWindow(settings=settings)
    qtbot.addWidget(second)
    second.show()
    assert (second.width(), second.height()) == (640, 480)
    assert not second.inspector_dock.isVisible() and second.problems_dock.isVisible()
    assert second.actions_.group.isChecked()


def test_group_action_applies_to_the_current_file(qtbot, window, weights):
    view = open_in_window(qtbot, window, weights)
    window.actions_.group.trigger()
    assert view.tree_model.grouped
    top = {view.proxy.data(view.proxy.index(r, 0, view.proxy.index(0, 0)))
           for r in range(view.proxy.rowCount(view.proxy.index(0, 0)))}
    assert top == {"model", "lm_head"}


@pytest.mark.parametrize("text, expected", [("4096", 4096), ("0x1000", 4096), ("1000h", 4096), ("+16", 116),
                                            ("-100", 0), ("1_000", 1000)])
def test_parse_offset(text, expected):
    assert parse_offset(text, size=10_000, cursor=100) == expected


@pytest.mark.parametrize("text", ["", "zz", "20000", "-101"])
def test_parse_offset_rejects_with_a_reason(text):
    with pytest.raises(ValueError):
        parse_offset(text, size=10_000, cursor=100)


def test_go_to_offset_dialog_moves_the_hex_cursor(qtbot, window, weights):
    view = open_in_window(qtbot, window, weights)
    window.show_goto_dialog()
    dialog = window.findChild(GoToOffsetDialog)
    assert dialog is not None and dialog.isVisible()
    dialog.edit.setText("nonsense")
    dialog.accept()
    assert dialog.isVisible() and "not a number" in dialog.error.text()
    dialog.edit.setText("0x20")
    dialog.accept()
    assert view.hex_view.cursor_offset() == 0x20
    assert window.inspector.position.text().startswith("Bytes at 0x20")


def test_python_dash_m_entry_point_runs_the_cli():
    import runpy
    import sys

    argv = sys.argv
    sys.argv = ["ztviewer", "--help"]
    try:
        with pytest.raises(SystemExit) as exit_info:
            runpy.run_module("ztviewer", run_name="__main__")
    finally:
        sys.argv = argv
    assert exit_info.value.code == 0


def test_closing_a_tab_while_its_file_is_still_opening(qtbot, window, weights):
    task = window.opener.open_path(weights)
    window.close_current()                # before the worker's result is delivered
    assert task.wait(10)
    qtbot.wait(50)
    assert window.tabs.count() == 0 and window.view_for(weights) is None
    assert window.stack.currentWidget() is window.welcome


def test_closing_the_window_stops_a_running_verification(qtbot, settings, tmp_path):
    from tests.gui.synthetic_files import Spec, build_file
    from ztviewer.workers.tasks import OpenedFile

    tf = build_file(tmp_path / "v.zt", [Spec(f"t{i}") for i in range(50)])
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.show()
    win.opener.show_file(OpenedFile(tf))
    task = win.verify()
    assert task is not None
    win.close()
    assert task.is_done and win.tabs.count() == 0


def test_app_main_opens_the_command_line_files(qtbot, qapp, monkeypatch, weights, tmp_path):
    from ztviewer.gui import app as app_module

    other = sample_safetensors(tmp_path, "other.safetensors")
    seen = {}

    def run_event_loop():
        window = next(w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible())
        qtbot.waitUntil(lambda: len(window.file_views()) == 2, timeout=10_000)
        seen["files"] = sorted(os.path.basename(v.tensor_file.path) for v in window.file_views())
        window.close()
        return 0

    monkeypatch.setattr(qapp, "exec", run_event_loop)
    assert app_module.main([weights, other]) == 0
    assert seen["files"] == ["other.safetensors", "weights.safetensors"]


def test_the_tree_lists_tensors_by_name_in_natural_order_and_manifest_order_on_request(qtbot, window, tmp_path):
    """safetensors files list in file order (layers.0, 1, 10, 11 … 2) and v2 in CBOR key order: the tree starts in
    natural name order (sorted by the open worker), and View ▸ Manifest Order shows the file's own."""
    import numpy as np
    import safetensors.numpy

    path = tmp_path / "layers.safetensors"
    names = [f"layers.{i}.w" for i in (0, 1, 10, 11, 2, 3)]
    arrays = {name: np.full(i + 1, i, np.float32) for i, name in enumerate(names)}
    safetensors.numpy.save_file(arrays, str(path))
    view = open_in_window(qtbot, window, path)
    assert view.session.tree.tensor_file.tensor_names() == sorted(names)      # the file's own (lexical) order

    def shown() -> list[str]:
        model, root = view.tree.model(), view.tree.model().index(0, 0)
        return [model.index(r, 0, root).data() for r in range(model.rowCount(root))]

    assert shown() == [f"layers.{i}.w" for i in (0, 1, 2, 3, 10, 11)]
    assert view.session.tree._name_order is not None        # given by the worker, not sorted on the GUI thread
    window.restore_manifest_order()
    assert shown() == sorted(names)
