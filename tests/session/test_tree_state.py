"""The tensor tree's state without Qt: sorting by each column, grouping by dotted prefix, the name filter, and
the marks on rows (pending renames and deletions, problems found later, digest states)."""
from __future__ import annotations

import numpy as np
import pytest

from ztviewer.codec import Component, Tensor, TensorFile, open_file
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.edit import DeleteTensor, RenameTensor
from ztviewer.codec.errors import Problem, Severity
from ztviewer.session.digest_states import DigestStates
from ztviewer.session.file_session import FileSession
from ztviewer.session.tree_columns import Column
from ztviewer.session.tree_filter import name_matcher
from ztviewer.session.tree_marks import FILE_POSITION
from ztviewer.session.tree_nodes import FILE_ID, NodeKind, TensorGroup, kind_of, tensor_id
from ztviewer.session.tree_state import TreeState


def tensor(name: str, offset: int, length: int, *, dtype: str = "float32", shape: tuple[int, ...] = (4,),
           layout: str = "dense", encoding: str = "raw", digest: str | None = "crc32c:0x00000000",
           index: int = 0) -> Tensor:
    return Tensor(name, dtype, shape, layout=layout, index=index,
                  components={"data": Component("data", offset, length, encoding, digest, dtype)})


def mixed_file() -> TensorFile:
    """Five tensors whose every column sorts them differently from the manifest order."""
    tensors = [
        tensor("layers.10.w", 640, 64, dtype="int8", shape=(8, 8), encoding="zstd", index=0),
        tensor("layers.2.w", 64, 512, dtype="float64", shape=(64,), layout="sparse_csr", index=1),
        tensor("Embed", 1024, 16, dtype="bfloat16", shape=(2, 4), digest=None, index=2),
        tensor("layers.1.b", 320, 256, dtype="float16", shape=(), index=3),
        tensor("head", 2048, 128, dtype="uint8", shape=(4, 4, 8), encoding="zstd", index=4),
    ]
    return TensorFile("/nonexistent/mixed.zt", "zt", "test", tensors=tensors)


def shown_order(state: TreeState) -> list[str]:
    """Names of the file row's children, top to bottom (ungrouped)."""
    return [state.tensors[(state.child(FILE_ID, row) >> 8) - 1].name for row in range(state.row_count(FILE_ID))]


def record(event) -> list:
    seen: list = []
    event.connect(seen.append)
    return seen


@pytest.fixture
def state() -> TreeState:
    tf = mixed_file()
    return TreeState(tf, DigestStates(tf.tensors))


@pytest.mark.parametrize("column, ascending, descending", [
    (Column.NAME, ["Embed", "head", "layers.1.b", "layers.2.w", "layers.10.w"], None),  # natural, case-blind
    (Column.DTYPE, ["Embed", "layers.1.b", "layers.2.w", "layers.10.w", "head"], None),
    (Column.SHAPE, ["layers.1.b", "Embed", "layers.10.w", "layers.2.w", "head"], None),  # elements, then shape
    (Column.LAYOUT, ["layers.10.w", "Embed", "layers.1.b", "head", "layers.2.w"],
     ["layers.2.w", "layers.10.w", "Embed", "layers.1.b", "head"]),
    (Column.STORED, ["Embed", "layers.10.w", "head", "layers.1.b", "layers.2.w"], None),
    (Column.ENCODING, ["layers.2.w", "Embed", "layers.1.b", "layers.10.w", "head"],
     ["layers.10.w", "head", "layers.2.w", "Embed", "layers.1.b"]),
    (Column.OFFSET, ["layers.2.w", "layers.1.b", "layers.10.w", "Embed", "head"], None),
    (Column.DIGEST, ["Embed", "layers.10.w", "layers.2.w", "layers.1.b", "head"],        # no digest first
     ["layers.10.w", "layers.2.w", "layers.1.b", "head", "Embed"]),
])
def test_sorting_by_each_column_and_back(state, column, ascending, descending):
    """Descending keeps tensors with equal keys in manifest order (``None``: every key differs, the reverse)."""
    assert state.sort(column)
    assert shown_order(state) == ascending
    assert [state.row_of(tensor_id(position)) for position in range(5)] == \
        [ascending.index(t.name) for t in state.tensors]
    assert state.sort(column, descending=True)
    assert shown_order(state) == (descending or ascending[::-1])
    assert state.sort(-1)
    assert shown_order(state) == [t.name for t in state.tensors]


