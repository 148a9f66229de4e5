"""The tree filter matches the names the tree shows: pending renames by their new name, through undo and redo;
pending deletions (shown struck out under their name) by that name."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from tests.gui.test_edit_attributes import discard_on_teardown, make_file, opened, select_tensor  # noqa: F401
from tests.gui.test_tree_filter import set_filter, view_index
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.edit import RenameTensor
from ztviewer.gui.models.tree_roles import TreeRole


def shown_tensor_names(view) -> list[str]:
    """The name cells of the tensor rows the tree shows (every level below the file row)."""
    model = view.tree.model()
    names, parents = [], [model.index(0, 0)]
    while parents:
        parent = parents.pop()
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            if index.data(TreeRole.KIND) == "tensor":
                names.append(index.data())
            else:
                parents.append(index)
    return sorted(names)


def rename(view, old: str, new: str) -> None:
    """Rename as F2 does, without making the tensor current (which would clear a filter hiding it)."""
    view.edit_session.push(RenameTensor(old, new))


def test_filter_matches_the_pending_new_name(qtbot, window, tmp_path):
    view, _session = opened(qtbot, window, make_file(tmp_path))
    rename(view, "a", "weights")
    set_filter(view, "weight")
    assert view.tree.model() is view.proxy
    assert shown_tensor_names(view) == ["weights"] and view.match_label.text() == "1 of 2 tensors"
    set_filter(view, "*ts")                                  # glob, anchored at the end of the new name
    assert shown_tensor_names(view) == ["weights"]
    set_filter(view, "a")                                    # the old name no longer matches
    assert shown_tensor_names(view) == [] and view.match_label.text() == "0 of 2 tensors"


def test_renaming_under_a_filter_and_undo_redo_refilter(qtbot, window, tmp_path):
    view, session = opened(qtbot, window, make_file(tmp_path))
    select_tensor(view, "a")
    set_filter(view, "a")
    assert shown_tensor_names(view) == ["a"]
    window.editing.ask_text = lambda *args: "weights"
    view.tree_editing.rename_current()                       # the current row no longer matches: it goes
    assert shown_tensor_names(view) == [] and view.match_label.text() == "0 of 2 tensors"
    session.stack.undo()
    assert shown_tensor_names(view) == ["a"] and view.match_label.text() == "1 of 2 tensors"
    set_filter(view, "weights")
    assert shown_tensor_names(view) == []
    session.stack.redo()
    assert shown_tensor_names(view) == ["weights"]
    index = view_index(view, view.tensor_file.tensors[0])
    assert index.data(Qt.ItemDataRole.FontRole).italic() and "renamed from a" in index.data(Qt.ItemDataRole.ToolTipRole)
    session.stack.undo()
    assert shown_tensor_names(view) == [] and view.match_label.text() == "0 of 2 tensors"


def test_a_pending_deletion_matches_the_struck_out_name_it_shows(qtbot, window, tmp_path):
    view, session = opened(qtbot, window, make_file(tmp_path))
    select_tensor(view, "b")
    view.tree_editing.delete_selected()
    set_filter(view, "b")
    assert shown_tensor_names(view) == ["b"]
    assert view_index(view, view.tensor_file.tensors[1]).data(Qt.ItemDataRole.FontRole).strikeOut()
    rename(view, "a", "renamed")
    session.stack.undo()                                     # undo the rename; b stays deleted and shown
    set_filter(view, "b")
    assert shown_tensor_names(view) == ["b"]


def test_grouped_filter_finds_a_renamed_tensor_in_its_group(qtbot, window, tmp_path):
    path = tmp_path / "grouped.zt"
    save_arrays(path, {f"model.layers.{i}.{part}": np.zeros(2, np.float32)
                       for i in range(2) for part in ("q", "k")})
    view, session = opened(qtbot, window, path)
    view.set_grouped(True)
    set_filter(view, "gate")
    assert shown_tensor_names(view) == []
    rename(view, "model.layers.1.k", "model.layers.1.gate")
    assert shown_tensor_names(view) == ["model.layers.1.gate"]
    tensor = view.tensor_file.tensor("model.layers.1.k")
    assert view.tree.isExpanded(view_index(view, tensor).parent())
    session.stack.undo()
    assert shown_tensor_names(view) == []


def test_no_filter_keeps_the_tree_model_shown_through_renames(qtbot, window, tmp_path):
    view, session = opened(qtbot, window, make_file(tmp_path))
    rename(view, "a", "weights")
    session.stack.undo()
    assert view.tree.model() is view.tree_model and view.match_label.text() == ""


def test_sorting_by_name_orders_by_the_pending_new_name(qtbot, window, tmp_path):
    """Sort, filter and the name cells agree on a renamed tensor's name, grouped or not."""
    path = tmp_path / "sorted.zt"
    save_arrays(path, {name: np.zeros(2, np.float32) for name in ("m.b", "m.c", "m.d")})
    view, session = opened(qtbot, window, path)
    rename(view, "m.b", "m.z")
    view.tree.sortByColumn(0, Qt.SortOrder.AscendingOrder)

    def rows(parent):
        model = view.tree.model()
        return [model.index(row, 0, parent).data() for row in range(model.rowCount(parent))]

    file_index = view.tree.model().index(0, 0)
    assert rows(file_index) == ["m.c", "m.d", "m.z"]
    set_filter(view, "m.")
    assert rows(view.tree.model().index(0, 0)) == ["m.c", "m.d", "m.z"]
    view.set_grouped(True)

    def group():        # asked anew: a refilter drops the proxy's indexes
        return view.tree.model().index(0, 0, view.tree.model().index(0, 0))

    assert rows(group()) == ["c", "d", "m.z"]                  # a renamed row shows its whole new name
    session.stack.undo()
    assert rows(group()) == ["b", "c", "d"]
