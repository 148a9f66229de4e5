"""Attributes editor, undo/redo and tree rename/delete (issue 6). Helpers here are shared by test_edit_*."""
from __future__ import annotations

import copy

import numpy as np
import pytest
from PySide6.QtCore import Qt

from tests.gui.window_helpers import open_in_window
from ztviewer.codec.arrays import save_arrays
from ztviewer.gui.editing.attributes_model import AttrColumn
from ztviewer.session.value_text import InvalidValue, parse

ARRAYS = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.arange(4, dtype=np.int64)}


@pytest.fixture(autouse=True)
def discard_on_teardown(request):
    """Closing the test window must not block on the Save / Discard / Cancel box."""
    if "window" in request.fixturenames:
        request.getfixturevalue("window").editing.ask_unsaved = lambda view: "discard"


def make_file(tmp_path, to: str = "zt", name: str = "in.zt", **kw):
    path = tmp_path / name
    attributes = kw.pop("attributes", None if to == "zt-v0.1" else {"license": "MIT", "note": "x"})
    save_arrays(path, ARRAYS, to, attributes=attributes, **kw)
    return path


def opened(qtbot, window, path):
    view = open_in_window(qtbot, window, path)
    return view, view.edit_session


def snapshot(doc):
    return copy.deepcopy(doc.attributes), [(t.name, copy.deepcopy(t.attributes)) for t in doc.tensors]


def select_tensor(view, name):
    tensor = next(t for t in view.tensor_file.tensors if t.name == name)
    assert view.select_item(tensor)


def test_value_text_parses_and_refuses():
    assert parse("integer", "0x10") == 16 and parse("float", "1e-3") == 0.001 and parse("bool", "false") is False
    assert parse("list", '[1, "a", {"k": null}]') == [1, "a", {"k": None}]
    with pytest.raises(InvalidValue, match="JSON"):
        parse("map", "{bad")
    with pytest.raises(InvalidValue, match="list"):
        parse("list", '{"k": 1}')


def test_file_attributes_edit_undo_redo(qtbot, window, tmp_path):
    _view, session = opened(qtbot, window, make_file(tmp_path))
    model = window.editing.editor.model
    assert model.scope is None and model.rowCount() == 2
    original = snapshot(session.doc)
    assert model.setData(model.index(0, AttrColumn.VALUE), "Apache-2.0")
    assert model.setData(model.index(1, AttrColumn.KEY), "comment")
    assert model.add("added", "yes") == 2
    model.remove([0])
    edited = snapshot(session.doc)
    assert edited[0] == {"comment": "x", "added": "yes"}
    assert window.isWindowModified() and "*" in window.tabs.tabText(window.tabs.currentIndex())
    stack = session.stack
    while stack.canUndo():
        stack.undo()
    assert snapshot(session.doc) == original and not session.doc.modified
    assert not window.isWindowModified()
    while stack.canRedo():
        stack.redo()
    assert snapshot(session.doc) == edited and window.isWindowModified()
    window.editing.undo_action.trigger()
    assert "added" in session.doc.attributes and "comment" in session.doc.attributes
    assert window.editing.history.model().rowCount() == 5      # <opened file> + 4 edits


def test_safetensors_metadata_is_string_only(qtbot, window, tmp_path):
    view, _session = opened(qtbot, window, make_file(tmp_path, "safetensors", "m.safetensors"))
    editor = window.editing.editor
    assert "strings only" in editor.note.text()
    assert editor.model.kinds() == ("text",)
    assert not editor.model.flags(editor.model.index(0, AttrColumn.TYPE)) & Qt.ItemFlag.ItemIsEditable
    select_tensor(view, "a")
    assert "no per-tensor attributes" in editor.note.text() and not editor.add_button.isEnabled()
    assert editor.title.text() == "Tensor “a”"


def test_typed_tensor_attributes_in_objects_layout(qtbot, window, tmp_path):
    view, session = opened(qtbot, window, make_file(tmp_path, "zt-objects", "o.zt"))
    select_tensor(view, "b")
    model = window.editing.editor.model
    assert model.scope == "b" and model.rowCount() == 0
    row = model.add("scale")
    assert model.setData(model.index(row, AttrColumn.TYPE), "float")
    assert model.setData(model.index(row, AttrColumn.VALUE), "0.25")
    row = model.add("dims")
    assert model.setData(model.index(row, AttrColumn.TYPE), "list")
    refusals = []
    model.refused.connect(refusals.append)
    assert not model.setData(model.index(row, AttrColumn.VALUE), "[1, 2")
    assert refusals and "JSON" in refusals[0]
    assert model.setData(model.index(row, AttrColumn.VALUE), '[1, 2, {"k": true}]')
    assert session.doc.find("b").attributes == {"scale": 0.25, "dims": [1, 2, {"k": True}]}