def test_a_sort_is_announced_around_the_change_and_the_order_in_force_is_not_sorted_again(state):
    seen: list[tuple[str, list[str]]] = []
    state.reordering.connect(lambda _: seen.append(("before", shown_order(state))))
    state.reordered.connect(lambda _: seen.append(("after", shown_order(state))))
    manifest = [t.name for t in state.tensors]
    assert not state.sort(-1)                       # the manifest order is in force already
    assert state.sort(Column.NAME)
    assert seen == [("before", manifest), ("after", shown_order(state))] and seen[1][1] != manifest
    assert not state.sort(Column.NAME) and len(seen) == 2


def test_sorting_by_digest_again_after_verification_changed_a_state(state):
    state.sort(Column.DIGEST, descending=True)
    assert shown_order(state)[0] != "head"
    assert not state.sort(Column.DIGEST, descending=True)
    head = state.tensors[4]
    state.digests.set(head, head.components["data"], DigestState.MISMATCH)
    state.on_digests_changed([(head, "data", DigestState.MISMATCH)])
    assert state.sort(Column.DIGEST, descending=True)
    assert shown_order(state)[0] == "head"


def names_under(state: TreeState, node: int) -> list[str]:
    out = []
    for row in range(state.row_count(node)):
        child = state.child(node, row)
        item = state.item(child)
        out.append(item.label if isinstance(item, TensorGroup) else state.shown_name(item))
    return out


def test_grouping_by_dotted_prefix_in_natural_order(state):
    seen = record(state.regrouping), record(state.regrouped)
    state.set_grouped(True)
    assert seen == ([True], [True]) and state.grouped
    assert names_under(state, FILE_ID) == ["layers", "Embed", "head"]   # groups first, then leaves by rank
    layers = state.child(FILE_ID, 0)
    assert kind_of(layers) is NodeKind.GROUP and state.group(layers).members == [0, 1, 3]
    assert names_under(state, layers) == ["1", "2", "10"]
    one = state.child(layers, 0)
    assert names_under(state, one) == ["b"]
    leaf = state.child(one, 0)
    assert state.item(leaf) is state.tensors[3] and state.parent_of(leaf) == one
    assert state.parent_of(one) == layers and state.parent_of(layers) == FILE_ID and state.parent_of(FILE_ID) is None
    state.sort(Column.NAME, descending=True)                     # groups follow a descending name sort
    assert names_under(state, layers) == ["10", "2", "1"]
    state.sort(Column.STORED, descending=True)                   # ...but not another column's
    assert names_under(state, FILE_ID) == ["layers", "head", "Embed"]
    state.set_grouped(False)
    assert seen == ([True, False], [True, False]) and names_under(state, FILE_ID)[0] == "layers.2.w"


def test_components_are_rows_of_their_tensor(state):
    node = state.node_of(state.tensors[1], "data")
    assert node is not None and kind_of(node) is NodeKind.COMPONENT
    assert state.item(node) is state.tensors[1].components["data"] and state.tensor_of(node) is state.tensors[1]
    assert state.parent_of(node) == tensor_id(1) and state.row_of(node) == 0
    assert state.node_of(state.tensors[1], "missing") is None
    assert state.row_count(tensor_id(1)) == 1 and state.row_count(node) == 0
    with pytest.raises(IndexError):
        state.child(tensor_id(1), 1)


@pytest.mark.parametrize("pattern, expected", [
    ("layers.1", ["layers.1.b", "layers.10.w"]),      # a dot is a dot
    ("layers.1.", ["layers.1.b"]),
    ("rs.2", ["layers.2.w"]),
    ("LAYERS.2", ["layers.2.w"]),                     # case-blind
    ("*.w", ["layers.10.w", "layers.2.w"]),           # glob: anchored at the end
    ("layers.[12].*", ["layers.2.w", "layers.1.b"]),
    ("layers.?.*", ["layers.2.w", "layers.1.b"]),
    ("  ", None),
    ("zzz", []),
])
def test_filter_matches_shown_names(state, pattern, expected):
    state.set_pattern(pattern)
    names = [t.name for t in state.tensors]
    if expected is None:
        assert state.filter.matches is None and state.match_count() == len(names)
        return
    assert sorted(names[p] for p in state.filter.matches) == sorted(expected)
    assert state.match_count() == len(expected)
    assert [n for n in names if state.accepts(tensor_id(names.index(n)))] == \
        [n for n in names if n in expected]


