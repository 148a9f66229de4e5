"""How a file's tab is laid out: the tensor tree (under its filter row) on the left, the file map over the
Bytes | Inspect tabs on the right, split so the hex view gets its natural width once the tab is first shown."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHBoxLayout, QSplitter, QTreeView, QVBoxLayout, QWidget

from ztviewer.session.tree_columns import Column


def configure_tree(tree: QTreeView) -> None:
    """The tensor tree's look and behaviour: uniform rows, several rows selectable, sortable, by name in natural
    order first (``layers.2`` before ``layers.10``; View ▸ Manifest Order shows the file's own order)."""
    tree.setUniformRowHeights(True)
    tree.setIndentation(tree.fontMetrics().averageCharWidth() * 2)
    tree.setAlternatingRowColors(True)
    tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    tree.header().setSortIndicator(Column.NAME, Qt.SortOrder.AscendingOrder)
    tree.setSortingEnabled(True)


def tree_side(filter_box: QWidget, beside_filter: list[QWidget], tree: QTreeView) -> QWidget:
    """The left panel: a row with the filter box (taking the room) and ``beside_filter``, over the tree."""
    filter_row = QHBoxLayout()
    filter_row.setContentsMargins(0, 0, 0, 0)
    filter_row.addWidget(filter_box, 1)
    for widget in beside_filter:
        filter_row.addWidget(widget)
    left = QWidget()
    layout = QVBoxLayout(left)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addLayout(filter_row)
    layout.addWidget(tree)
    return left


def bytes_side(file_map: QWidget) -> tuple[QWidget, QVBoxLayout]:
    """The right panel with the file map on top, and its layout (where the Bytes | Inspect tabs go)."""
    right = QWidget()
    layout = QVBoxLayout(right)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    layout.addWidget(file_map)
    return right, layout


def split(left: QWidget, right: QWidget) -> QSplitter:
    """The two panels side by side; a wider window widens the tree, and neither panel collapses."""
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.addWidget(left)
    splitter.addWidget(right)
    splitter.setStretchFactor(0, 1)
    splitter.setStretchFactor(1, 0)
    splitter.setChildrenCollapsible(False)
    return splitter


def size_split(splitter: QSplitter, hex_width: int, least_tree_width: int) -> None:
    """Give the right panel the hex view's natural width ``hex_width``, less where the tree's important columns
    need the room (``least_tree_width``), but never less than half the width."""
    total = sum(splitter.sizes())
    width = min(hex_width, max(total // 2, total - least_tree_width))
    splitter.setSizes([total - width, width])
