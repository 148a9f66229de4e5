"""FileSession without Qt: one open file's selection, shown bytes, properties and verification states."""
from __future__ import annotations

import json

import numpy as np
import pytest
import safetensors.numpy

from ztviewer.codec import open_file
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.multifile import open_path
from ztviewer.session.file_session import FileSession
from ztviewer.session.selection import Selection
from ztviewer.session.tree_nodes import FILE_ID, NodeKind, kind_of

CHECKSUMS = "zt_v1.x/ztensor-1.2.3/checksums.zt"


@pytest.fixture
def session(corpus_dir):
    s = FileSession(open_file(corpus_dir / CHECKSUMS))
    yield s
    s.close()


def flat(props) -> dict[str, str]:
    """Every property row (nested ones too) by name."""
    rows: dict[str, str] = {}
    for prop in props:
        rows[prop.key] = prop.value
        rows.update(flat(prop.children))
    return rows


def record(event) -> list:
    seen: list = []
    event.connect(seen.append)
    return seen


def test_selecting_a_component_gives_its_byte_range_and_announces_it(session):
    seen = record(session.selection_changed)
    selection = session.select_tensor("crc32c_raw_int64", "data")
    tensor = session.tensor_file.tensor("crc32c_raw_int64")
    assert selection == Selection(tensor.components["data"], tensor, (128, 128)) == session.selection
    assert selection.role == "data" and seen == [selection]
    # the tensor itself: its span; the file: no range to highlight
    assert session.select(tensor).byte_range == (128, 128)
    assert session.select(session.tensor_file) == Selection(session.tensor_file, None, None)
    assert len(seen) == 3


def test_unknown_names_and_roles_are_refused_without_changing_the_selection(session):
    session.select_tensor("sha256_raw_bool")
    with pytest.raises(KeyError):
        session.select_tensor("no such tensor")
    with pytest.raises(KeyError):
        session.select_tensor("sha256_raw_bool", "indices")
    assert session.selection.tensor.name == "sha256_raw_bool"


def test_a_byte_selects_the_component_owning_it(session):
    selection = session.select_offset(1000)            # inside sha256_zstd_float32's blob [960, 1033)
    assert selection.tensor.name == "sha256_zstd_float32" and selection.byte_range == (960, 73)


def test_a_byte_of_a_region_selects_the_file_with_that_region_as_range(session):
    messages = record(session.message)
    selection = session.select_offset(2)                # the leading magic
    assert selection.item is session.tensor_file and selection.byte_range == (0, 8)
    assert messages and "magic" in messages[-1]
    assert session.select_offset(10**9) is None


def test_a_problem_selects_what_it_names(session):
    from ztviewer.codec import Problem, Severity

    problem = Problem(Severity.ERROR, "bad", tensor="crc32c_zstd_bool", component="data", offset=900)
    assert session.select_problem(problem).byte_range == (896, 25)
    assert session.select_problem(Problem(Severity.WARNING, "file-wide")).item is session.tensor_file


def test_properties_follow_the_selection_and_the_digest_state(session):
    tensor = session.tensor_file.tensor("crc32c_raw_float32")
    session.select_tensor(tensor.name, "data")
    assert flat(session.properties())["digest state"] == "unchecked"
    assert flat(session.properties())["offset"] == "64 (0x40)"
    changes = record(session.digests_changed)
    assert session.set_digest_states([(tensor, "data", DigestState.OK)]) == [(tensor, "data", DigestState.OK)]
    assert changes == [[(tensor, "data", DigestState.OK)]]
    assert flat(session.properties())["digest state"] == "ok"
    assert session.digests.totals()[DigestState.OK] == 1
    # a repeated state is no change, and an unknown role is ignored
    assert session.set_digest_states([(tensor, "data", DigestState.OK), (tensor, "nope", DigestState.OK)]) == []
    assert len(changes) == 1
    session.reset_digest_states([(tensor, tensor.components["data"])])
    assert session.digest_state(tensor, tensor.components["data"]) is DigestState.UNCHECKED


def test_the_layout_is_built_only_when_asked_for(corpus_dir):
    session = FileSession(open_file(corpus_dir / CHECKSUMS))
    session.select_tensor("crc32c_raw_bool")
    assert session._layout is None                       # selecting needs no layout
    assert session.shown.layout.segment_at(0).kind == "magic"
    session.close()


@pytest.fixture
def sharded(tmp_path):
    weight_map = {}
    for shard in range(2):
        name = f"model-{shard + 1:05d}-of-00002.safetensors"
        arrays = {f"layers.{shard}.w": np.full((4, 4), shard + 1, np.float32)}
        safetensors.numpy.save_file(arrays, str(tmp_path / name))
        weight_map.update(dict.fromkeys(arrays, name))
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    return tmp_path


