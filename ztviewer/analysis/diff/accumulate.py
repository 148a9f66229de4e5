"""Streaming difference statistics of two aligned element streams (see :class:`~.model.DiffStats`).

Chunks of A and B arrive as stored bits (native byte order, the canonical storage dtype: bfloat16 as
uint16, float8 as uint8, bool as 0/1 bytes) with their flat positions. Each chunk is cut into cache-sized
blocks computed in float64 (complex128 when either side is complex) into reused buffers; sums of products
use ``einsum`` (SIMD, no BLAS thread pool: waking OpenBLAS threads costs milliseconds per call on a busy
machine). A block with any NaN or Inf takes a masked path that counts the mismatches and compares the
rest. Memory is a few blocks, whatever the tensor size.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ztviewer.codec.dtypes import DTYPES, to_float32

from .model import DiffStats, Tolerance
from .ulp import float_bits, max_ulp

BLOCK = 1 << 16  # elements per computation block: the float64 temporaries stay in cache
Positions = int | np.ndarray  # first flat index of a contiguous chunk, or each element's flat index


def presenter(dtype: str) -> Callable[[np.ndarray], np.ndarray]:
    """Stored bits → numbers: bfloat16 / float8 to float32, everything else unchanged."""
    if DTYPES[dtype].needs_conversion:
        return lambda bits: to_float32(bits, dtype)
    return lambda bits: bits


def work_dtype(dtype_a: str, dtype_b: str) -> np.dtype:
    """float64, or complex128 when either side is complex: both sides are exact in it."""
    complex_ = "complex" in (DTYPES[dtype_a].kind, DTYPES[dtype_b].kind)
    return np.dtype(np.complex128 if complex_ else np.float64)


def _ulp_source(dtype_a: str, dtype_b: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
    """``(bits, values) -> float bits`` to measure ULPs on, or ``None`` when ULPs do not apply.

    Same dtype: the stored format itself (bfloat16 / float8 in their own ULPs). Different float dtypes:
    the values in the wider one, which holds both exactly.
    """
    kinds = DTYPES[dtype_a].kind, DTYPES[dtype_b].kind
    if any(k not in ("float", "complex") for k in kinds):
        return None
    if dtype_a == dtype_b:
        if DTYPES[dtype_a].needs_conversion:
            return lambda bits, values: bits
        return lambda bits, values: float_bits(values)
    wide = np.result_type(*(np.dtype(np.float32) if DTYPES[d].needs_conversion else DTYPES[d].storage_dtype
                            for d in (dtype_a, dtype_b))).newbyteorder("=")
    return lambda bits, values: float_bits(values.astype(wide, copy=False))


class DiffAccumulator:
    """Running difference statistics; :meth:`update` with aligned chunks, :meth:`result` at the end."""

    def __init__(self, shape: tuple[int, ...], dtype_a: str, dtype_b: str, tolerance: Tolerance | None = None,
                 worst: int = 0) -> None:
        self.shape = shape
        self.same_dtype = dtype_a == dtype_b
        self.present_a, self.present_b = presenter(dtype_a), presenter(dtype_b)
        self.ulp_source = _ulp_source(dtype_a, dtype_b)
        self.work = work_dtype(dtype_a, dtype_b)
        self.tolerance = tolerance
        self.keep = worst
        self.count = self.compared = self.differing = self.nan_mismatch = self.inf_mismatch = 0
        self.violations = 0
        self.sum_abs = self.aa = self.bb = self.ab = self.dd = 0.0
        self.max_abs = -1.0
        self.max_pos = -1
        self.max_ulp: int | None = 0 if self.ulp_source is not None else None
        self.bit_identical = True
        self._buffers: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._worst: list[tuple[float, int, object, object]] = []

    def _bufs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self._buffers is None:
            self._buffers = (np.empty(BLOCK, self.work), np.empty(BLOCK, self.work), np.empty(BLOCK, self.work),
                             np.empty(BLOCK, np.float64))
        return self._buffers

    def add_equal(self, n: int) -> None:
        """Count ``n`` element pairs known to be equal finite zeros (the implied zeros of sparse tensors)."""
        self.count += n
        self.compared += n

    def update(self, bits_a: np.ndarray, bits_b: np.ndarray, positions: Positions) -> None:
        """Add aligned chunks (1-D, equal lengths) whose elements sit at ``positions`` in the tensor."""
        n = bits_a.size
        if bits_b.size != n:
            raise ValueError(f"chunks of {n} and {bits_b.size} elements are not aligned")
        self.count += n
        for start in range(0, n, BLOCK):
            stop = min(n, start + BLOCK)
            pos = positions + start if isinstance(positions, int) else positions[start:stop]
            self._block(bits_a[start:stop], bits_b[start:stop], pos)

    def _block(self, bits_a: np.ndarray, bits_b: np.ndarray, pos: Positions) -> None:
        va, vb = self.present_a(bits_a), self.present_b(bits_b)
        buf_a, buf_b, buf_d, buf_abs = self._bufs()
        n = va.size
        a, b, d = buf_a[:n], buf_b[:n], buf_d[:n]
        np.copyto(a, va, casting="unsafe")
        np.copyto(b, vb, casting="unsafe")
        with np.errstate(invalid="ignore", over="ignore"):
            np.subtract(a, b, out=d)
        aa, bb = _sq(a), _sq(b)
        if not (math.isfinite(aa) and math.isfinite(bb)):
            self._block_nonfinite(bits_a, bits_b, va, vb, pos)
            return
        self._finite(bits_a, bits_b, va, vb, a, b, d, buf_abs[:n], pos, aa, bb)

    def _finite(self, bits_a: np.ndarray, bits_b: np.ndarray, va: np.ndarray, vb: np.ndarray, a: np.ndarray,
                b: np.ndarray, d: np.ndarray, ad: np.ndarray, pos: Positions, aa: float, bb: float) -> None:
        """Statistics of a block whose values are all finite (``d = a - b`` already computed)."""
        n = a.size
        self.compared += n
        self.aa += aa
        self.bb += bb
        self.ab += _dot(a, b)
        np.abs(d, out=ad)
        self.dd += _dot(ad, ad)
        i = int(ad.argmax()) if n else 0
        if n and ad[i] > self.max_abs:
            self.max_abs = float(ad[i])
            self.max_pos = pos + i if isinstance(pos, int) else int(pos[i])
        self.sum_abs += float(ad.sum())
        differing = int(np.count_nonzero(ad))
        self.differing += differing
        if differing == 0:
            if self.bit_identical and not (self.same_dtype and _same_bits(bits_a, bits_b)):
                self.bit_identical = False
            return
        self.bit_identical = False
        if self.ulp_source is not None:
            ulp_a, ulp_b = self.ulp_source(bits_a, va), self.ulp_source(bits_b, vb)
            self.max_ulp = max(self.max_ulp or 0, max_ulp(ulp_a, ulp_b))
        if self.tolerance is not None:
            limit = np.abs(b)
            limit *= self.tolerance.rtol
            limit += self.tolerance.atol
            self.violations += int(np.count_nonzero(ad > limit.real))
        if self.keep:
            self._keep_worst(ad, va, vb, pos)

    def _block_nonfinite(self, bits_a: np.ndarray, bits_b: np.ndarray, va: np.ndarray, vb: np.ndarray,
                         pos: Positions) -> None:
        """Count NaN / Inf mismatches, then compare the elements finite on both sides."""
        nan_a, nan_b = np.isnan(va), np.isnan(vb)
        fin_a, fin_b = np.isfinite(va), np.isfinite(vb)
        both = fin_a & fin_b
        nan_mismatch = int(np.count_nonzero(nan_a != nan_b))
        with np.errstate(invalid="ignore"):
            inf_mismatch = int(np.count_nonzero(~nan_a & ~nan_b & ~both & (va != vb)))
        self.nan_mismatch += nan_mismatch
        self.inf_mismatch += inf_mismatch
        self.differing += nan_mismatch + inf_mismatch
        if self.bit_identical and not (self.same_dtype and _same_bits(bits_a[~both], bits_b[~both])):
            self.bit_identical = False
        keep = np.flatnonzero(both)
        positions = (pos + keep) if isinstance(pos, int) else pos[keep]
        ba, bb_, fa, fb = bits_a[keep], bits_b[keep], va[keep], vb[keep]
        buf_a, buf_b, buf_d, buf_abs = self._bufs()
        n = keep.size
        a, b, d = buf_a[:n], buf_b[:n], buf_d[:n]
        np.copyto(a, fa, casting="unsafe")
        np.copyto(b, fb, casting="unsafe")
        np.subtract(a, b, out=d)
        self._finite(ba, bb_, fa, fb, a, b, d, buf_abs[:n], positions, _sq(a), _sq(b))

    def _keep_worst(self, ad: np.ndarray, va: np.ndarray, vb: np.ndarray, pos: Positions) -> None:
        full = len(self._worst) >= self.keep
        threshold = self._worst[-1][0] if full else -1.0
        candidates = np.flatnonzero(ad > threshold) if full else np.flatnonzero(ad)
        if candidates.size == 0:
            return
        if candidates.size > self.keep:
            top = np.argpartition(ad[candidates], candidates.size - self.keep)[-self.keep:]
            candidates = candidates[top]
        for i in candidates.tolist():
            flat = pos + i if isinstance(pos, int) else int(pos[i])
            self._worst.append((float(ad[i]), flat, va[i].item(), vb[i].item()))
        self._worst.sort(key=lambda w: (-w[0], w[1]))
        del self._worst[self.keep:]

    def result(self) -> DiffStats:
        stats = DiffStats(count=self.count, compared=self.compared, differing=self.differing,
                          nan_mismatch=self.nan_mismatch, inf_mismatch=self.inf_mismatch,
                          max_ulp=self.max_ulp, bit_identical=self.bit_identical)
        if self.max_pos >= 0:
            stats.max_abs = self.max_abs
            stats.max_abs_index = unravel(self.max_pos, self.shape)
        if self.compared:
            stats.mean_abs = self.sum_abs / self.compared
        norm_a, norm_b, norm_d = math.sqrt(self.aa), math.sqrt(self.bb), math.sqrt(self.dd)
        stats.rel_l2 = norm_d / norm_a if norm_a else (0.0 if norm_d == 0 else math.inf)
        stats.cosine = self.ab / norm_a / norm_b if norm_a and norm_b else (1.0 if norm_a == norm_b else None)
        if self.dd == 0:
            stats.snr_db = math.inf
        elif self.aa:
            stats.snr_db = 10 * math.log10(self.aa / self.dd)
        else:
            stats.snr_db = -math.inf
        if self.tolerance is not None:
            stats.within_tolerance = self.violations == 0 and self.nan_mismatch == 0 and self.inf_mismatch == 0
        stats.worst = [(unravel(flat, self.shape), a, b) for _, flat, a, b in self._worst]
        return stats


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """Re Σ conj(x)·y (float; inf or nan when it overflows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if x.dtype.kind == "c":
            return float(np.einsum("i,i->", x.conj(), y).real)
        return float(np.einsum("i,i->", x, y))


def _sq(x: np.ndarray) -> float:
    """Σ |x|² (float; inf when it overflows)."""
    return _dot(x, x)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equality of two arrays of one dtype (NaNs compare by payload)."""
    return np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


def unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major multi-index of flat position ``flat`` (Python ints: no int64 overflow)."""
    index = []
    for extent in reversed(shape):
        flat, i = divmod(flat, extent) if extent else (flat, 0)
        index.append(i)
    return tuple(reversed(index))
