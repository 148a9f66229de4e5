"""The tensor tree's filter proxy: shows the rows the session's tree filter accepts, and hands sorting to the
tree model."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt

from ztviewer.session.tree_filter import filters_with, name_matcher
from ztviewer.session.tree_state import TreeState

from .tensor_tree import TensorTreeModel

_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class TensorFilterProxy(QSortFilterProxyModel):
    """Shows tensors whose name matches the filter, the groups containing them, and all their components.

    The pattern and the matches live in the tree model's :class:`~ztviewer.session.tree_state.TreeState`
    (names are matched as the tree shows them, pending renames applied); this proxy follows its
    ``filter_changing`` / ``filter_changed`` events, and its per-row test is the state's set lookup.
    ``sort`` is forwarded to the source model, which sorts whole columns without per-comparison calls.
    """

    filters_with = staticmethod(filters_with)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tree: TensorTreeModel | None = None

    def tree(self) -> TensorTreeModel:
        if self._tree is None:
            raise LookupError("no tree model set yet")
        return self._tree

    @property
    def state(self) -> TreeState:
        return self.tree().state

    def setSourceModel(self, model: TensorTreeModel) -> None:  # type: ignore[override]  # filters tree models only
        if self._tree is not None:
            self._tree.state.filter_changing.disconnect(self._on_filter_changing)
            self._tree.state.filter_changed.disconnect(self._on_filter_changed)
        super().setSourceModel(model)
        self._tree = model
        model.state.filter_changing.connect(self._on_filter_changing)
        model.state.filter_changed.connect(self._on_filter_changed)

    def _on_filter_changing(self, _pattern: str) -> None:
        self.beginFilterChange()

    def _on_filter_changed(self, _pattern: str) -> None:
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    @property
    def pattern(self) -> str:
        return self.state.pattern

    def match_count(self) -> int:
        return self.state.match_count()

    def set_pattern(self, pattern: str) -> None:
        self.state.set_pattern(pattern)

    def refilter(self) -> None:
        """Match the pattern again (the state does so itself when a pending rename changes a shown name)."""
        self.state.refilter()

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        tree = self.tree()
        state = tree.state
        return state.filter.matches is None or state.accepts(tree.child_node(source_parent, source_row))

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        # Constant for every row: answering without mapping to the source keeps layout of 100,000 rows cheap.
        return _FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    def hasChildren(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> bool:
        # Every child of a shown tensor is shown, and a shown group has a match below it, so the source
        # knows; the base class would build a row mapping for every tensor on screen to find out.
        return self.tree().hasChildren(self.mapToSource(parent))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.tree().sort(column, order)


__all__ = ["TensorFilterProxy", "name_matcher"]