def test_value_editor_validates_as_you_type(qtbot, window, tmp_path):
    _view, _session = opened(qtbot, window, make_file(tmp_path, "zt-objects", "o.zt"))
    editor = window.editing.editor
    window.editing.attributes_dock.raise_()
    row = editor.model.add("n", 3)
    index = editor.model.index(row, AttrColumn.VALUE)
    editor.table.setCurrentIndex(index)
    editor.table.edit(index)
    from PySide6.QtWidgets import QLineEdit

    line = next(w for w in editor.table.findChildren(QLineEdit) if w.isVisible())
    line.setText("4.5x")
    assert not line.hasAcceptableInput() and "not an integer" in line.toolTip() and line.styleSheet()
    line.setText("45")
    assert line.hasAcceptableInput() and not line.styleSheet()


def test_refused_edit_is_reported(qtbot, window, tmp_path):
    view, session = opened(qtbot, window, make_file(tmp_path, "zt-v0.1", "v01.zt"))
    editor = window.editing.editor
    assert not editor.add_button.isEnabled()            # v0.1 has no file attributes
    select_tensor(view, "a")
    row = editor.model.add("offset", "1")               # reserved v0.1 manifest key
    assert row == -1 and editor.error.isVisibleTo(editor) and "reserved" in editor.error.text()
    assert not session.stack.count()


def test_rename_and_delete_tensors_from_tree(qtbot, window, tmp_path):
    view, session = opened(qtbot, window, make_file(tmp_path))
    select_tensor(view, "a")
    window.editing.ask_text = lambda title, label, text: "weights"
    view.tree.setFocus()
    view.tree_editing.rename_action.trigger()
    assert [t.name for t in session.doc.tensors] == ["weights", "b"]
    index = view.proxy.mapFromSource(view.tree_model.index_of(view.tensor_file.tensors[0]))
    assert index.data() == "weights" and "renamed from a" in index.data(Qt.ItemDataRole.ToolTipRole)
    assert window.editing.editor.model.scope == "weights"
    select_tensor(view, "b")
    view.tree_editing.delete_action.trigger()
    assert [t.name for t in session.doc.tensors] == ["weights"]
    index = view.proxy.mapFromSource(view.tree_model.index_of(view.tensor_file.tensors[1]))
    assert index.data(Qt.ItemDataRole.FontRole).strikeOut()
    session.stack.undo()
    session.stack.undo()
    assert [t.name for t in session.doc.tensors] == ["a", "b"] and not window.isWindowModified()
    index = view.proxy.mapFromSource(view.tree_model.index_of(view.tensor_file.tensors[1]))   # rows moved: by name
    assert index.data() == "b" and not view.session.tree.pending.state


def test_tree_shortcuts_f2_and_del(qtbot, window, tmp_path):
    view, session = opened(qtbot, window, make_file(tmp_path))
    select_tensor(view, "b")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    view.tree.setFocus()
    qtbot.waitUntil(view.tree.hasFocus)
    qtbot.keyClick(view.tree, Qt.Key.Key_Delete)
    assert [t.name for t in session.doc.tensors] == ["a"]
    window.editing.ask_text = lambda title, label, text: "renamed"
    select_tensor(view, "a")
    qtbot.keyClick(view.tree, Qt.Key.Key_F2)
    assert [t.name for t in session.doc.tensors] == ["renamed"]


def test_attributes_model_passes_qtmodeltester(qtbot, qtmodeltester, window, tmp_path):
    view, _session = opened(qtbot, window, make_file(tmp_path, "zt-objects", "o.zt"))
    model = window.editing.editor.model
    model.add("list", [1, 2])
    qtmodeltester.check(model, force_py=True)      # connects once; it keeps checking the changes below
    select_tensor(view, "a")
    model.add("n", 1)
    model.setData(model.index(0, AttrColumn.KEY), "count")
    model.remove([0])


def test_the_edit_document_is_made_when_first_needed(qtbot, window, tmp_path, monkeypatch):
    from ztviewer.codec.writers.document import EditableDocument

    path = make_file(tmp_path)
    made = []
    make = EditableDocument.__init__
    monkeypatch.setattr(EditableDocument, "__init__", lambda doc, *args: made.append(doc) or make(doc, *args))
    view, session = opened(qtbot, window, path)
    select_tensor(view, "b")
    assert not made and window.editing.attributes_dock.widget() is None     # looking costs no copy
    window.editing.attributes_dock.raise_()
    qtbot.waitUntil(lambda: window.editing.attributes_dock.widget() is not None)
    assert made == [session.doc] and window.editing.editor.model.scope == "b"


def test_save_is_offered_once_there_are_edits(qtbot, window, tmp_path):
    _view, session = opened(qtbot, window, make_file(tmp_path))
    save = window.editing.save_action
    assert not save.isEnabled()
    window.editing.editor.model.add("added", "yes")
    assert save.isEnabled()
    session.stack.undo()
    assert not save.isEnabled()


def test_a_component_row_acts_on_its_own_tensor_even_when_another_has_an_equal_component(qtbot, window, tmp_path):
    path = tmp_path / "empties.zt"
    save_arrays(path, {"first": np.zeros(0, np.float32), "second": np.zeros(0, np.float32)}, "zt-v0.1")
    view, session = opened(qtbot, window, path)
    first, second = view.tensor_file.tensors
    assert first.components["data"] == second.components["data"]   # zero-size blobs at one offset
    assert view.select_item(second, "data")
    view.tree_editing.delete_action.trigger()
    assert [t.name for t in session.doc.tensors] == ["first"]
