"""What a comparison of two checkpoints produces: verdicts, numbers, attribute changes (plain data)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Verdict(str, Enum):
    """How one pair (or one unpaired tensor) compares. The value is what a person reads."""

    IDENTICAL = "identical bytes"
    SAME_CONTENT = "same content, different storage"
    CLOSE = "equal within tolerance"
    DIFFERENT = "numerically different"
    INCOMPARABLE = "incomparable"
    ONLY_A = "only in A"
    ONLY_B = "only in B"

    @property
    def content_equal(self) -> bool:
        """True when the pair's content counts as unchanged (storage may differ)."""
        return self in (Verdict.IDENTICAL, Verdict.SAME_CONTENT, Verdict.CLOSE)


@dataclass(frozen=True, slots=True)
class Tolerance:
    """``|a - b| <= atol + rtol * |b|`` for every element, as :func:`numpy.isclose` (NaN matches NaN)."""

    rtol: float = 0.0
    atol: float = 0.0

    @classmethod
    def parse(cls, text: str) -> Tolerance:
        """``"rtol,atol"`` (or a single ``"rtol"``), both non-negative numbers."""
        parts = [p.strip() for p in text.split(",")]
        if not 1 <= len(parts) <= 2:
            raise ValueError(f"tolerance must be 'rtol,atol', got {text!r}")
        try:
            values = [float(p) for p in parts] + [0.0] * (2 - len(parts))
        except ValueError:
            raise ValueError(f"tolerance must be two numbers 'rtol,atol', got {text!r}") from None
        if any(not math.isfinite(v) or v < 0 for v in values):
            raise ValueError(f"tolerance values must be finite and >= 0, got {text!r}")
        return cls(values[0], values[1])


@dataclass(slots=True)
class DiffOptions:
    """Settings of a comparison.

    ``tolerance``: near-equal pairs get :attr:`Verdict.CLOSE` (``None``: exact). ``worst``: how many of the
    largest differences to keep per pair (positions for a viewer). ``chunk_elements``: elements compared at
    once (bounds memory). ``find_renames``: pair leftover tensors by content hash.
    """

    tolerance: Tolerance | None = None
    worst: int = 0
    chunk_elements: int = 1 << 20
    find_renames: bool = True


@dataclass(slots=True)
class DiffStats:
    """Numbers of one numeric comparison of A (the reference) against B.

    Over the element pairs where both values are finite (``compared``): ``max_abs`` = max |a − b| at
    ``max_abs_index`` (a multi-index), ``mean_abs``, ``rel_l2`` = ‖a − b‖ / ‖a‖, ``cosine`` =
    Re⟨a, b⟩ / (‖a‖ ‖b‖), ``snr_db`` = 10 log10(‖a‖² / ‖a − b‖²), ``max_ulp`` (floats only: units in the
    last place of the wider dtype). ``differing`` counts every element whose values differ (NaN equals NaN),
    including the ``nan_mismatch`` (NaN on one side only) and ``inf_mismatch`` (±Inf against anything but
    the same Inf, NaN aside) elements, which the other numbers leave out. ``within_tolerance`` is set when
    a tolerance was given. ``worst`` lists ``(index, a, b)`` of the largest differences, largest first.
    """

    count: int = 0
    compared: int = 0
    differing: int = 0
    nan_mismatch: int = 0
    inf_mismatch: int = 0
    max_abs: float = 0.0
    max_abs_index: tuple[int, ...] | None = None
    mean_abs: float = 0.0
    rel_l2: float = 0.0
    cosine: float | None = None
    snr_db: float | None = None
    max_ulp: int | None = None
    bit_identical: bool = True
    within_tolerance: bool | None = None
    worst: list[tuple[tuple[int, ...], Any, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": self.count, "compared": self.compared, "differing": self.differing,
            "nan_mismatch": self.nan_mismatch, "inf_mismatch": self.inf_mismatch, "max_abs": self.max_abs,
            "max_abs_index": None if self.max_abs_index is None else list(self.max_abs_index),
            "mean_abs": self.mean_abs, "rel_l2": self.rel_l2, "cosine": self.cosine, "snr_db": self.snr_db,
            "max_ulp": self.max_ulp, "bit_identical": self.bit_identical,
            "within_tolerance": self.within_tolerance,
            "worst": [{"index": list(i), "a": a, "b": b} for i, a, b in self.worst],
        }


class AttrKind(str, Enum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


@dataclass(frozen=True, slots=True)
class AttrChange:
    """One attribute that differs: ``a`` is ``None`` when added, ``b`` when removed."""

    key: str
    kind: AttrKind
    a: Any = None
    b: Any = None


@dataclass(frozen=True, slots=True)
class TensorSide:
    """What one side of a pair is: enough to show it without the open file."""

    name: str
    index: int
    dtype: str
    shape: tuple[int, ...]
    layout: str
    encodings: tuple[str, ...]
    stored_bytes: int


@dataclass(slots=True)
class PairDiff:
    """The comparison of one tensor of A with one of B (either may be missing).

    ``renamed``: paired by content hash rather than by name. ``changes``: what differs in how the tensor is
    described or stored (``"dtype float32 → bfloat16"``, ``"encoding raw → zstd"``). ``reason``: why an
    incomparable pair cannot be compared.
    """

    a: TensorSide | None
    b: TensorSide | None
    verdict: Verdict
    renamed: bool = False
    changes: list[str] = field(default_factory=list)
    reason: str = ""
    stats: DiffStats | None = None
    attributes: list[AttrChange] = field(default_factory=list)

    @property
    def name(self) -> str:
        side = self.a if self.a is not None else self.b
        return side.name if side is not None else ""

    @property
    def unchanged(self) -> bool:
        """Content and attributes count as equal and the name is the same."""
        return self.verdict.content_equal and not self.renamed and not self.attributes


@dataclass(slots=True)
class FileDiff:
    """The comparison of two files or sets: every pair in A's order, then tensors only in B."""

    path_a: str
    path_b: str
    kind_a: str
    kind_b: str
    pairs: list[PairDiff] = field(default_factory=list)
    attributes: list[AttrChange] = field(default_factory=list)
    cancelled: bool = False

    @property
    def unchanged(self) -> bool:
        """Exit status 0: every tensor's content and every attribute is the same (storage may differ)."""
        return not self.attributes and all(p.unchanged for p in self.pairs) and not self.cancelled

    def counts(self) -> dict[str, int]:
        tally: dict[str, int] = {v.value: 0 for v in Verdict}
        for pair in self.pairs:
            tally[pair.verdict.value] += 1
        tally["renamed"] = sum(p.renamed for p in self.pairs)
        return tally
