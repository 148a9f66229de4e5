"""The tensor tree: file → (dotted-prefix groups) → tensors → components, over the codec model.

A thin adapter over the file session's :class:`~ztviewer.session.tree_state.TreeState`, which owns the rows,
their order, grouping, filter and marks: this model turns its node ids into indexes, its events into Qt signals,
and asks :mod:`.tree_text` what each cell shows. :meth:`TensorTreeModel.item` returns the codec object behind
an index. :class:`~.tree_proxy.TensorFilterProxy` forwards ``sort`` here, which hands it to the state.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from ztviewer.codec import Component, Problem, Tensor, TensorFile
from ztviewer.codec.digest_state import DigestState
from ztviewer.session.digest_states import DigestStates
from ztviewer.session.file_session import FileSession
from ztviewer.session.tree_marks import FILE_POSITION
from ztviewer.session.tree_nodes import FILE_ID, NodeKind, TensorGroup, kind_of, tensor_id
from ztviewer.session.tree_state import DigestUpdates, TreeItem, TreeState

from . import tree_text
from .tree_roles import COLUMN_COUNT, HEADERS, Column, TreeRole

AnyIndex = QModelIndex | QPersistentModelIndex
_COLUMNS = tuple(Column)
_DIGEST_ROLES = [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.ToolTipRole]
_PROBLEM_ROLES = [Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.ToolTipRole]
_EDIT_ROLES = [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ForegroundRole,
               Qt.ItemDataRole.ToolTipRole]


class TensorTreeModel(QAbstractItemModel):
    """Tree model of one :class:`TensorFile`.

    Parameters
    ----------
    tensor_file:
        The opened file (its tensors are never modified here).
    grouped:
        Insert one level per dotted name prefix between the file and its tensors.
    session:
        The file's :class:`~ztviewer.session.file_session.FileSession`, whose tree state this model shows (a
        session of its own when not given).
    """

    def __init__(self, tensor_file: TensorFile, grouped: bool = False, parent: QObject | None = None,
                 session: FileSession | None = None) -> None:
        super().__init__(parent)
        self.session = session if session is not None else FileSession(tensor_file)
        self.state: TreeState = self.session.tree
        self.state.set_grouped(grouped)
        self.tensor_file = tensor_file
        self.tensors = tensor_file.tensors
        self.digests: DigestStates = self.session.digests
        self._moving: list[QModelIndex] = []   # the persistent indexes a sort moves
        self._moving_nodes: list[tuple[int, int]] = []
        state = self.state
        state.reordering.connect(self._on_reordering)
        state.reordered.connect(self._on_reordered)
        state.regrouping.connect(lambda _grouped: self.beginResetModel())
        state.regrouped.connect(lambda _grouped: self.endResetModel())
        state.edits_marked.connect(self._repaint_edited)
        state.problems_found.connect(self._repaint_problems)
        state.digest_rows_changed.connect(self._repaint_digests)

    # -- codec objects behind indexes --------------------------------------------------------------------
    def item(self, index: AnyIndex) -> TreeItem | None:
        return self.state.item(index.internalId()) if index.isValid() else None

    def tensor_at(self, index: AnyIndex) -> Tensor | None:
        """The tensor of a tensor row, or the tensor owning a component row (``None`` for other rows)."""
        return self.state.tensor_of(index.internalId()) if index.isValid() else None

    tensor_of = tensor_at

    def shown_names(self) -> list[str]:
        """Every tensor's name as the name column shows it, by position: pending renames applied."""
        return self.state.shown_names()

    def group(self, node_id: int) -> TensorGroup:
        return self.state.group(node_id)

    def kind(self, index: AnyIndex) -> NodeKind | None:
        return kind_of(index.internalId()) if index.isValid() else None

    def file_index(self) -> QModelIndex:
        return self.createIndex(0, 0, FILE_ID)

    def index_of(self, tensor: Tensor, role: str | None = None, column: int = 0) -> QModelIndex:
        """The index of a tensor (or of one of its components)."""
        node = self.state.node_of(tensor, role)
        return QModelIndex() if node is None else self.index_for_node(node, column)

    def index_for_node(self, node: int, column: int = 0) -> QModelIndex:
        """The index of a row known by its internal id (ids stay the same when rows are sorted)."""
        return self.createIndex(self.state.row_of(node), column, node)

    def child_node(self, parent: AnyIndex, row: int) -> int:
        """Internal id of a child row without making an index (used by the filter proxy)."""
        return self.state.child(parent.internalId(), row) if parent.isValid() else FILE_ID

    @property
    def grouped(self) -> bool:
        return self.state.grouped

    def set_grouped(self, grouped: bool) -> None:
        self.state.set_grouped(grouped)

    # -- marks ---------------------------------------------------------------------------------------------
    def problems_of(self, item: Tensor | TensorFile) -> list[Problem]:
        """The reader's problems of a tensor (or the file) plus those found since (decoding, Check File)."""
        return self.state.problems_of(item)

    def add_found_problems(self, problems: list[Problem]) -> None:
        """Mark the tensors (or the file) a later pass found problems in (their name cells are painted again)."""
        self.state.add_found_problems(problems)

    def digest_state(self, tensor: Tensor, component: Component) -> DigestState:
        return self.digests.of(tensor, component)

    def group_state(self, group: TensorGroup) -> DigestState:
        return self.state.group_state(group)

    def set_digest_states(self, updates: DigestUpdates) -> None:
        """Record verification results in the session (which has the changed rows repainted)."""
        self.session.set_digest_states(updates)

    def _repaint_problems(self, positions: list[int]) -> None:
        for position in positions:
            index = self.file_index() if position == FILE_POSITION else self.index_for_node(tensor_id(position))
            self.dataChanged.emit(index, index, _PROBLEM_ROLES)

    def _repaint_edited(self, positions: list[int]) -> None:
        for position in positions:
            first = self.index_for_node(tensor_id(position))
            self.dataChanged.emit(first, first.siblingAtColumn(COLUMN_COUNT - 1), _EDIT_ROLES)

    def _repaint_digests(self, rows: dict[int, list[int]]) -> None:
        """Repaint the digest cells of changed rows that can be on screen."""
        top = self.createIndex(0, Column.DIGEST, FILE_ID)
        self.dataChanged.emit(top, top, _DIGEST_ROLES)
        child = self.state.child
        for parent, changed_rows in rows.items():
            if changed_rows:
                first, last = min(changed_rows), max(changed_rows)
                self.dataChanged.emit(self.createIndex(first, Column.DIGEST, child(parent, first)),
                                      self.createIndex(last, Column.DIGEST, child(parent, last)), _DIGEST_ROLES)

    # -- structure -----------------------------------------------------------------------------------------
    # The methods below run once per row whenever a view lays out an expanded node (100,000 times for a
    # big file), so they stay short. ``flags`` is not overridden: the view asks it twice per row, and the base
    # class answers "enabled, selectable" for every row without Python.
    def index(self, row: int, column: int, parent: AnyIndex = QModelIndex()) -> QModelIndex:
        if row < 0 or not 0 <= column < COLUMN_COUNT:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(0, column, FILE_ID) if row == 0 else QModelIndex()
        if parent.column() != 0:
            return QModelIndex()
        try:
            return self.createIndex(row, column, self.state.child(parent.internalId(), row))
        except IndexError:
            return QModelIndex()

    def parent(self, index: AnyIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # QObject.parent() too
        if not index.isValid():
            return QModelIndex()
        node = self.state.parent_of(index.internalId())
        return QModelIndex() if node is None else self.createIndex(self.state.row_of(node), 0, node)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        if not parent.isValid():
            return 1
        return 0 if parent.column() != 0 else self.state.row_count(parent.internalId())

    def hasChildren(self, parent: AnyIndex = QModelIndex()) -> bool:
        column = parent.column()    # -1: the root (invalid) index, whose child is the file row
        return column < 0 or (column == 0 and self.state.has_children(parent.internalId()))

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return COLUMN_COUNT

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < COLUMN_COUNT:
            if role == Qt.ItemDataRole.DisplayRole:
                return HEADERS[Column(section)]
            if role == Qt.ItemDataRole.TextAlignmentRole and section in (Column.STORED, Column.OFFSET):
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node = index.internalId()
        if role == TreeRole.ITEM:
            return self.state.item(node)
        if role == TreeRole.KIND:
            return kind_of(node).value
        if role == TreeRole.TENSOR:
            return self.state.tensor_of(node)
        if role not in tree_text.CELL_ROLES:
            if role == Qt.ItemDataRole.FontRole and index.column() == Column.NAME:
                return tree_text.edit_font(self.state, node)
            return None
        return tree_text.cell(self.state, node, _COLUMNS[index.column()], role)

    # -- sorting -------------------------------------------------------------------------------------------
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort tensors by a column (``-1``: manifest order); see :meth:`TreeState.sort`."""
        self.state.sort(column, order == Qt.SortOrder.DescendingOrder)

    def _on_reordering(self, _: None) -> None:
        self.layoutAboutToBeChanged.emit()
        self._moving = self.persistentIndexList()
        self._moving_nodes = [(p.internalId(), p.column()) for p in self._moving]

    def _on_reordered(self, _: None) -> None:
        self.changePersistentIndexList(self._moving, [self.index_for_node(n, c) for n, c in self._moving_nodes])
        self._moving, self._moving_nodes = [], []
        self.layoutChanged.emit()


__all__ = ["HEADERS", "Column", "TensorTreeModel", "TreeRole"]
