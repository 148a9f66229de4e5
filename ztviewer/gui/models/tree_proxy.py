"""Filtering (substring or glob over tensor names) and the sort entry point of the tensor tree."""
from __future__ import annotations

import fnmatch
import re

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt

from ztviewer.session.tree_nodes import NodeKind, kind_of, tensor_position

from .tensor_tree import TensorTreeModel

_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_GLOB_CHARS = re.compile(r"[*?\[]")


def name_matcher(pattern: str):
    """A case-insensitive predicate on names: glob when the pattern has glob characters, else substring.

    A glob is anchored at the end of the name but not at its start, so ``*.weight`` matches suffixes and
    ``layers.[0-3].*`` matches ``model.layers.2.mlp.bias``.
    """
    text = pattern.strip().lower()
    if not text:
        return None
    if _GLOB_CHARS.search(text):
        regex = re.compile(fnmatch.translate(text.lstrip("*")))  # a leading * is implied (and slow to search)
        return lambda name: regex.search(name.lower()) is not None
    return lambda name: text in name.lower()


class TensorFilterProxy(QSortFilterProxyModel):
    """Shows tensors whose name matches the filter, the groups containing them, and all their components.

    Names are matched as the tree shows them, pending renames applied. Matches are computed once per filter
    text (and again when a rename changes a shown name) over all names, so the per-row test is a set lookup.
    ``sort`` is forwarded to the source model, which sorts whole columns without per-comparison calls.
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._pattern = ""
        self._matches: set[int] | None = None
        self._group_hits: dict[int, bool] = {}
        self._tree: TensorTreeModel | None = None

    def tree(self) -> TensorTreeModel:
        if self._tree is None:
            raise LookupError("no tree model set yet")
        return self._tree

    def setSourceModel(self, model: TensorTreeModel) -> None:  # type: ignore[override]  # filters tree models only
        previous = self.sourceModel()
        if previous is not None:
            previous.modelAboutToBeReset.disconnect(self._forget_group_hits)
        super().setSourceModel(model)
        self._tree = model
        model.modelAboutToBeReset.connect(self._forget_group_hits)

    def _forget_group_hits(self) -> None:
        self._group_hits.clear()   # regrouping numbers the groups anew

    @property
    def pattern(self) -> str:
        return self._pattern

    @staticmethod
    def filters_with(pattern: str) -> bool:
        """Whether ``pattern`` hides anything (an empty or blank one shows every tensor)."""
        return name_matcher(pattern) is not None

    def match_count(self) -> int:
        return len(self.tree().tensors) if self._matches is None else len(self._matches)

    def set_pattern(self, pattern: str) -> None:
        if pattern == self._pattern:
            return
        self._pattern = pattern
        self.refilter()

    def refilter(self) -> None:
        """Match the pattern (again, when a pending rename or its undo changed the names the tree shows)."""
        self.beginFilterChange()
        matcher = name_matcher(self._pattern)
        self._matches = None if matcher is None else {
            i for i, name in enumerate(self.tree().shown_names()) if matcher(name)}
        self._group_hits.clear()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        if self._matches is None:
            return True
        node = self.tree().child_node(source_parent, source_row)
        kind = kind_of(node)
        if kind is NodeKind.TENSOR:
            return tensor_position(node) in self._matches
        if kind is NodeKind.GROUP:
            hit = self._group_hits.get(node)
            if hit is None:
                members = self.tree().group(node).members
                hit = self._group_hits[node] = not self._matches.isdisjoint(members)
            return hit
        return True   # the file row, and every component of a shown tensor

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        # Constant for every row: answering without mapping to the source keeps layout of 100,000 rows cheap.
        return _FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    def hasChildren(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> bool:
        # Every child of a shown tensor is shown, and a shown group has a match below it, so the source
        # knows; the base class would build a row mapping for every tensor on screen to find out.
        return self.tree().hasChildren(self.mapToSource(parent))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.tree().sort(column, order)

