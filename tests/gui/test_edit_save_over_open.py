"""Save As onto a file open in another tab: one tab is left, showing the saved file; that tab's unsaved edits
are asked about before anything is written, and a save running there makes the Save As wait."""
from __future__ import annotations

import os

import pytest

from tests.gui.test_edit_attributes import discard_on_teardown, make_file, opened  # noqa: F401
from ztviewer.codec.edit import RenameTensor
from ztviewer.codec.errors import EditRefused


def save_as(window, view, path) -> None:
    dialog = window.editing.save_as(view)
    dialog.path_edit.setText(str(path))
    assert dialog.can_save(), dialog.message.text()
    dialog.accept()


def two_tabs(qtbot, window, tmp_path):
    """``src.zt`` with tensor ``a`` renamed to ``from_src`` (current tab), and ``target.zt`` open beside it."""
    source, target = make_file(tmp_path, name="src.zt"), make_file(tmp_path, name="target.zt")
    source_view, _ = opened(qtbot, window, source)
    target_view, _ = opened(qtbot, window, target)
    window.tabs.setCurrentWidget(source_view)
    source_view.edit_session.push(RenameTensor("a", "from_src"))
    return source_view, target_view, target


def answering(window, answer: bool) -> list:
    asked = []
    window.editing.ask_replace_unsaved = lambda view: asked.append(view) or answer
    return asked


def tabs_showing(window, path) -> list:
    return [v for v in window.file_views() if os.path.abspath(v.tensor_file.path) == str(path)]


def wait_single_tab(qtbot, window, path, *old_views):
    def replaced() -> bool:
        views = tabs_showing(window, path)
        return window.tabs.count() == 1 and len(views) == 1 and all(views[0] is not v for v in old_views)

    qtbot.waitUntil(replaced, timeout=15_000)
    return tabs_showing(window, path)[0]


def test_save_as_onto_an_open_file_leaves_one_up_to_date_tab(qtbot, window, tmp_path):
    source_view, target_view, target = two_tabs(qtbot, window, tmp_path)
    asked = answering(window, False)
    save_as(window, source_view, target)
    new = wait_single_tab(qtbot, window, target, source_view, target_view)
    assert not asked                                          # nothing of the other tab was lost
    assert sorted(t.name for t in new.tensor_file.tensors) == ["b", "from_src"]
    assert window.current_view() is new and not window.isWindowModified()
    assert window.tabs.tabText(0) == "target.zt"


def test_save_as_onto_a_tab_with_unsaved_edits_asks_first(qtbot, window, tmp_path):
    source_view, target_view, target = two_tabs(qtbot, window, tmp_path)
    source_session, target_session = source_view.edit_session, target_view.edit_session
    target_session.push(RenameTensor("b", "from_target"))
    before = target.read_bytes()
    asked = answering(window, False)
    save_as(window, source_view, target)
    assert asked == [target_view] and target.read_bytes() == before
    assert "cancelled" in window.statusBar().currentMessage()
    assert window.tabs.count() == 2 and target_session.modified and source_session.modified
    assert not source_session.saving and window.editing.save_as_action.isEnabled()

    asked = answering(window, True)
    save_as(window, source_view, target)
    assert asked == [target_view] and target_session.saving   # held while its file is being replaced
    with pytest.raises(EditRefused):
        target_session.push(RenameTensor("a", "late"))
    window.editing.ask_unsaved = lambda view: "save"
    window.close_tab(window.tabs.indexOf(target_view))       # saving it now would race the Save As
    assert window.tabs.indexOf(target_view) >= 0 and "being saved" in window.last_error
    new = wait_single_tab(qtbot, window, target, source_view, target_view)
    assert sorted(t.name for t in new.tensor_file.tensors) == ["b", "from_src"]
    assert not window.isWindowModified() and new.edit_session.stack.count() == 0


def test_save_as_onto_a_file_being_saved_in_its_tab_is_refused(qtbot, window, tmp_path):
    source_view, target_view, target = two_tabs(qtbot, window, tmp_path)
    target_view.edit_session.push(RenameTensor("b", "from_target"))
    window.tabs.setCurrentWidget(target_view)
    window.editing.save_action.trigger()
    assert target_view.edit_session.saving
    save_as(window, source_view, target)
    assert "being saved in another tab" in window.last_error
    assert source_view.edit_session.modified and not source_view.edit_session.saving
    qtbot.waitUntil(lambda: window.view_for(str(target)) is not target_view, timeout=15_000)
    reopened = window.view_for(str(target))
    assert window.tabs.count() == 2 and sorted(t.name for t in reopened.tensor_file.tensors) == ["a", "from_target"]
