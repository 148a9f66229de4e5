"""Which model the tensor tree view shows: the tree model itself, or the filter proxy while a filter is set.

A QTreeView asks about every row of a node it expands (10,000 rows for a flat file) when it lays it out.
Straight to the tree model that is two Python calls a row; through a QSortFilterProxyModel it is seven, so
the proxy stands between them only while it filters. Switching keeps the current row, the selection and the
expanded rows.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import (
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
)
from PySide6.QtWidgets import QTreeView

from ztviewer.session.tree_filter import filters_with

from .tensor_tree import TensorTreeModel
from .tree_proxy import TensorFilterProxy

_SELECT_ROWS = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows


class FilterSwitch:
    """Puts ``proxy`` between ``tree`` and ``model`` while the session's tree filter hides anything (it follows the
    filter however it was set). ``on_current_changed`` is (re)connected to the current selection model's
    ``currentChanged``. Build it after ``proxy`` was given ``model``: the proxy follows a new filter first."""

    def __init__(self, tree: QTreeView, model: TensorTreeModel, proxy: TensorFilterProxy,
                 on_current_changed: Callable[[QModelIndex, QModelIndex], None]) -> None:
        self.tree, self.model, self.proxy = tree, model, proxy
        self._on_current_changed = on_current_changed
        self._expanded: set[int] = set()     # tree-model node ids of expanded rows
        tree.setModel(model)
        tree.selectionModel().currentChanged.connect(on_current_changed)
        tree.expanded.connect(lambda index: self._expanded.add(self.to_source(index).internalId()))
        tree.collapsed.connect(lambda index: self._expanded.discard(self.to_source(index).internalId()))
        model.modelReset.connect(self._expanded.clear)    # node ids mean other rows after regrouping
        model.state.filter_changing.connect(self._on_filter_changing)
        model.state.filter_changed.connect(self._on_filter_changed)

    def to_source(self, index: QModelIndex | QPersistentModelIndex) -> QModelIndex:
        """The tree-model index of an index of either model."""
        return self.proxy.mapToSource(index) if index.model() is self.proxy else QModelIndex(index)  # type: ignore[arg-type]  # QModelIndex(QPersistentModelIndex) converts

    def to_view(self, source: QModelIndex | QPersistentModelIndex) -> QModelIndex:
        """The index the view shows for a tree-model index (invalid when filtered out)."""
        return self.proxy.mapFromSource(source) if self.tree.model() is self.proxy else QModelIndex(source)  # type: ignore[arg-type]  # converts as above

    def set_pattern(self, pattern: str) -> None:
        self.model.state.set_pattern(pattern)

    def _on_filter_changing(self, pattern: str) -> None:
        if not filters_with(pattern):
            self._show(self.model)       # before the proxy drops its filter (it would map every row)

    def _on_filter_changed(self, pattern: str) -> None:
        if filters_with(pattern):
            self._show(self.proxy)       # once it filters

    def _show(self, shown: TensorTreeModel | TensorFilterProxy) -> None:
        if self.tree.model() is shown:
            return
        current = QPersistentModelIndex(self.to_source(self.tree.currentIndex()))
        selected = [QPersistentModelIndex(self.to_source(i)) for i in self.tree.selectionModel().selectedRows(0)]
        old_selection = self.tree.selectionModel()
        self.tree.setModel(shown)
        old_selection.deleteLater()
        selection_model = self.tree.selectionModel()
        selection_model.currentChanged.connect(self._on_current_changed)
        for node in list(self._expanded):
            index = self.to_view(self.model.index_for_node(node))
            if index.isValid():
                self.tree.expand(index)
        selection = QItemSelection()
        for index in (self.to_view(s) for s in selected):
            if index.isValid():
                selection.select(index, index)
        selection_model.select(selection, _SELECT_ROWS)
        index = self.to_view(current)
        if index.isValid():
            selection_model.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.NoUpdate)
            self.tree.scrollTo(index)
