"""The tensor tree: file → (dotted-prefix groups) → tensors → components, over the codec model.

A thin adapter: :meth:`TensorTreeModel.item` returns the codec object behind an index. Nothing is built per
row in advance (see :mod:`.tree_nodes`), so 100,000 tensors cost only the rows on screen. Sorting happens
here, on whole columns at once, because a proxy comparing rows through Python ``data()`` calls would take
seconds on large files; :class:`~.tree_proxy.TensorFilterProxy` forwards ``sort`` to it.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from ztviewer.codec import Component, Problem, Tensor, TensorFile
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.tensor_table import component_counts, tensor_names, tensor_positions
from ztviewer.session.digest_states import DigestStates
from ztviewer.session.file_session import FileSession
from ztviewer.session.tree_nodes import (
    FILE_ID,
    GROUP_FLAG,
    SLOT_MASK,
    Grouping,
    NodeKind,
    TensorGroup,
    component_id,
    component_slot,
    kind_of,
    tensor_id,
    tensor_position,
)

from . import tree_text
from .tree_roles import COLUMN_COUNT, HEADERS, Column, TreeRole

AnyIndex = QModelIndex | QPersistentModelIndex
_COLUMNS = tuple(Column)
_DIGEST_ROLES = [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.ToolTipRole]


class TensorTreeModel(QAbstractItemModel):
    """Tree model of one :class:`TensorFile`.

    Parameters
    ----------
    tensor_file:
        The opened file (its tensors are never modified here).
    grouped:
        Insert one level per dotted name prefix between the file and its tensors.
    session:
        The file's :class:`~ztviewer.session.file_session.FileSession`, whose verification states the digest
        column shows (a session of its own when not given).
    """

    names_changed = Signal()      # the edit overlay renamed tensors, or undid a rename

    def __init__(self, tensor_file: TensorFile, grouped: bool = False, parent=None,
                 session: FileSession | None = None) -> None:
        super().__init__(parent)
        self.session = session if session is not None else FileSession(tensor_file)
        self.tensor_file = tensor_file
        self.tensors = tensor_file.tensors
        self.digests: DigestStates = self.session.digests
        self.session.digests_changed.connect(self._repaint_digests)
        self._position = tensor_positions(self.tensors)  # a table's tensors are built only when shown
        self._component_counts = component_counts(self.tensors)
        self._roles: dict[int, list[str]] = {}      # position -> component roles, for tensors shown expanded
        self._order = list(range(len(self.tensors)))
        self._rank = list(self._order)
        self._sort = (-1, Qt.SortOrder.AscendingOrder)
        self._digests_changed = False               # since the last sort
        self._grouping: Grouping | None = None
        self._group_states: dict[int, DigestState] = {}
        self._components_shown: set[int] = set()   # tensors whose component rows were ever asked for
        self.edit_overlay = None                     # shows unsaved renames / deletions (gui.editing.tree_edits)
        self._found: dict[int, list[Problem]] = {}  # position -> problems found after opening (decode, check)
        self._found_in_file: list[Problem] = []
        self._by_name: dict[str, int] | None = None
        if grouped:
            self._grouping = Grouping(tensor_names(self.tensors), self._rank)

    def set_edit_overlay(self, overlay) -> None:
        """Show pending renames and deletions through ``overlay`` (its ``data(index, role)`` and ``renamed()``)."""
        self.edit_overlay = overlay

    # -- codec objects behind indexes --------------------------------------------------------------------
    def item(self, index: AnyIndex) -> TensorFile | TensorGroup | Tensor | Component | None:
        if not index.isValid():
            return None
        node = index.internalId()
        kind = kind_of(node)
        if kind is NodeKind.FILE:
            return self.tensor_file
        if kind is NodeKind.GROUP:
            return self._grouping.group(node)
        tensor = self.tensors[tensor_position(node)]
        if kind is NodeKind.TENSOR:
            return tensor
        return tensor.components[self._roles_of(tensor_position(node))[component_slot(node)]]

    def tensor_at(self, index: AnyIndex) -> Tensor | None:
        """The tensor of a tensor row, or the tensor owning a component row (``None`` for other rows)."""
        if not index.isValid() or kind_of(index.internalId()) not in (NodeKind.TENSOR, NodeKind.COMPONENT):
            return None
        return self.tensors[tensor_position(index.internalId())]

    def _roles_of(self, position: int) -> list[str]:
        roles = self._roles.get(position)
        if roles is None:
            roles = self._roles[position] = list(self.tensors[position].components)
        return roles

    def shown_names(self) -> list[str]:
        """Every tensor's name as the name column shows it, by position: pending renames applied."""
        names = tensor_names(self.tensors)
        if self.edit_overlay is not None:
            for key, new_name in self.edit_overlay.renamed().items():
                names[self._position[key]] = new_name
        return names

    def group(self, node_id: int) -> TensorGroup:
        return self._grouping.group(node_id)

    def kind(self, index: AnyIndex) -> NodeKind | None:
        return kind_of(index.internalId()) if index.isValid() else None

    def tensor_of(self, index: AnyIndex) -> Tensor | None:
        kind = self.kind(index)
        if kind in (NodeKind.TENSOR, NodeKind.COMPONENT):
            return self.tensors[tensor_position(index.internalId())]
        return None

    def file_index(self) -> QModelIndex:
        return self.createIndex(0, 0, FILE_ID)

    def index_of(self, tensor: Tensor, role: str | None = None, column: int = 0) -> QModelIndex:
        """The index of a tensor (or of one of its components)."""
        position = self._position.get(id(tensor))
        if position is None:
            return QModelIndex()
        if role is not None:
            if role not in tensor.components:
                return QModelIndex()
            slot = self._roles_of(position).index(role)
            return self.createIndex(slot, column, component_id(position, slot))
        _, row = self._place(tensor_id(position))
        return self.createIndex(row, column, tensor_id(position))

    @property
    def grouped(self) -> bool:
        return self._grouping is not None

    def set_grouped(self, grouped: bool) -> None:
        if grouped == self.grouped:
            return
        self.beginResetModel()
        self._grouping = None
        if grouped:
            self._grouping = Grouping(tensor_names(self.tensors), self._rank,
                                      self._sort[1] == Qt.SortOrder.DescendingOrder and self._sort[0] == Column.NAME)
        self._group_states.clear()
        self.endResetModel()

    # -- problems found after opening ---------------------------------------------------------------------
    def problems_of(self, item: Tensor | TensorFile) -> list[Problem]:
        """The reader's problems of a tensor (or the file) plus those found since (decoding, Check File)."""
        if isinstance(item, TensorFile):
            return item.problems + self._found_in_file
        found = self._found.get(self._position.get(id(item), -1))
        return item.problems + found if found else item.problems

    def add_found_problems(self, problems: list[Problem]) -> None:
        """Mark the tensors (or the file) a later pass found problems in, and repaint their name cells."""
        if self._by_name is None:
            self._by_name = {}
            for position, tensor in enumerate(self.tensors):
                self._by_name.setdefault(tensor.name, position)
        touched: set[int] = set()
        for problem in problems:
            position = self._by_name.get(problem.tensor) if problem.tensor is not None else None
            known = self._found_in_file if position is None else self._found.setdefault(position, [])
            if problem not in known and (position is None or problem not in self.tensors[position].problems):
                known.append(problem)
                touched.add(-1 if position is None else position)
        for position in touched:
            index = self.file_index() if position < 0 else self.index_of(self.tensors[position])
            self.dataChanged.emit(index, index, [Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.ForegroundRole,
                                                 Qt.ItemDataRole.ToolTipRole])

    # -- digest states -----------------------------------------------------------------------------------
    def digest_state(self, tensor: Tensor, component: Component) -> DigestState:
        return self.digests.of(tensor, component)

    def set_digest_states(self, updates: list[tuple[Tensor, str, DigestState]]) -> None:
        """Record verification results in the session (which has the changed rows repainted)."""
        self.session.set_digest_states(updates)

    def _repaint_digests(self, updates: list[tuple[Tensor, str, DigestState]]) -> None:
        """Repaint the digest cells of changed rows that can be on screen."""
        changed = [(t, r) for t, r, _state in updates]
        self._digests_changed = True
        self._group_states.clear()
        rows: dict[int, list[int]] = {FILE_ID: []}    # parent node -> changed child rows
        for tensor, role in changed:
            position = self._position[id(tensor)]
            if position in self._components_shown:
                rows.setdefault(tensor_id(position), []).append(self._roles_of(position).index(role))
            place = (self._grouping.known_place(position) if self._grouping is not None
                     else (FILE_ID, self._rank[position]))
            while place is not None:
                parent, row = place
                rows.setdefault(parent, []).append(row)
                place = None if parent == FILE_ID else self._grouping.place_of_group(parent)
        top = self.createIndex(0, Column.DIGEST, FILE_ID)
        self.dataChanged.emit(top, top, _DIGEST_ROLES)
        for parent, changed_rows in rows.items():
            if changed_rows:
                first, last = min(changed_rows), max(changed_rows)
                self.dataChanged.emit(self.createIndex(first, Column.DIGEST, self._child(parent, first)),
                                      self.createIndex(last, Column.DIGEST, self._child(parent, last)), _DIGEST_ROLES)

    def group_state(self, group: TensorGroup) -> DigestState:
        state = self._group_states.get(group.node_id)
        if state is None:
            state = self._group_states[group.node_id] = self.digests.of_members(self.tensors, group.members)
        return state

    # -- structure -----------------------------------------------------------------------------------------
    def _place(self, node: int) -> tuple[int, int]:
        """(parent node, row) of a tensor or group node."""
        if node & GROUP_FLAG:
            return self._grouping.place_of_group(node)
        position = tensor_position(node)
        if self._grouping is not None:
            return self._grouping.place_of_tensor(position)
        return FILE_ID, self._rank[position]

    def child_node(self, parent: AnyIndex, row: int) -> int:
        """Internal id of a child row without making an index (used by the filter proxy)."""
        return self._child(parent.internalId(), row) if parent.isValid() else FILE_ID

    # The methods below run once per row whenever a view lays out an expanded node (100,000 times for a
    # big file), so they avoid helper calls and enum arithmetic. ``flags`` is not overridden: the view asks
    # it twice per row, and the base class answers "enabled, selectable" for every row without Python.
    def _child(self, node: int, row: int) -> int:
        """Id of child ``row`` of ``node``; IndexError when there is no such row."""
        if node == FILE_ID:
            return self._grouping.children(FILE_ID)[row] if self._grouping is not None else (self._order[row] + 1) << 8
        if node & GROUP_FLAG:
            return self._grouping.children(node)[row]
        position = (node >> 8) - 1
        if node & SLOT_MASK or row >= self._component_counts[position]:
            raise IndexError(row)
        self._components_shown.add(position)
        return node | (row + 1)

    def index(self, row: int, column: int, parent: AnyIndex = QModelIndex()) -> QModelIndex:
        if row < 0 or not 0 <= column < COLUMN_COUNT:
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(0, column, FILE_ID) if row == 0 else QModelIndex()
        if parent.column() != 0:
            return QModelIndex()
        try:
            return self.createIndex(row, column, self._child(parent.internalId(), row))
        except IndexError:
            return QModelIndex()

    def parent(self, index: AnyIndex = QModelIndex()) -> QModelIndex:
        if not index.isValid():
            return QModelIndex()
        node = index.internalId()
        if node == FILE_ID:
            return QModelIndex()
        if node & SLOT_MASK:
            node &= ~SLOT_MASK
            return self.createIndex(self._place(node)[1], 0, node)
        parent_node = self._place(node)[0]
        if parent_node == FILE_ID:
            return self.createIndex(0, 0, FILE_ID)
        return self.createIndex(self._grouping.group(parent_node).row, 0, parent_node)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        if not parent.isValid():
            return 1
        if parent.column() != 0:
            return 0
        node = parent.internalId()
        if node == FILE_ID:
            return len(self._grouping.root) if self._grouping is not None else len(self.tensors)
        if node & GROUP_FLAG:
            return len(self._grouping.children(node))
        return 0 if node & SLOT_MASK else self._component_counts[(node >> 8) - 1]

    def hasChildren(self, parent: AnyIndex = QModelIndex()) -> bool:
        if not parent.isValid():
            return True
        if parent.column() != 0:
            return False
        node = parent.internalId()
        if node == FILE_ID:
            return bool(self.tensors)
        if node & GROUP_FLAG:
            return True   # a group always has members; do not build it to find out
        return not node & SLOT_MASK and self._component_counts[(node >> 8) - 1] > 0

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return COLUMN_COUNT

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(Column):
            if role == Qt.ItemDataRole.DisplayRole:
                return HEADERS[Column(section)]
            if role == Qt.ItemDataRole.TextAlignmentRole and section in (Column.STORED, Column.OFFSET):
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role == TreeRole.ITEM:
            return self.item(index)
        if role == TreeRole.KIND:
            return kind_of(index.internalId()).value
        if role == TreeRole.TENSOR:
            return self.tensor_of(index)
        if self.edit_overlay is not None:      # pending renames / deletions (gui.editing.tree_edits)
            value = self.edit_overlay.data(index, role)
            if value is not None:
                return value
        if role not in tree_text.CELL_ROLES:
            return None
        return tree_text.cell(self, index, _COLUMNS[index.column()], role)

    # -- sorting -------------------------------------------------------------------------------------------
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort tensors by a column (``-1``: manifest order). Components keep their manifest order.

        The order in force is not sorted again (a view asks for it whenever it is given the model), unless
        it is by digest state and verification changed states since."""
        if (column, order) == self._sort and not (column == Column.DIGEST and self._digests_changed):
            return
        self._digests_changed = False
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        nodes = [(p.internalId(), p.column()) for p in persistent]
        descending = order == Qt.SortOrder.DescendingOrder
        if column < 0:
            self._order = list(range(len(self.tensors)))
        else:
            keys = [tree_text.sort_key(t, Column(column), self.digests) for t in self.tensors]
            self._order = sorted(range(len(self.tensors)), key=keys.__getitem__, reverse=descending)
        for rank, position in enumerate(self._order):
            self._rank[position] = rank
        self._sort = (column, order)
        if self._grouping is not None:
            self._grouping.resort(self._rank, descending and column == Column.NAME)
        self.changePersistentIndexList(persistent, [self.index_for_node(n, c) for n, c in nodes])
        self.layoutChanged.emit()

    def index_for_node(self, node: int, column: int = 0) -> QModelIndex:
        """The index of a row known by its internal id (ids stay the same when rows are sorted)."""
        kind = kind_of(node)
        if kind is NodeKind.FILE:
            return self.createIndex(0, column, node)
        if kind is NodeKind.COMPONENT:
            return self.createIndex(component_slot(node), column, node)
        return self.createIndex(self._place(node)[1], column, node)


__all__ = ["HEADERS", "Column", "TensorTreeModel", "TreeRole"]
