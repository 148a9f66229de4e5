"""The tensor tree over a lazy tensor table (:class:`~ztviewer.codec.tensor_table.TensorTable`): opening it
and painting the group rows builds no tensor, and every cell says what the same tree over a plain list says."""
from __future__ import annotations

import pytest
import xxhash
from PySide6.QtCore import QModelIndex, Qt

from tests.codec.formats.v2_builders import assemble, dense
from ztviewer.codec import open_file
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.tensor_table import TensorTable
from ztviewer.gui.models.tensor_tree import Column, TensorTreeModel
from ztviewer.session.tree_nodes import NodeKind

ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)


@pytest.fixture
def path(tmp_path):
    """Two blocks of three tensors; only block 1 records digests."""
    objects, blobs = {}, {}
    for i in range(6):
        offset, data = 4096 * (i + 1), bytes([i]) * 8 * (i + 1)
        fields = {"digest": f"xxh3:{xxhash.xxh3_64_intdigest(data):016x}"} if i >= 3 else {}
        objects[f"block.{i // 3}.w{i % 3}"] = dense("f32", [2, i + 1], offset, len(data), **fields)
        blobs[offset] = data
    target = tmp_path / "blocks.zt"
    target.write_bytes(assemble({"objects": objects}, blobs))
    return target


def _group_cells(model, parent=QModelIndex()):
    """Every cell of every row that has children (file and groups), depth first."""
    cells = []
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        if model.kind(index) in (NodeKind.FILE, NodeKind.GROUP):
            cells.append([model.data(model.index(row, c, parent), role) for c in Column for role in ROLES])
            cells += _group_cells(model, index)
    return cells


def _blocks(model):
    """The groups block.0 and block.1 (file → block → block.N)."""
    block = model.index(0, 0, model.index(0, 0))
    groups = [model.item(model.index(row, 0, block)) for row in range(2)]
    assert [g.prefix for g in groups] == ["block.0", "block.1"]
    return groups


def test_group_rows_of_a_table_build_no_tensor_and_match_a_list(path):
    lazy_tf = open_file(path)
    assert isinstance(lazy_tf.tensors, TensorTable)
    lazy = TensorTreeModel(lazy_tf, grouped=True)
    lazy_cells = _group_cells(lazy)
    assert lazy_tf.tensors._built == 0
    listed_tf = open_file(path)
    listed_tf.tensors = list(listed_tf.tensors)
    listed = TensorTreeModel(listed_tf, grouped=True)
    assert lazy_cells == _group_cells(listed)
    assert lazy.digests.totals() == listed.digests.totals()
    groups = _blocks(lazy)
    assert [lazy.group_state(g) for g in groups] == [DigestState.NONE, DigestState.UNCHECKED]


def test_a_verified_tensor_counts_with_the_ones_not_built(path):
    tf = open_file(path)
    model = TensorTreeModel(tf, grouped=True)
    block1 = _blocks(model)[1]
    tensor = tf.tensors[4]  # built now, the other two of its block are not
    model.set_digest_states([(tensor, "data", DigestState.OK)])
    assert model.group_state(block1) is DigestState.UNCHECKED
    model.set_digest_states([(tensor, "data", DigestState.MISMATCH)])
    assert model.group_state(block1) is DigestState.MISMATCH
    assert model.index_of(tensor).isValid() and model.tensor_at(model.index_of(tensor)) is tensor
