"""Explicit, ordered writer phases (gguf-py ``GGUFWriter`` style): each method states the phase it needs,
and calling it in any other phase raises :class:`WriterStateError` naming both."""
from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from typing import TYPE_CHECKING

from ..errors import WriterStateError

if TYPE_CHECKING:
    from .output import Output
    from .plan import FilePlan, PlannedTensor


class Phase(IntEnum):
    """Where a writer is. Writers go through these in order; not every writer uses every phase."""

    EMPTY = 0       # nothing written yet
    HEADER = 1      # header written (safetensors, blz): its layout is fixed
    BLOBS = 2       # tensor data being written
    MANIFEST = 3    # manifest / footer written (zt)
    CLOSED = 4      # finished; nothing more may be written


class PhasedWriter:
    """Base for writers: tracks the phase and refuses calls made out of order.

    Parameters
    ----------
    out:
        The output sink (positioned at 0).
    plan:
        What to write.
    """

    format_name = "?"

    def __init__(self, out: Output, plan: FilePlan) -> None:
        self.phase = Phase.EMPTY
        self.out = out
        self.plan = plan

    def write(self) -> None:
        """All phases in order."""
        raise NotImplementedError

    def _expect(self, action: str, *allowed: Phase) -> None:
        if self.phase not in allowed:
            wanted = " or ".join(p.name for p in allowed)
            raise WriterStateError(
                f"{self.format_name} writer: cannot {action} in phase {self.phase.name}, expected {wanted}",
                rule="writer phases run EMPTY → HEADER → BLOBS → MANIFEST → CLOSED")

    def _advance(self, phase: Phase) -> None:
        if phase is Phase.CLOSED:
            self.out.flush()
        self.phase = phase

    def _expect_all_written(self, written: Callable[[PlannedTensor, str], bool], noun: str) -> None:
        """Refuse to write the manifest while a planned ``noun`` (component, part) is unwritten."""
        missing = [f"{t.name}.{c}" for t in self.plan.tensors for c in t.components if not written(t, c)]
        if missing:
            raise WriterStateError(f"{self.format_name} writer: cannot write the manifest in phase BLOBS while "
                                   f"{len(missing)} planned {noun}(s) unwritten ({', '.join(missing[:3])})",
                                   rule=f"every planned {noun} is written before the manifest")
