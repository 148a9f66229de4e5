"""Helpers shared by the analysis modules: block edges, regions, progress and cancellation."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ztviewer.codec.errors import Cancelled

CancelCheck = Callable[[], bool]
Progress = Callable[[int, int], None]
Region = tuple[int, int, int, int]


def block_edges(start: int, stop: int, bins: int) -> np.ndarray:
    """Integer edges splitting ``[start, stop)`` into ``min(bins, stop - start)`` nearly equal blocks.

    Edge ``i`` is ``start + ceil(i * n / bins)``: blocks differ in size by at most one element and none is
    empty. With this choice an element at offset ``x`` (from ``start``) lies in block ``x * bins // n``,
    which is how :mod:`ztviewer.analysis.spy` bins coordinates. When ``n <= bins`` every block is one
    element (``edges == arange(start, stop + 1)``).
    """
    n = stop - start
    bins = max(1, min(bins, n))
    if n <= 0:
        return np.array([start], dtype=np.int64)
    if bins * n >= 2**63:  # the products overflow int64; the edges themselves fit
        return np.array([start + (i * n + bins - 1) // bins for i in range(bins + 1)], dtype=np.int64)
    return start + (np.arange(bins + 1, dtype=np.int64) * n + bins - 1) // bins


def check_region(shape: tuple[int, int], region: Region | None) -> Region:
    """``region`` as ``(r0, r1, c0, c1)`` validated against a 2-D ``shape`` (``None`` = everything)."""
    rows, cols = shape
    if region is None:
        return 0, rows, 0, cols
    if len(region) != 4:
        raise ValueError(f"region must be (r0, r1, c0, c1), got {region!r}")
    r0, r1, c0, c1 = (int(v) for v in region)
    if not (0 <= r0 <= r1 <= rows and 0 <= c0 <= c1 <= cols):
        raise ValueError(f"region {(r0, r1, c0, c1)} is outside the plane of shape {shape} "
                         "(need 0 <= r0 <= r1 <= rows and 0 <= c0 <= c1 <= cols)")
    return r0, r1, c0, c1


def check_out_shape(out_shape: tuple[int, int]) -> tuple[int, int]:
    """Validate an output image shape (both sides positive)."""
    h, w = (int(v) for v in out_shape)
    if h < 1 or w < 1:
        raise ValueError(f"out_shape must be positive, got {out_shape!r}")
    return h, w


def checkpoint(cancelled: CancelCheck | None) -> None:
    """Raise :class:`~ztviewer.codec.errors.Cancelled` when the caller asked to stop."""
    if cancelled is not None and cancelled():
        raise Cancelled()


def report(progress: Progress | None, done: int, total: int) -> None:
    """Call ``progress(done, total)`` when a callback was given."""
    if progress is not None:
        progress(done, total)
