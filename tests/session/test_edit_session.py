"""The Qt-free edit session of a FileSession: edits, undo / redo, the saved state and its events."""
from __future__ import annotations

import pytest

from ztviewer.codec import open_file
from ztviewer.codec.edit import DeleteTensor, RenameTensor
from ztviewer.codec.errors import EditRefused
from ztviewer.session.file_session import FileSession

SHAPES = "zt_v1.0/ztensor-1.0.1/shapes.zt"


@pytest.fixture
def session(corpus_dir):
    s = FileSession(open_file(corpus_dir / SHAPES))
    yield s
    s.close()


def names(edits) -> list[str]:
    return [t.name for t in edits.doc.tensors]


def test_edit_undo_redo_and_the_saved_state(session):
    edits = session.edits
    events: list[tuple[str, object]] = []
    edits.pushed.connect(lambda step: events.append(("pushed", step.text)))
    edits.moved.connect(lambda index: events.append(("moved", index)))
    original = session.tensor("vec7_f32")
    assert not edits.modified and edits.current_name(original) == "vec7_f32"
    edits.push(RenameTensor("vec7_f32", "vector"))
    assert "vector" in names(edits) and "vec7_f32" not in names(edits)
    assert edits.modified and edits.current_name(original) == "vector" and edits.can_undo and not edits.can_redo
    edits.undo()
    assert "vec7_f32" in names(edits) and not edits.modified and edits.can_redo
    edits.redo()
    assert edits.current_name(original) == "vector" and edits.modified
    edits.mark_clean()                                     # saved: the history stands where the file does
    assert not edits.modified and edits.clean
    edits.undo()
    assert not edits.clean
    assert events == [("pushed", RenameTensor("vec7_f32", "vector").text), ("moved", 0), ("moved", 1), ("moved", 0)]
    assert session.tensor_file.tensor("vec7_f32") is original      # the open file itself never changes


def test_several_commands_make_one_step_and_a_refusal_changes_nothing(session):
    edits = session.edits
    step = edits.push_all([DeleteTensor("scalar_f64"), DeleteTensor("scalar_i32_zstd")], "delete 2 tensors")
    assert step.text == "delete 2 tensors" and len(edits.steps) == 1
    assert "scalar_f64" not in names(edits) and "scalar_i32_zstd" not in names(edits)
    with pytest.raises(EditRefused):
        edits.push(RenameTensor("mat3x5_f64", "rank3_i16"))           # the name is taken
    assert len(edits.steps) == 1 and "mat3x5_f64" in names(edits)
    edits.undo()
    assert {"scalar_f64", "scalar_i32_zstd"} <= set(names(edits))
    edits.push(RenameTensor("mat3x5_f64", "matrix"))                    # a new edit drops the undone step
    assert [s.text for s in edits.steps] == [RenameTensor("mat3x5_f64", "matrix").text] and not edits.can_redo


def test_no_edits_while_saving(session):
    edits = session.edits
    edits.saving = True
    with pytest.raises(EditRefused):
        edits.push(RenameTensor("vec7_f32", "v"))
    edits.saving = False
    edits.push(RenameTensor("vec7_f32", "v"))
    assert edits.index == 1


def test_a_file_that_cannot_be_read_has_no_edits(tmp_path):
    from ztviewer.codec import TensorFile

    assert FileSession(TensorFile(str(tmp_path / "x.zt"), "zt", readable=False)).edits is None
