"""The unsaved-changes prompt on close / reload / quit: Save, Discard and Cancel (issue 6)."""
from __future__ import annotations

from tests.gui.test_edit_attributes import discard_on_teardown, make_file, opened  # noqa: F401
from ztviewer.codec import open_file


def edit(window):
    window.editing.editor.model.add("pending", "yes")
    assert window.isWindowModified()


def answering(window, answer):
    asked = []
    window.editing.ask_unsaved = lambda view: asked.append(view) or answer
    return asked


def test_close_tab_cancel_discard(qtbot, window, tmp_path):
    view, _session = opened(qtbot, window, make_file(tmp_path))
    edit(window)
    asked = answering(window, "cancel")
    window.close_current()
    assert asked == [view] and window.tabs.indexOf(view) == 0
    asked = answering(window, "discard")
    window.close_current()
    assert asked == [view] and window.tabs.count() == 0


def test_unmodified_tab_closes_without_asking(qtbot, window, tmp_path):
    opened(qtbot, window, make_file(tmp_path))
    asked = answering(window, "cancel")
    window.close_current()
    assert not asked and window.tabs.count() == 0


def test_close_tab_save_then_close(qtbot, window, tmp_path):
    path = make_file(tmp_path)
    _view, _session = opened(qtbot, window, path)
    edit(window)
    answering(window, "save")
    window.close_current()
    qtbot.waitUntil(lambda: window.tabs.count() == 0, timeout=15_000)
    tf = open_file(path)
    assert tf.attributes["pending"] == "yes"
    tf.close()


def test_reload_asks(qtbot, window, tmp_path):
    _view, _session = opened(qtbot, window, make_file(tmp_path))
    edit(window)
    asked = answering(window, "cancel")
    assert window.reload_current() is None and asked
    answering(window, "discard")
    assert window.reload_current() is not None


def test_quit_asks(qtbot, window, tmp_path):
    _view, _session = opened(qtbot, window, make_file(tmp_path))
    edit(window)
    asked = answering(window, "cancel")
    window.actions_.quit.trigger()
    assert asked and window.isVisible() and window.tabs.count() == 1
    answering(window, "discard")
    window.actions_.quit.trigger()
    assert not window.isVisible()
