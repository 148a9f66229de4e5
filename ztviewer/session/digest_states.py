"""Per-component digest verification states of one open file, with cheap aggregates for tree rows."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.model import Component, Tensor
from ztviewer.codec.tensor_queries import digest_counts
from ztviewer.codec.tensor_table import TensorTable

# A parent row shows the most important state among its components (higher wins).
PRIORITY = {DigestState.NONE: 0, DigestState.OK: 1, DigestState.UNCHECKED: 2, DigestState.INVALID: 3,
             DigestState.MISMATCH: 4}


def worst(states: Iterable[DigestState]) -> DigestState:
    return max(states, key=PRIORITY.__getitem__, default=DigestState.NONE)


class DigestStates:
    """Digest state per (tensor, role); untouched components are in their initial state."""

    def __init__(self, tensors: Iterable[Tensor]) -> None:
        self._changed: dict[tuple[int, str], DigestState] = {}
        components, recorded = digest_counts(tensors)  # no deferred component or table entry is built for them
        self._totals: Counter[DigestState] = Counter({DigestState.UNCHECKED: recorded,
                                                      DigestState.NONE: components - recorded})

    def of(self, tensor: Tensor, component: Component) -> DigestState:
        return self._changed.get((id(tensor), component.role)) or DigestState.initial(component)

    def of_tensor(self, tensor: Tensor) -> DigestState:
        if not self._changed:      # nothing verified yet: a digest makes it unchecked
            recorded = any(digest is not None for digest in tensor.component_digests())
            return DigestState.UNCHECKED if recorded else DigestState.NONE
        return worst(self.of(tensor, c) for c in tensor.components.values())

    def of_tensors(self, tensors: Iterable[Tensor]) -> DigestState:
        """The most important state among many tensors (stops at the first mismatch)."""
        best, rank = DigestState.NONE, 0
        for tensor in tensors:
            state = self.of_tensor(tensor)
            if PRIORITY[state] > rank:
                best, rank = state, PRIORITY[state]
                if state is DigestState.MISMATCH:
                    break
        return best

    def of_members(self, tensors: Sequence[Tensor], positions: Iterable[int]) -> DigestState:
        """:meth:`of_tensors` of ``tensors[p]`` for each of ``positions``. The tensors a table has not built are
        in their initial state (nobody could verify them): unchecked when the digest column records one."""
        if not isinstance(tensors, TensorTable):
            return self.of_tensors(tensors[p] for p in positions)
        unbuilt, built = tensors.split_built(positions)
        state = self.of_tensors(built)
        digests = tensors.digests
        recorded = unbuilt and digests is not None and any(digests[p] is not None for p in unbuilt)
        return DigestState.UNCHECKED if recorded and PRIORITY[state] < PRIORITY[DigestState.UNCHECKED] else state

    def of_file(self) -> DigestState:
        return worst(s for s, n in self._totals.items() if n)

    def totals(self) -> Counter[DigestState]:
        return Counter({s: n for s, n in self._totals.items() if n})

    def set(self, tensor: Tensor, component: Component, state: DigestState) -> bool:
        """Record a state; return whether it changed."""
        old = self.of(tensor, component)
        if old is state:
            return False
        self._changed[(id(tensor), component.role)] = state
        self._totals[old] -= 1
        self._totals[state] += 1
        return True

    def reset(self, pairs: Iterable[tuple[Tensor, Component]]) -> None:
        for tensor, component in pairs:
            self.set(tensor, component, DigestState.initial(component))
