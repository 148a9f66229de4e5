"""Editing a zTensor v2 file in the window: Save appends a generation (status bar says which and how much),
the reopened tab lists the earlier one; Save As over the file offers compacting; ztensor 2.1.2 reads the result."""
from __future__ import annotations

import shutil

from tests.gui.test_edit_attributes import discard_on_teardown  # noqa: F401
from tests.gui.test_edit_save import wait_saved
from tests.gui.v2_files import conformance, tied_and_seekable, ztensor
from tests.gui.window_helpers import open_in_window
from ztviewer.codec.edit import SetFileAttribute, SetTensorAttribute
from ztviewer.session.formatting import human_bytes
from ztviewer.session.zt_v2_facts import generation_rows


def _deep_verified(path) -> None:
    """ztensor 2.1.2 verifies every part digest (it raises on a mismatch or a malformed file)."""
    zt = ztensor()
    with zt.open(str(path)) as source:
        report = source.verify(deep=True)
        assert report.checked == sum(len(t.parts) for t in source.values()) and report.undigested == 0


def test_save_appends_a_generation_and_says_so(qtbot, window, tmp_path):
    path = tied_and_seekable(tmp_path / "model.zt")
    before = path.read_bytes()
    view = open_in_window(qtbot, window, path)
    view.edit_session.push(SetFileAttribute("producer", "ztviewer test"))
    view.edit_session.push(SetTensorAttribute("big", "note", "frames"))
    window.editing.save_action.trigger()
    new = wait_saved(qtbot, window, path, view)
    after = path.read_bytes()
    assert after[:len(before)] == before                         # nothing before the old EOF was touched
    added = len(after) - len(before)
    message = window.statusBar().currentMessage()
    assert message == f"Saved: appended generation 2 ({human_bytes(added)}) to model.zt; reopened", message
    tf = new.tensor_file
    assert tf.attributes == {"producer": "ztviewer test"} and tf.tensor("big").attributes == {"note": "frames"}
    rows = generation_rows(tf)
    assert [(r.number, r.current) for r in rows] == [(2, True), (1, False)] and rows[1].size == len(before)
    assert window.format_label.text() == "zTensor v2, 2 generations"
    assert [s.kind for s in new.layout_map.segments].count("old-manifest") == 1
    _deep_verified(path)
    with ztensor().open(str(path)) as source:
        assert source.attributes == {"producer": "ztviewer test"}


def test_save_as_over_the_file_compacts_or_appends_as_chosen(qtbot, window, tmp_path):
    path = tied_and_seekable(tmp_path / "model.zt")
    view = open_in_window(qtbot, window, path)
    view.edit_session.push(SetFileAttribute("round", "1"))
    window.editing.save_action.trigger()
    view = wait_saved(qtbot, window, path, view)
    assert len(generation_rows(view.tensor_file)) == 2
    view.edit_session.push(SetFileAttribute("round", "2"))
    dialog = window.editing.save_as()
    assert not dialog.compact_check.isVisibleTo(dialog)           # a new file is always written fresh
    assert "earlier generation of the open file stays in it" in dialog.message.text()
    dialog.path_edit.setText(str(path))
    assert dialog.compact_check.isVisibleTo(dialog) and dialog.compact
    assert "its 1 earlier generation is dropped" in dialog.message.text()
    dialog.compact_check.setChecked(False)
    assert not dialog.compact and "Appends a generation" in dialog.message.text()
    dialog.compact_check.setChecked(True)
    dialog.accept()
    new = wait_saved(qtbot, window, path, view)
    assert window.statusBar().currentMessage().startswith(f"Saved {path} (zt-v2, ")
    assert len(generation_rows(new.tensor_file)) == 1 and new.tensor_file.attributes == {"round": "2"}
    _deep_verified(path)
    new.edit_session.push(SetFileAttribute("round", "3"))
    dialog = window.editing.save_as()
    dialog.path_edit.setText(str(path))
    dialog.compact_check.setChecked(False)
    dialog.accept()
    again = wait_saved(qtbot, window, path, new)
    assert "appended generation 2" in window.statusBar().currentMessage()
    assert len(generation_rows(again.tensor_file)) == 2
    _deep_verified(path)


def test_a_conformance_vector_saved_in_place_keeps_its_blobs(qtbot, window, tmp_path):
    path = tmp_path / "canonical-basic.zt"
    shutil.copy(conformance("canonical-basic.zt"), path)
    view = open_in_window(qtbot, window, path)
    view.edit_session.push(SetTensorAttribute("a.bias", "role", "bias"))
    window.editing.save_action.trigger()
    new = wait_saved(qtbot, window, path, view)
    shared = [s for s in new.layout_map.segments if s.kind == "shared"]
    assert [o.label for o in shared[0].owners] == ["tied", "a.weight"]   # still one blob, both owners
    assert new.tensor_file.tensor("a.bias").attributes == {"role": "bias"}
    _deep_verified(path)


def test_an_append_after_a_stopped_generation_search_claims_no_number(qtbot, window, tmp_path):
    """Issue 31: the appended generation was numbered one past those listed, though the search had stopped."""
    from tests.hostile_v2_files import generations_file

    path = tmp_path / "many.zt"
    generations_file(path, 2000)
    view = open_in_window(qtbot, window, path)
    view.edit_session.push(SetFileAttribute("g", "2001"))
    window.editing.save_action.trigger()
    new = wait_saved(qtbot, window, path, view)
    assert window.statusBar().currentMessage().startswith("Saved: appended a generation (")
    assert new.tensor_file.attributes == {"g": "2001"}
    assert [r.number for r in generation_rows(new.tensor_file)[:2]] == [0, -1]