@pytest.mark.parametrize("pattern, name, matches", [
    ("a.b", "a.b", True), ("a.b", "axb", False),                       # no regular expressions in substrings
    ("a+b(1)$", "x.a+b(1)$.y", True), ("w\\b", "w\\b.0", True), ("w\\b", "wb", False),
    ("*\\*", "x\\yz", True), ("*\\*", "xyz", False),                    # a backslash in a glob is literal
    ("x[[]0]", "x[0]", True), ("x[[]0]", "x0", False),                  # [[] is a literal [
    ("x[0]", "x0", True), ("x[0]", "x[0]", False),                      # [0] is a class
    ("*.(weight)", "a.(weight)", True), ("*.weight", "a.weight.t", False),
])
def test_names_with_dots_and_escapes(pattern, name, matches):
    matcher = name_matcher(pattern)
    assert matcher is not None and matcher(name) is matches


def test_filter_events_bracket_the_change_and_groups_follow(state):
    state.set_grouped(True)
    seen: list[tuple[str, str, set[int] | None]] = []
    state.filter_changing.connect(lambda p: seen.append(("changing", p, state.filter.matches)))
    state.filter_changed.connect(lambda p: seen.append(("changed", p, state.filter.matches)))
    state.set_pattern("head")
    assert seen == [("changing", "head", None), ("changed", "head", {4})]
    state.set_pattern("head")                            # the same pattern: nothing to do
    assert len(seen) == 2
    layers = state.child(FILE_ID, 0)
    assert not state.accepts(layers) and state.accepts(FILE_ID)
    state.set_pattern("*.b")
    assert state.accepts(layers)
    state.set_grouped(False)                             # regrouping numbers the groups anew
    state.set_grouped(True)
    assert state.accepts(state.child(FILE_ID, 0)) and not state.accepts(state.child(FILE_ID, 1))


def test_found_problems_are_kept_once_and_marked(state):
    seen = record(state.problems_found)
    head = state.tensors[4]
    assert state.problem_level(head) is None and state.problem_level(state.tensor_file) is None
    late = Problem(Severity.WARNING, "odd", tensor="head")
    bad = Problem(Severity.ERROR, "broken", tensor="head")
    whole = Problem(Severity.ERROR, "file-wide")
    state.add_found_problems([late, whole])
    assert seen == [[4, FILE_POSITION]]
    assert state.problems_of(head) == [late] and state.problem_level(head) is Severity.WARNING
    assert state.problems_of(state.tensor_file) == [whole]
    assert state.problem_level(state.tensor_file) is Severity.ERROR
    state.add_found_problems([late])
    assert len(seen) == 1                                # known already: nothing to paint
    state.add_found_problems([bad])
    assert state.problem_level(head) is Severity.ERROR and state.problems_of(head) == [late, bad]
    assert state.problem_level(state.tensors[0]) is None


def test_digest_changes_name_the_rows_to_paint(state):
    state.set_grouped(True)
    layers = state.child(FILE_ID, 0)
    two = state.child(layers, 1)
    state.child(state.child(two, 0), 0)                  # the component row of layers.2.w was shown
    seen = record(state.digest_rows_changed)
    target = state.tensors[1]
    state.digests.set(target, target.components["data"], DigestState.OK)
    state.on_digests_changed([(target, "data", DigestState.OK)])
    assert seen == [{FILE_ID: [0], layers: [1], two: [0], tensor_id(1): [0]}]


@pytest.fixture
def edited(tmp_path):
    path = tmp_path / "e.zt"
    save_arrays(path, {name: np.zeros(2, np.float32) for name in ("a", "b", "model.c")})
    session = FileSession(open_file(path))
    yield session
    session.close()


def test_pending_renames_and_deletions_overlay_the_names(edited):
    tree = edited.tree
    a, b, c = edited.tensor_file.tensors
    names, marked = record(tree.names_changed), record(tree.edits_marked)
    tree.set_pattern("weight")
    assert tree.filter.matches == set()
    edited.edits.push(RenameTensor("a", "weights"))
    assert tree.pending.state == {0: "weights"} and tree.pending_name(a) == (True, "weights")
    assert tree.filter.matches == {0} and len(names) == 1 and marked == [[0]]   # matched again before announced
    edited.edits.push(DeleteTensor("b"))
    assert tree.pending_name(b) == (True, None) and tree.pending_name(c) == (False, None)
    assert tree.shown_names() == ["weights", "b", "model.c"]                  # deleted: shown under its name
    assert len(names) == 1 and marked[-1] == [1]                              # no shown name changed
    tree.set_grouped(True)
    assert tree.shown_name(c) == "c"
    edited.edits.undo()
    edited.edits.undo()
    assert tree.pending.state == {} and tree.filter.matches == set() and len(names) == 2
    edited.edits.redo()
    assert tree.pending.renamed() == {0: "weights"}


