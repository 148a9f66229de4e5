"""What a group row of the tensor tree totals: the tensors shown under it, i.e. the filter's matches among its
members (all of them without a filter), their count, stored bytes and digest state (Qt-free).

Totals are computed the first time a group row is painted and kept until the filter, the grouping or (for digest
states) verification changes them. Whether a group shows anything at all (the filter proxy asks it of every group
row it lays out) comes from the same record of shown positions.
"""
from __future__ import annotations

from collections.abc import Sequence

from ztviewer.codec import Tensor
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.tensor_queries import stored_nbytes

from .digest_states import DigestStates
from .formatting import exact_bytes, part_of, plural
from .tree_filter import NameFilter
from .tree_nodes import TensorGroup


class GroupTotals:
    """Count, stored bytes and digest state of each group's shown tensors, as its row says them."""

    def __init__(self, tensors: Sequence[Tensor], digests: DigestStates, name_filter: NameFilter) -> None:
        self.tensors = tensors
        self.digests = digests
        self.filter = name_filter
        self._shown: dict[int, list[int]] = {}     # group node id -> positions shown (only under a filter)
        self._bytes: dict[tuple[int, bool], int] = {}
        self._states: dict[int, DigestState] = {}

    def forget(self) -> None:
        """The filter matched anew or the groups were numbered anew."""
        self._shown.clear()
        self._bytes.clear()
        self._states.clear()

    def forget_states(self) -> None:
        """Verification changed digest states."""
        self._states.clear()

    def has_shown(self, group: TensorGroup) -> bool:
        """Whether the filter shows any of the group's tensors (always, without a filter).

        Asked of every group row a view lays out, most of which are never painted: a group without a match keeps
        its empty :meth:`shown` at once, one with a match answers by a membership test that stops at the first
        match until a painted row has built its list (100,000 tensors in 2,002 groups, every group asked: 2-6 ms;
        building every list here took 10-19 ms).
        """
        matches = self.filter.matches
        if matches is None:
            return True
        shown = self._shown.get(group.node_id)
        if shown is not None:
            return bool(shown)
        if matches.isdisjoint(group.members):
            self._shown[group.node_id] = []
            return False
        return True

    def shown(self, group: TensorGroup) -> Sequence[int]:
        """Positions of the group's tensors the filter shows (every member without a filter)."""
        matches = self.filter.matches
        if matches is None:
            return group.members
        shown = self._shown.get(group.node_id)
        if shown is None:
            shown = self._shown[group.node_id] = [p for p in group.members if p in matches]
        return shown

    def count_text(self, group: TensorGroup) -> str:
        """``12 tensors``; under a filter, those shown among them: ``3 of 12 tensors``."""
        total = len(group.members)
        if self.filter.matches is None:
            return plural(total, "tensor")
        return part_of(len(self.shown(group)), total, "tensor")

    def stored_nbytes(self, group: TensorGroup, shown: bool = True) -> int:
        """Stored bytes of the group's shown tensors (``shown=False``: of all its members)."""
        only_shown = shown and self.filter.matches is not None
        key = (group.node_id, only_shown)
        total = self._bytes.get(key)
        if total is None:
            members = self.shown(group) if only_shown else group.members
            total = self._bytes[key] = stored_nbytes(self.tensors, members)
        return total

    def bytes_tip(self, group: TensorGroup) -> str:
        """The exact stored bytes of a group; under a filter, of its shown tensors and of all of them."""
        whole = exact_bytes(self.stored_nbytes(group, shown=False))
        if self.filter.matches is None:
            return whole
        shown = len(self.shown(group))
        return (f"{exact_bytes(self.stored_nbytes(group))} in the {plural(shown, 'tensor')} shown\n"
                f"{whole} in the whole group ({plural(len(group.members), 'tensor')})")

    def digest_state(self, group: TensorGroup) -> DigestState:
        """The worst digest state among the group's shown tensors."""
        state = self._states.get(group.node_id)
        if state is None:
            state = self._states[group.node_id] = self.digests.of_members(self.tensors, self.shown(group))
        return state
