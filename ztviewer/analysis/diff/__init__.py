"""Comparing two checkpoints (files or sets, any format): pairing, verdicts, streaming difference statistics
and attribute changes. Pure numpy on top of the codec; a GUI or the CLI drives it.

Modules: :mod:`.model` (results), :mod:`.pairing` (by name, renames by content hash), :mod:`.storage`
(descriptions and the stored-bytes fast path), :mod:`.plain_bytes` (that fast path a run of small plain pairs at a
time), :mod:`.values` (element streams), :mod:`.accumulate`
(statistics), :mod:`.ulp`, :mod:`.attributes`, :mod:`.engine` (putting it together).
"""
from .accumulate import DiffAccumulator
from .attributes import attribute_changes
from .engine import (
    compare_files,
    compare_pair,
    iter_pair_diffs,
    numeric_stats,
)
from .model import (
    AttrChange,
    AttrKind,
    DiffOptions,
    DiffStats,
    FileDiff,
    PairDiff,
    PairLog,
    TensorSide,
    Tolerance,
    Verdict,
)
from .pairing import PairPositions, TensorPair, pair_positions, pair_tensors

__all__ = [
    "AttrChange", "AttrKind", "DiffAccumulator", "DiffOptions", "DiffStats", "FileDiff", "PairDiff", "PairLog",
    "PairPositions", "TensorPair", "TensorSide", "Tolerance", "Verdict", "attribute_changes", "compare_files",
    "compare_pair", "iter_pair_diffs", "numeric_stats", "pair_positions", "pair_tensors",
]