def test_the_session_builds_its_tree_on_first_use_and_feeds_it_digest_changes(edited):
    assert edited._tree is None
    tree = edited.tree
    assert edited.tree is tree
    seen = record(tree.digest_rows_changed)
    a = edited.tensor_file.tensors[0]
    edited.set_digest_states([(a, "data", DigestState.MISMATCH)])
    assert seen == [{FILE_ID: [0]}] and tree.sort(Column.DIGEST, descending=True)
    assert tree.item(tree.child(FILE_ID, 0)) is a


@pytest.mark.parametrize("to, digest, empty", [("safetensors", None, True), ("zt", None, False), ("zt", None, True),
                                               ("zt-v2", "sha256", True), ("zt-v2", None, False)])
def test_a_lazy_table_sorts_by_its_columns_as_by_its_tensors_and_builds_none(tmp_path, to, digest, empty):
    """Sort keys read from a table's columns equal those of the tensors it stands for (each column), so sorting
    100,000 tensors builds none; a tensor built (and verified) since answers for itself."""
    from ztviewer.codec.tensor_table import TensorTable
    from ztviewer.session.tree_columns import sort_key, sort_keys

    path = tmp_path / f"many.{to}"
    arrays = {f"layers.{i}.{'w' if i % 3 else 'b'}": np.zeros((i % 4 + 1, 2) if i % 5 else (), np.float16 if i % 2
                                                                else np.float32) for i in range(600)}
    if empty:
        arrays["empty"] = np.zeros((0, 3), np.int8)
    save_arrays(path, arrays, to, digest=digest)
    lazy, built = open_file(path), open_file(path)
    try:
        assert isinstance(lazy.tensors, TensorTable)
        before = dict(lazy.tensors.positions())     # v2: the owners of a blob (equal tensors are stored once)
        assert to == "zt-v2" or not before          # opening builds none (an empty tensor included)
        states = DigestStates(built.tensors)
        for column in Column:
            keys = sort_keys(lazy.tensors, column, DigestStates(lazy.tensors))
            assert keys == [sort_key(t, column, states) for t in list(built.tensors)], column
        assert lazy.tensors.positions() == before                 # nothing built to sort
        tensor = lazy.tensors[7]
        lazy_states = DigestStates(lazy.tensors)
        lazy_states.set(tensor, tensor.components["data"], DigestState.MISMATCH)
        keys = sort_keys(lazy.tensors, Column.DIGEST, lazy_states)
        assert keys[7] == max(keys) and keys.count(max(keys)) == 1
    finally:
        lazy.close()
        built.close()


def test_a_closed_session_calls_no_tree_view(edited):
    tree = edited.tree
    seen = record(tree.edits_marked), record(tree.digest_rows_changed)
    edited.close()
    edited.edits.push(RenameTensor("a", "weights"))
    edited.set_digest_states([(edited.tensor_file.tensors[0], "data", DigestState.OK)])
    assert seen == ([], []) and tree.pending.state == {}


def test_sorting_by_name_orders_by_the_names_shown_pending_renames_applied(edited):
    """The name column shows, the filter matches and sorting by name orders by one name: a pending rename's."""
    tree = edited.tree
    a, b, c = edited.tensor_file.tensors
    edited.edits.push(RenameTensor("a", "zeta"))
    assert tree.sort(Column.NAME)
    assert [tree.item(tree.child(FILE_ID, row)) for row in range(3)] == [b, c, a]     # b, model.c, zeta
    assert [tree.shown_name(t) for t in (b, c, a)] == ["b", "model.c", "zeta"]
    assert tree.sort_key(a, Column.NAME) > tree.sort_key(c, Column.NAME)
    moved = record(tree.reordered)
    edited.edits.push(RenameTensor("model.c", "alpha"))           # sorted by name: the rows follow the new name
    assert len(moved) == 1
    assert [tree.item(tree.child(FILE_ID, row)) for row in range(3)] == [c, b, a]     # alpha, b, zeta
    tree.set_pattern("a")
    assert tree.filter.matches == {0, 2}                           # zeta, alpha
    edited.edits.undo()
    assert [tree.item(tree.child(FILE_ID, row)) for row in range(3)] == [b, c, a]
    assert tree.filter.matches == {0}                              # zeta (model.c has no "a")
    assert tree.sort(Column.NAME, descending=True)
    assert [tree.item(tree.child(FILE_ID, row)) for row in range(3)] == [a, c, b]


