"""The tensor tree of one open file without Qt: its rows (file → dotted-prefix groups → tensors → components),
their order, grouping and filter, and the marks on them (digest states, problems found, pending edits).

Rows are node ids (see :mod:`.tree_nodes`); nothing is built per row in advance, so 100,000 tensors cost only
the rows a view asks for. Sorting happens here, on whole columns at once. A Qt model renders this state and sends
the user's intent (sort, group, filter) back; every change is announced on an :class:`~.events.Event` *before*
(``reordering``, ``regrouping``, ``filter_changing``) and after it, so a Qt model can bracket it with its own
signals.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ztviewer.codec import Component, Problem, Tensor, TensorFile
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.errors import Severity
from ztviewer.codec.tensor_queries import component_counts, tensor_names, tensor_positions

from .digest_states import DigestStates
from .edit_session import EditSession
from .events import Event
from .formatting import part_of, plural
from .tree_columns import Column, sort_key, sort_keys
from .tree_filter import NameFilter
from .tree_groups import GroupTotals
from .tree_marks import FILE_POSITION, FoundProblems, PendingNames
from .tree_nodes import (
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

TreeItem = TensorFile | TensorGroup | Tensor | Component
DigestUpdates = list[tuple[Tensor, str, DigestState]]
AUTO_GROUP_TENSORS = 20_000     # files with more tensors open grouped by name prefix
EXPAND_MATCHES = 200            # a filter leaving at most this many tensors has their groups expanded


def opens_grouped(tensor_count: int) -> bool:
    """Whether a file of ``tensor_count`` tensors opens grouped by name prefix (a flat list would be too long)."""
    return tensor_count > AUTO_GROUP_TENSORS


class TreeState:
    """Rows, order, grouping, filter and marks of one file's tensor tree.

    Parameters
    ----------
    tensor_file:
        The opened file (its tensors are never modified here).
    digests:
        The verification states the digest column shows (the file session's).
    edits:
        The file's unsaved edits, whose renames and deletions the name column shows (None: not editable).

    Events: ``reordering`` / ``reordered`` around a sort; ``regrouping`` / ``regrouped(grouped)`` around grouping
    on or off (every group and tensor row moves); ``filter_changing`` / ``filter_changed(pattern)`` around a new
    match; ``names_changed`` after a pending rename changed a shown name (the filter matched again and, sorted by name,
    the rows moved first);
    ``edits_marked(positions)``, ``problems_found(positions)`` (``FILE_POSITION``: the file row) and
    ``digest_rows_changed({parent node: [rows]})`` name the rows to paint again.
    """

    def __init__(self, tensor_file: TensorFile, digests: DigestStates, edits: EditSession | None = None,
                 name_order: list[int] | None = None) -> None:
        self.tensor_file = tensor_file
        self.tensors = tensor_file.tensors
        self._name_order = name_order if name_order is not None and len(name_order) == len(self.tensors) else None
        self.digests = digests
        self.positions = tensor_positions(self.tensors)  # a table's tensors are built only when shown
        self.component_counts = component_counts(self.tensors)
        self._roles: dict[int, list[str]] = {}      # position -> component roles, for tensors shown expanded
        self.order = list(range(len(self.tensors)))  # row -> position (ungrouped)
        self.rank = list(self.order)                 # position -> row (ungrouped)
        self.sort_column = -1
        self.descending = False
        self._digests_changed = False                # since the last sort
        self.grouping: Grouping | None = None
        self.components_shown: set[int] = set()     # tensors whose component rows were ever asked for
        self.found = FoundProblems(self.tensors)
        self.pending = PendingNames(self.tensors, edits)
        self.filter = NameFilter()
        self.group_totals = GroupTotals(self.tensors, digests, self.filter)
        self.reordering: Event[None] = Event("tree.reordering")
        self.reordered: Event[None] = Event("tree.reordered")
        self.regrouping: Event[bool] = Event("tree.regrouping")
        self.regrouped: Event[bool] = Event("tree.regrouped")
        self.filter_changing: Event[str] = Event("tree.filter_changing")
        self.filter_changed: Event[str] = Event("tree.filter_changed")
        self.names_changed: Event[None] = Event("tree.names_changed")
        self.edits_marked: Event[list[int]] = Event("tree.edits_marked")
        self.problems_found: Event[list[int]] = Event("tree.problems_found")
        self.digest_rows_changed: Event[dict[int, list[int]]] = Event("tree.digest_rows_changed")
        if edits is not None:
            edits.changed.connect(self._on_edits_changed)

    # -- what a row shows --------------------------------------------------------------------------------
    def item(self, node: int) -> TreeItem:
        """The codec object (or group) behind a row."""
        kind = kind_of(node)
        if kind is NodeKind.FILE:
            return self.tensor_file
        if kind is NodeKind.GROUP:
            return self._groups().group(node)
        position = tensor_position(node)
        tensor = self.tensors[position]
        if kind is NodeKind.TENSOR:
            return tensor
        return tensor.components[self.roles_of(position)[component_slot(node)]]

    def tensor_of(self, node: int) -> Tensor | None:
        """The tensor of a tensor row, or the tensor owning a component row (``None`` for other rows)."""
        if node == FILE_ID or node & GROUP_FLAG:
            return None
        return self.tensors[tensor_position(node)]

    def roles_of(self, position: int) -> list[str]:
        roles = self._roles.get(position)
        if roles is None:
            roles = self._roles[position] = list(self.tensors[position].components)
        return roles

    def group(self, node: int) -> TensorGroup:
        return self._groups().group(node)

    def _groups(self) -> Grouping:
        if self.grouping is None:
            raise LookupError("the tree is not grouped")
        return self.grouping

    def node_of(self, tensor: Tensor, role: str | None = None) -> int | None:
        """The node id of a tensor's row (or of one of its components' rows); ``None`` when it has none."""
        position = self.positions.get(id(tensor))
        if position is None:
            return None
        if role is None:
            return tensor_id(position)
        if role not in tensor.components:
            return None
        return component_id(position, self.roles_of(position).index(role))

    def row_of(self, node: int) -> int:
        """The row of a node under its parent (ids stay the same when rows are sorted)."""
        if node == FILE_ID:
            return 0
        if node & SLOT_MASK:
            return component_slot(node)
        return self.place(node)[1]

    def name_of(self, tensor: Tensor) -> str:
        """The tensor's whole name as the user sees it (a pending rename applied): what the filter matches and
        sorting by name orders by (see :meth:`PendingNames.name`)."""
        position = self.positions.get(id(tensor))
        return tensor.name if position is None else self.pending.name(position, tensor.name)

    def shown_name(self, tensor: Tensor) -> str:
        """The text of the tensor's name cell: :meth:`name_of`, shortened to its last dotted part below its group
        when grouped (a tensor an unsaved edit renames or deletes shows its whole name: it may not fit its group)."""
        if self.pending_name(tensor)[0]:
            return self.name_of(tensor)
        return tensor.name if self.grouping is None else tensor.name.rsplit(".", 1)[-1]

    def sort_key(self, tensor: Tensor, column: Column) -> Any:
        """What ``tensor`` sorts by in ``column``, as :meth:`sort` orders it (by name: :meth:`name_of`)."""
        return sort_key(tensor, column, self.digests, self.name_of(tensor))

    # -- structure ---------------------------------------------------------------------------------------
    def place(self, node: int) -> tuple[int, int]:
        """(parent node, row) of a tensor or group node."""
        if node & GROUP_FLAG:
            return self._groups().place_of_group(node)
        position = tensor_position(node)
        if self.grouping is not None:
            return self.grouping.place_of_tensor(position)
        return FILE_ID, self.rank[position]

    def parent_of(self, node: int) -> int | None:
        """The parent node of a row (``None`` for the file row)."""
        if node == FILE_ID:
            return None
        if node & SLOT_MASK:
            return node & ~SLOT_MASK
        return self.place(node)[0]

    # The three methods below run once per row whenever a view lays out an expanded node (100,000 times for a
    # big file), so they avoid helper calls and enum arithmetic.
    def child(self, node: int, row: int) -> int:
        """Id of child ``row`` of ``node``; IndexError when there is no such row."""
        grouping = self.grouping
        if node == FILE_ID:
            return grouping.root[row] if grouping is not None else (self.order[row] + 1) << 8
        if node & GROUP_FLAG:
            return grouping.children(node)[row]  # type: ignore[union-attr]  # a group node exists only grouped
        position = (node >> 8) - 1
        if node & SLOT_MASK or row >= self.component_counts[position]:
            raise IndexError(row)
        self.components_shown.add(position)
        return node | (row + 1)

    def row_count(self, node: int) -> int:
        if node == FILE_ID:
            return len(self.grouping.root) if self.grouping is not None else len(self.tensors)
        if node & GROUP_FLAG:
            return len(self._groups().children(node))
        return 0 if node & SLOT_MASK else self.component_counts[(node >> 8) - 1]

    def has_children(self, node: int) -> bool:
        if node == FILE_ID:
            return bool(self.tensors)
        if node & GROUP_FLAG:
            return True   # a group always has members; do not build it to find out
        return not node & SLOT_MASK and self.component_counts[(node >> 8) - 1] > 0

    # -- sorting and grouping ----------------------------------------------------------------------------
    def sort(self, column: int, descending: bool = False) -> bool:
        """Sort tensors by a column (``-1``: manifest order); components keep their manifest order. Returns whether
        the rows moved: the order in force is not sorted again (a view asks for it whenever it is given the
        model), unless it is by digest state and verification changed states since."""
        if (column, descending) == (self.sort_column, self.descending) and not (
                column == Column.DIGEST and self._digests_changed):
            return False
        self._reorder(column, descending)
        return True

    def _reorder(self, column: int, descending: bool) -> None:
        """Order the rows by ``column``, its keys read afresh."""
        self._digests_changed = False
        self.reordering.emit(None)
        if column < 0:
            self.order = list(range(len(self.tensors)))
        elif column == Column.NAME and not descending and not self.pending.state and self._name_order is not None:
            self.order = list(self._name_order)      # the names as in the file, sorted by the open worker
        else:
            names = self.shown_names() if column == Column.NAME and self.pending.state else None
            keys = sort_keys(self.tensors, Column(column), self.digests, names)
            self.order = sorted(range(len(self.tensors)), key=keys.__getitem__, reverse=descending)
        for rank, position in enumerate(self.order):
            self.rank[position] = rank
        self.sort_column, self.descending = column, descending
        if self.grouping is not None:
            self.grouping.resort(self.rank, self._groups_descending())
        self.reordered.emit(None)

    def _groups_descending(self) -> bool:
        return self.descending and self.sort_column == Column.NAME

    @property
    def grouped(self) -> bool:
        return self.grouping is not None

    def set_grouped(self, grouped: bool) -> None:
        """Insert (or remove) one level per dotted name prefix between the file and its tensors."""
        if grouped == self.grouped:
            return
        self.regrouping.emit(grouped)
        # Groups follow the stored names, not the pending ones the name cell shows, the filter matches and sorting
        # orders by: the tree is the file as stored with its unsaved edits marked on it (a deleted tensor stays,
        # struck out; a renamed one stays in its group under its whole new name, "renamed from" in its tip) until
        # the save reopens the file. Moving rows between groups would regroup on every rename, undo and redo: a
        # model reset that closes every expanded group, with the row just renamed (F2 renames the current one)
        # taken away from where the user is looking (and ~60 ms per 100,000 tensors to group again).
        self.grouping = Grouping(tensor_names(self.tensors), self.rank, self._groups_descending()) if grouped else None
        self.group_totals.forget()        # groups are numbered anew
        self.regrouped.emit(grouped)

    # -- filter ------------------------------------------------------------------------------------------
    @property
    def pattern(self) -> str:
        return self.filter.pattern

    def set_pattern(self, pattern: str) -> None:
        """Show only tensors whose shown name matches ``pattern`` (substring or glob; blank: all)."""
        if pattern != self.filter.pattern:
            self._match(pattern)

    def refilter(self) -> None:
        """Match the pattern again (the names the tree shows changed)."""
        self._match(self.filter.pattern)

    def _match(self, pattern: str) -> None:
        self.filter_changing.emit(pattern)
        self.filter.match(pattern, self.pending.shown_names)
        self.group_totals.forget()
        self.filter_changed.emit(pattern)

    def match_count(self) -> int:
        matches = self.filter.matches
        return len(self.tensors) if matches is None else len(matches)

    def count_text(self) -> str:
        """How many tensors the file holds (``35 tensors``); under a filter, those shown among them
        (``12 of 35 tensors``), as a group row says its own (:meth:`GroupTotals.count_text`)."""
        if not self.filter.active:
            return plural(len(self.tensors), "tensor")
        return part_of(self.match_count(), len(self.tensors), "tensor")

    def match_text(self) -> str:
        """:meth:`count_text` while a filter hides rows (``12 of 35 tensors``), else nothing."""
        return self.count_text() if self.filter.active else ""

    def expands_matches(self) -> bool:
        """Whether the groups holding the matches are shown expanded (few enough matches in a grouped tree)."""
        return bool(self.filter.pattern) and self.grouped and self.match_count() <= EXPAND_MATCHES

    def accepts(self, node: int) -> bool:
        """Whether the filter shows a row: a matching tensor, a group holding one, the file, every component."""
        matches = self.filter.matches
        if matches is None or node == FILE_ID:
            return True
        if node & GROUP_FLAG:
            return self.group_totals.has_shown(self._groups().group(node))
        return bool(node & SLOT_MASK) or tensor_position(node) in matches

    # -- marks -------------------------------------------------------------------------------------------
    def digest_state(self, tensor: Tensor, component: Component) -> DigestState:
        return self.digests.of(tensor, component)

    def group_state(self, group: TensorGroup) -> DigestState:
        """The worst digest state among the tensors shown under a group (:class:`GroupTotals`)."""
        return self.group_totals.digest_state(group)

    def on_digests_changed(self, updates: DigestUpdates) -> None:
        """Verification changed states: name the digest cells to paint again, those of rows that can be on
        screen (the file row, every changed tensor's row up its groups, component rows ever shown)."""
        self._digests_changed = True
        self.group_totals.forget_states()
        rows: dict[int, list[int]] = {FILE_ID: []}    # parent node -> changed child rows
        for tensor, role, _state in updates:
            position = self.positions[id(tensor)]
            if position in self.components_shown:
                rows.setdefault(tensor_id(position), []).append(self.roles_of(position).index(role))
            grouping = self.grouping
            place = grouping.known_place(position) if grouping is not None else (FILE_ID, self.rank[position])
            while place is not None:
                parent, row = place
                rows.setdefault(parent, []).append(row)
                place = None if parent == FILE_ID else self._groups().place_of_group(parent)
        self.digest_rows_changed.emit(rows)

    def problems_of(self, item: Tensor | TensorFile) -> list[Problem]:
        """The reader's problems of a tensor (or the file) plus those found since (decoding, Check File)."""
        if isinstance(item, TensorFile):
            return self.found.of_file(item)
        return self.found.of_tensor(self.positions.get(id(item)), item)

    def problem_level(self, item: Tensor | TensorFile) -> Severity | None:
        """The worst severity of :meth:`problems_of` without building it (asked for every row painted)."""
        if isinstance(item, TensorFile):
            return self.found.level(FILE_POSITION, item.problems)
        return self.found.level(self.positions.get(id(item)), item.problems)

    def add_found_problems(self, problems: Sequence[Problem]) -> None:
        """Mark the tensors (or the file) a later pass found problems in."""
        touched = self.found.add(problems)
        if touched:
            self.problems_found.emit(touched)

    def pending_name(self, tensor: Tensor) -> tuple[bool, str | None]:
        """``(True, new name)`` for a tensor an unsaved edit renames (``(True, None)``: deletes), else
        ``(False, None)``."""
        state = self.pending.state
        if not state:
            return False, None
        position = self.positions.get(id(tensor))
        if position is None or position not in state:
            return False, None
        return True, state[position]

    def shown_names(self) -> list[str]:
        """Every tensor's name as the name column shows it, by position: pending renames applied."""
        return self.pending.shown_names()

    def close(self) -> None:
        """Stop following the edits and forget every view (the file's tab is closing)."""
        if self.pending.edits is not None:
            self.pending.edits.changed.disconnect(self._on_edits_changed)
        for event in (self.reordering, self.reordered, self.regrouping, self.regrouped, self.filter_changing,
                      self.filter_changed, self.names_changed, self.edits_marked, self.problems_found,
                      self.digest_rows_changed):
            event.disconnect_all()

    def _on_edits_changed(self, _: None) -> None:
        changed, names_changed = self.pending.refresh()
        if names_changed:
            if self.filter.active:
                self.refilter()
            if self.sort_column == Column.NAME:     # sorted by the names shown: some moved
                self._reorder(self.sort_column, self.descending)
            self.names_changed.emit(None)
        if changed:
            self.edits_marked.emit(changed)
