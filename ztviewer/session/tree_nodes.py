"""Node identities of the tensor tree, and the lazily built dotted-prefix grouping.

No node objects exist for tensors or components: a ``QModelIndex``'s internal id encodes what it shows.

=============  ================================================
file           ``FILE_ID``
group          ``GROUP_FLAG | group number << 8``
tensor         ``(position + 1) << 8``  (position in ``TensorFile.tensors``)
component      ``(position + 1) << 8 | (slot + 1)``  (slot in the tensor's components)
=============  ================================================
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .formatting import natural_key

FILE_ID = 1 << 61
GROUP_FLAG = 1 << 60
SLOT_MASK = 0xFF


class NodeKind(str, Enum):
    FILE = "file"
    GROUP = "group"
    TENSOR = "tensor"
    COMPONENT = "component"


def kind_of(node_id: int) -> NodeKind:
    if node_id == FILE_ID:
        return NodeKind.FILE
    if node_id & GROUP_FLAG:
        return NodeKind.GROUP
    return NodeKind.COMPONENT if node_id & SLOT_MASK else NodeKind.TENSOR


def tensor_id(position: int) -> int:
    return (position + 1) << 8


def component_id(position: int, slot: int) -> int:
    return ((position + 1) << 8) | (slot + 1)


def tensor_position(node_id: int) -> int:
    return ((node_id & ~GROUP_FLAG) >> 8) - 1


def component_slot(node_id: int) -> int:
    return (node_id & SLOT_MASK) - 1


@dataclass(eq=False, slots=True)
class TensorGroup:
    """A dotted name prefix (``model.layers.0``) and the tensors whose names continue it."""

    prefix: str
    label: str
    depth: int
    members: list[int]
    node_id: int
    parent_id: int
    row: int = 0
    children: list[int] | None = None


@dataclass(slots=True)
class Grouping:
    """Groups tensors by dotted prefix; each group's children are built the first time they are asked for.

    ``rank`` gives each tensor position its place in the current sort order; leaves sort by it, groups by
    their label in natural order (reversed when ``descending``).
    """

    names: Sequence[str]
    rank: Sequence[int]
    descending: bool = False
    groups: list[TensorGroup] = field(default_factory=list)
    root: list[int] = field(default_factory=list)
    _tensor_place: dict[int, tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = self._partition(FILE_ID, "", 0, range(len(self.names)))

    def group(self, node_id: int) -> TensorGroup:
        return self.groups[(node_id & ~GROUP_FLAG) >> 8]

    def children(self, parent_id: int) -> list[int]:
        if parent_id == FILE_ID:
            return self.root
        group = self.group(parent_id)
        if group.children is None:
            group.children = self._partition(group.node_id, group.prefix + ".", group.depth, group.members)
        return group.children

    def place_of_tensor(self, position: int) -> tuple[int, int]:
        """(parent id, row) of a tensor, building the groups on its path as needed."""
        place = self._tensor_place.get(position)
        if place is None:
            parent = FILE_ID
            for label in self.names[position].split(".")[:-1]:
                parent = next(c for c in self.children(parent) if c & GROUP_FLAG and self.group(c).label == label)
            self.children(parent)
            place = self._tensor_place[position]
        return place

    def known_place(self, position: int) -> tuple[int, int] | None:
        """(parent id, row) of a tensor whose group has been built, else ``None`` (no index can exist)."""
        return self._tensor_place.get(position)

    def place_of_group(self, group_id: int) -> tuple[int, int]:
        group = self.group(group_id)
        return group.parent_id, group.row

    def resort(self, rank: Sequence[int], descending: bool) -> None:
        self.rank, self.descending = rank, descending
        self._order_children(FILE_ID, self.root)
        for group in self.groups:
            if group.children is not None:
                self._order_children(group.node_id, group.children)

    # -- building --------------------------------------------------------------------------------------------
    def _partition(self, parent_id: int, prefix: str, depth: int, members: Sequence[int]) -> list[int]:
        subgroups: dict[str, list[int]] = {}
        leaves: list[int] = []
        for position in members:
            parts = self.names[position].split(".", depth + 1)
            if len(parts) <= depth + 1:
                leaves.append(tensor_id(position))
            else:
                subgroups.setdefault(parts[depth], []).append(position)
        children = leaves
        for label, group_members in subgroups.items():
            group = TensorGroup(prefix + label, label, depth + 1, group_members, GROUP_FLAG | len(self.groups) << 8,
                                parent_id)
            self.groups.append(group)
            children.append(group.node_id)
        self._order_children(parent_id, children)
        return children

    def _order_children(self, parent_id: int, children: list[int]) -> None:
        children.sort(key=self._child_key)
        for row, child in enumerate(children):
            if child & GROUP_FLAG:
                self.group(child).row = row
            else:
                self._tensor_place[tensor_position(child)] = (parent_id, row)

    def _child_key(self, node_id: int) -> tuple[int, Any]:
        if node_id & GROUP_FLAG:
            key = natural_key(self.group(node_id).label)
            return (0, _Reversed(key) if self.descending else key)
        return (1, self.rank[tensor_position(node_id)])


class _Reversed:
    """Wraps a key so that sorting ascending orders it descending."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[int | str, ...]) -> None:
        self.key = key

    def __lt__(self, other: _Reversed) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and other.key == self.key