def test_a_group_row_totals_the_tensors_shown_under_it(state):
    """Under a filter a group counts, sizes and verifies its matches, and says how many of its members they are,
    as the file row and the match count do (``2 of 3 tensors``, ``2 of 5 tensors``)."""
    state.set_grouped(True)
    layers = state.group(state.child(FILE_ID, 0))               # layers.10.w, layers.2.w, layers.1.b
    totals = state.group_totals
    mismatched = state.tensors[3]                              # layers.1.b
    state.digests.set(mismatched, mismatched.components["data"], DigestState.MISMATCH)
    state.on_digests_changed([(mismatched, "data", DigestState.MISMATCH)])
    assert (totals.count_text(layers), totals.stored_nbytes(layers)) == ("3 tensors", 64 + 512 + 256)
    assert state.group_state(layers) is DigestState.MISMATCH
    assert state.count_text() == "5 tensors" and state.match_text() == ""
    assert totals.bytes_tip(layers) == "832 bytes"
    state.set_pattern("*.w")
    assert list(totals.shown(layers)) == [0, 1]
    assert (totals.count_text(layers), totals.stored_nbytes(layers)) == ("2 of 3 tensors", 64 + 512)
    assert totals.stored_nbytes(layers, shown=False) == 832
    assert totals.bytes_tip(layers) == "576 bytes in the 2 tensors shown\n832 bytes in the whole group (3 tensors)"
    assert state.group_state(layers) is DigestState.UNCHECKED   # the mismatch is not among the rows shown
    assert state.count_text() == state.match_text() == "2 of 5 tensors"
    state.set_pattern("layers.1")                               # layers.1.b, layers.10.w
    assert (totals.count_text(layers), totals.stored_nbytes(layers)) == ("2 of 3 tensors", 64 + 256)
    assert state.group_state(layers) is DigestState.MISMATCH
    state.set_pattern("head")
    assert (totals.count_text(layers), totals.stored_nbytes(layers)) == ("0 of 3 tensors", 0)
    assert not state.accepts(layers.node_id) and state.match_text() == "1 of 5 tensors"
    assert not totals.has_shown(layers) and list(totals.shown(layers)) == []
    state.set_pattern("*.b")                                    # asked before its row is painted, then after
    assert totals.has_shown(layers) and totals.count_text(layers) == "1 of 3 tensors" and state.accepts(layers.node_id)
    state.set_pattern("")
    assert (totals.count_text(layers), totals.stored_nbytes(layers)) == ("3 tensors", 832)


def test_a_pending_rename_keeps_its_tensor_in_the_group_of_its_stored_name(tmp_path):
    """Groups follow stored names (see TreeState.set_grouped): a tensor renamed into another group's prefix stays
    in its own group, found there by the filter under its new, whole name; its group counts it, the other does
    not, and no rename, undo or redo regroups the tree."""
    path = tmp_path / "layers.zt"
    save_arrays(path, {name: np.zeros(2, np.float32) for name in ("layers.0.a", "layers.0.b", "layers.1.a")})
    session = FileSession(open_file(path))
    tree = session.tree
    moved = session.tensor_file.tensors[1]                      # layers.0.b
    tree.set_grouped(True)
    regrouped = record(tree.regrouping)
    session.edits.push(RenameTensor("layers.0.b", "layers.1.b"))
    tree.set_pattern("layers.1.")
    layer0, layer1 = (tree.group(tree.child(tree.child(FILE_ID, 0), row)) for row in range(2))
    assert (layer0.prefix, layer1.prefix) == ("layers.0", "layers.1")
    assert tree.filter.matches == {1, 2} and tree.parent_of(tree.node_of(moved)) == layer0.node_id
    assert tree.shown_name(moved) == "layers.1.b" and tree.accepts(layer0.node_id) and tree.accepts(layer1.node_id)
    totals = tree.group_totals
    assert (totals.count_text(layer0), totals.count_text(layer1)) == ("1 of 2 tensors", "1 of 1 tensor")
    session.edits.undo()
    assert tree.filter.matches == {2} and not tree.accepts(layer0.node_id)
    session.edits.redo()
    assert tree.parent_of(tree.node_of(moved)) == layer0.node_id and regrouped == []
    session.close()