def test_a_tensor_of_another_shard_brings_that_shards_bytes_into_view(sharded):
    session = FileSession(open_path(str(sharded)))
    shown = record(session.shown_changed)
    messages = record(session.message)
    tensor = session.tensor("layers.1.w")
    selection = session.select(tensor.components["data"], tensor)
    source = session.tensor_file.source_for(tensor)
    assert session.shown_source is source and shown == [session.shown]
    assert session.shown.label == "model-00002-of-00002.safetensors" and "model-00002" in messages[-1]
    component = tensor.components["data"]
    assert selection.byte_range == (component.offset, component.length)
    assert np.frombuffer(source.window(component.offset, 4), np.float32)[0] == 2.0
    kinds = [s.kind for s in session.shown.layout.segments]
    assert kinds[:2] == ["header-length", "header"] and "gap" not in kinds
    header = session.shown.layout.segments[1]
    assert header.length == int.from_bytes(source.head(8), "little")
    session.select(tensor)                               # same shard: no new announcement
    assert len(shown) == 1
    session.close()


def test_a_sets_table_of_tensors_owns_no_bytes_of_the_set_itself(sharded):
    """The set's tensors are one table over every shard (nothing built to list them); its offsets are each shard's,
    so the set's own layout (it has no bytes) must place none of them, exactly as for a list of the same tensors."""
    from ztviewer.codec.tensor_table import TensorTable
    from ztviewer.session.file_layout import build_layout

    with open_path(str(sharded)) as tf:
        assert isinstance(tf.tensors, TensorTable) and tf.tensor_names() == ["layers.0.w", "layers.1.w"]
        from_table = build_layout(tf).segments
        tf.tensors = list(tf.tensors)
        assert from_table == build_layout(tf).segments == []


def test_events_call_each_callback_once_in_order_and_can_be_disconnected():
    from ztviewer.session.events import Event

    event: Event[int] = Event("numbers")
    calls: list[tuple[str, int]] = []

    def first(value: int) -> None:
        calls.append(("first", value))
        event.disconnect(first)                          # a callback may disconnect itself while called

    def second(value: int) -> None:
        calls.append(("second", value))

    event.connect(first)
    event.connect(second)
    event.connect(second)
    event.emit(1)
    event.emit(2)
    assert calls == [("first", 1), ("second", 1), ("second", 2)] and len(event) == 1


def test_a_selected_group_s_properties_total_its_matches_and_are_announced_when_the_filter_changes(tmp_path):
    """A group's properties say what its tree row says; a new filter announces them while a group is selected."""
    path = tmp_path / "grouped.safetensors"
    safetensors.numpy.save_file({"layers.0.w": np.zeros(4, np.float32), "layers.1.w": np.zeros(8, np.float32),
                                 "layers.1.b": np.zeros(2, np.float32), "head": np.zeros(1, np.float32)},
                                str(path))
    session = FileSession(open_file(path))
    try:
        tree = session.tree
        tree.set_grouped(True)
        layers = next(tree.group(node) for row in range(tree.row_count(FILE_ID))
                      if kind_of(node := tree.child(FILE_ID, row)) is NodeKind.GROUP)
        seen = record(session.properties_changed)
        session.select(layers)
        assert flat(session.properties())["tensors"] == "3 tensors" and seen == []
        tree.set_pattern("*.w")
        assert seen == [None]
        rows = flat(session.properties())
        assert (rows["tensors"], rows["stored bytes"]) == ("2 of 3 tensors", "48 bytes")
        assert rows["stored bytes, whole group"] == "56 bytes"
        session.select(session.tensor_file)
        tree.set_pattern("")
        assert seen == [None]                     # the file's properties do not total the matches
    finally:
        session.close()


def test_looking_one_tensor_up_builds_only_that_tensor(tmp_path):
    """``FileSession.tensor`` asks the file's name index: with a table of deferred tensors, one lookup builds one
    tensor, not all of them (50k tensors took 0.44 s when every tensor was built to find one)."""
    import safetensors.numpy

    from ztviewer.codec.tensor_table import TensorTable

    path = tmp_path / "many.safetensors"
    safetensors.numpy.save_file({f"t{i}": np.full(1, i, np.float32) for i in range(3000)}, str(path))
    session = FileSession(open_path(str(path)))
    try:
        table = session.tensor_file.tensors
        assert isinstance(table, TensorTable) and not list(table.built())
        tensor = session.tensor("t2999")
        assert tensor is not None and tensor.name == "t2999" and session.tensor("missing") is None
        assert [t.name for t in table.built()] == ["t2999"]
    finally:
        session.close()
