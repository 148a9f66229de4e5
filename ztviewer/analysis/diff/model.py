"""What a comparison of two checkpoints produces: verdicts, numbers, attribute changes (plain data).

The pairs of a comparison are kept in a :class:`PairLog`: a million pairs of a checkpoint compared with a copy cost
some 40 bytes each instead of some 700 (a pair, two sides, their lists and numbers).
"""
from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, overload


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


#: what a plain pair's sides share: ``(dtype, shape, layout, encodings, stored bytes)``
Description = tuple[str, tuple[int, ...], str, tuple[str, ...], int]


class PairLog(Sequence[PairDiff]):
    """The pairs of a comparison in order; reads like a list of them.

    A pair that says nothing but "identical bytes" (not renamed, no changes, no attributes, both sides of one name
    and described alike, at any index) is kept as its name, one shared description and both indices, and is
    rebuilt equal to what was appended whenever it is read; any other pair is kept as it is. Counts and the
    overall verdict are kept up to date as pairs are appended, so asking them walks nothing.
    """

    def __init__(self, pairs: Iterable[PairDiff] = ()) -> None:
        self._names: list[str | None] = []   # None where the pair is kept whole
        self._descriptions: list[Description | None] = []
        self._index_a, self._index_b = array("q"), array("q")
        self._whole: dict[int, PairDiff] = {}
        self._shared: dict[Description, Description] = {}
        self._tally: dict[str, int] = {v.value: 0 for v in Verdict}
        self._renamed = 0
        self._changed = 0
        self._plain = 0   # pairs kept in the columns
        self.extend(pairs)

    def append(self, pair: PairDiff) -> None:
        a, b = pair.a, pair.b
        if (pair.verdict is Verdict.IDENTICAL and not (pair.renamed or pair.changes or pair.reason or pair.attributes)
                and pair.stats is None and a is not None and b is not None and a.name == b.name):
            described = a.dtype, a.shape, a.layout, a.encodings, a.stored_bytes
            if described == (b.dtype, b.shape, b.layout, b.encodings, b.stored_bytes):
                self._names.append(a.name)
                self._descriptions.append(self._shared.setdefault(described, described))
                self._index_a.append(a.index)
                self._index_b.append(b.index)
                self._plain += 1
                return
        self._tally[pair.verdict.value] += 1
        self._renamed += pair.renamed
        self._changed += not pair.unchanged
        self._whole[len(self._names)] = pair
        self._names.append(None)
        self._descriptions.append(None)
        self._index_a.append(0)
        self._index_b.append(0)

    def extend(self, pairs: Iterable[PairDiff]) -> None:
        for pair in pairs:
            self.append(pair)

    def __len__(self) -> int:
        return len(self._names)

    @overload
    def __getitem__(self, index: int) -> PairDiff: ...

    @overload
    def __getitem__(self, index: slice) -> list[PairDiff]: ...

    def __getitem__(self, index: int | slice) -> PairDiff | list[PairDiff]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        name = self._names[index]  # IndexError as a list raises it
        if name is None:
            return self._whole[index % len(self._names)]
        description = self._descriptions[index]
        assert description is not None
        return PairDiff(TensorSide(name, self._index_a[index], *description),
                        TensorSide(name, self._index_b[index], *description), Verdict.IDENTICAL)

    def plain_name(self, index: int) -> str | None:
        """The name of the pair at ``index`` when it is kept in the columns (identical bytes, nothing else to say:
        a listing can show it without rebuilding it), else ``None``."""
        return self._names[index]

    def __iter__(self) -> Iterator[PairDiff]:
        return map(self.__getitem__, range(len(self._names)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (PairLog, list)):
            return len(self) == len(other) and all(map(PairDiff.__eq__, self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def counts(self) -> dict[str, int]:
        """Pairs of each verdict, and ``renamed``: how many were paired by content."""
        tally = {**self._tally, "renamed": self._renamed}
        tally[Verdict.IDENTICAL.value] += self._plain
        return tally

    @property
    def unchanged(self) -> bool:
        """Whether every pair is :attr:`~.model.PairDiff.unchanged`."""
        return not self._changed


@dataclass(slots=True)
class FileDiff:
    """The comparison of two files or sets: every pair in A's order, then tensors only in B (``pairs`` given as a
    list are kept as a :class:`PairLog`)."""

    path_a: str
    path_b: str
    kind_a: str
    kind_b: str
    pairs: PairLog = field(default_factory=lambda: PairLog())
    attributes: list[AttrChange] = field(default_factory=list)
    cancelled: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.pairs, PairLog):  # a list of pairs given
            self.pairs = PairLog(self.pairs)

    @property
    def unchanged(self) -> bool:
        """Exit status 0: every tensor's content and every attribute is the same (storage may differ)."""
        return not self.attributes and self.pairs.unchanged and not self.cancelled

    def counts(self) -> dict[str, int]:
        return self.pairs.counts()
