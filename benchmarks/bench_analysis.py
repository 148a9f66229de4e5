"""Heatmap and spy-plot numerics (``ztviewer.analysis``) against plain numpy doing the same work.

* first paint: :func:`strided_preview` of a 16384² float32 memory-mapped file (1 GiB) against
  ``np.ascontiguousarray(a[::s, ::s])``;
* full-resolution block reduction (max-abs and mean to 1024²) against the best strip-wise plain-numpy
  reduction we could write (divisible blocks, reshape + strided column folding);
* spy binning of 10M non-zeros (CSR, and unsorted COO) against numpy computing the pixel ids from the same
  coordinates and ``np.bincount`` (and, report only, ``np.bincount`` of ids computed beforehand);
* peak memory of each, from tracemalloc (numpy's own allocations; the file's page-cache pages are shared,
  reclaimable and not counted).
"""
from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ztviewer.analysis.reduce import block_reduce, strided_preview
from ztviewer.analysis.spy import spy_density, spy_density_csr

from .common import best_of, result
from .files import fmt_size

MEMORY_ALLOWANCE = 200 * 10**6  # bytes on top of the displayed data


def _plane_file(tmpdir: Path, n: int) -> Path:
    path = tmpdir / f"analysis_plane_{n}.f32"
    if not path.exists():
        out = np.memmap(path, dtype=np.float32, mode="w+", shape=(n, n))
        rng = np.random.default_rng(0)
        step = max(1, (64 << 20) // (4 * n))
        for r in range(0, n, step):
            out[r:r + step] = rng.random((min(step, n - r), n), dtype=np.float32) - 0.5
        out[n // 3, n // 5] = 1e3  # a spike the stride misses
        out.flush()
        del out
    return path


def _mapped(path: Path, n: int) -> np.memmap:
    return np.memmap(path, dtype=np.float32, mode="r", shape=(n, n))


def _peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        value = fn()
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _memory_row(name: str, fn: Callable[[], Any], shown_bytes: Callable[[Any], int]) -> dict:
    value, peak = _peak(fn)
    shown = shown_bytes(value)
    return result(f"{name}: peak memory (MiB)", peak / 2**20, shown / 2**20, "<= shown + 200 MB",
                  unit="MiB", passed=peak <= shown + MEMORY_ALLOWANCE,
                  note=f"tracemalloc peak {peak / 2**20:.1f} MiB vs displayed data {shown / 2**20:.1f} MiB "
                  "(reference column); mapped file pages not counted")


def reference_maxabs(a: np.ndarray, h: int, w: int, strip_bytes: int = 16 << 20) -> np.ndarray:
    """Best plain-numpy max-abs to (h, w) for divisible sizes: strips, |x|, reshape-max, fold columns."""
    n0, n1 = a.shape
    bh, bw = n0 // h, n1 // w
    rows = bh * max(1, strip_bytes // (3 * n1 * a.itemsize * bh))
    out = np.empty((h, w), a.dtype)
    for r in range(0, n0, rows):
        strip = np.abs(a[r:r + rows])
        k = strip.shape[0] // bh
        m = strip.reshape(k, bh, n1).max(axis=1)
        acc = m[:, 0::bw].copy()
        for q in range(1, bw):
            np.maximum(acc, m[:, q::bw], out=acc)
        out[r // bh:r // bh + k] = acc
    return out


def reference_mean(a: np.ndarray, h: int, w: int, strip_bytes: int = 16 << 20) -> np.ndarray:
    """Best plain-numpy block mean to (h, w) for divisible sizes (float32 row sums, float64 folding)."""
    n0, n1 = a.shape
    bh, bw = n0 // h, n1 // w
    rows = bh * max(1, min(64 // bh, strip_bytes // (3 * n1 * a.itemsize * bh)))
    out = np.empty((h, w), np.float64)
    for r in range(0, n0, rows):
        strip = a[r:r + rows]
        k = strip.shape[0] // bh
        m = strip.reshape(k, bh, n1).sum(axis=1)
        acc = m[:, 0::bw].astype(np.float64)
        for q in range(1, bw):
            acc += m[:, q::bw]
        out[r // bh:r // bh + k] = acc
    out /= bh * bw
    return out.astype(a.dtype)


def bench_heatmaps(tmpdir: Path, quick: bool) -> list[dict]:
    n = 2048 if quick else 16384
    screen = 256 if quick else 2048
    out = 256 if quick else 1024
    repeats = 3 if quick else 5
    path = _plane_file(tmpdir, n)
    size = fmt_size(n * n * 4)
    step = -(-n // screen)

    def ours_preview() -> np.ndarray:
        return strided_preview(_mapped(path, n), screen, screen).data

    def ref_preview() -> np.ndarray:
        return np.ascontiguousarray(_mapped(path, n)[::step, ::step])

    note = "" if np.array_equal(ours_preview(), ref_preview()) else "; PREVIEWS DIFFER"
    ours_s, ref_s = best_of(ours_preview, ref_preview, repeats=3 * repeats)  # ~20 ms each: noisy
    rows = [result(f"first paint: strided preview {screen}² of {n}² float32 ({size} memmap)", ours_s, ref_s,
                   "<= 1.5", note=f"vs np.ascontiguousarray(a[::{step}, ::{step}]), fresh map each call; "
                   f"ours {ours_s * 1e3:.1f} ms" + note, profile=ours_preview)]
    for method, reference in (("maxabs", reference_maxabs), ("mean", reference_mean)):
        def ours(method: str = method) -> np.ndarray:
            return block_reduce(_mapped(path, n), None, (out, out), method).data

        def ref(reference=reference) -> np.ndarray:
            return reference(_mapped(path, n), out, out)

        same = np.allclose(ours(), ref(), rtol=1e-5)
        ours_s, ref_s = best_of(ours, ref, repeats=repeats)
        rows.append(result(f"block reduce {method} {n}² float32 → {out}²", ours_s, ref_s, "<= 1.5",
                           note=f"reference: best strip-wise plain numpy (reshape + column folding); ours "
                           f"{ours_s * 1e3:.0f} ms, NaN-aware, any block sizes"
                           + ("" if same else "; IMAGES DIFFER"), profile=ours))
    rows.append(_memory_row(f"first paint {n}²", ours_preview, lambda img: img.nbytes))
    rows.append(_memory_row(f"block reduce maxabs {n}² → {out}²",
                            lambda: block_reduce(_mapped(path, n), None, (out, out), "maxabs").data,
                            lambda img: img.nbytes))
    return rows


def bench_spy(quick: bool) -> list[dict]:
    nnz = 1_000_000 if quick else 10_000_000
    extent = 1_000_000
    h = w = 1024
    repeats = 3 if quick else 5
    rng = np.random.default_rng(1)
    rows = rng.integers(0, extent, nnz).astype(np.uint64)
    cols = rng.integers(0, extent, nnz).astype(np.uint64)
    pix = (rows.view(np.int64) * h // extent) * w + cols.view(np.int64) * w // extent

    def ref() -> np.ndarray:  # the same work as ours: pixel ids from the uint64 coordinates, then counted
        r, c = rows.view(np.int64), cols.view(np.int64)
        return np.bincount((r * h // extent) * w + c * w // extent, minlength=h * w)

    def ref_counting_only() -> np.ndarray:
        return np.bincount(pix, minlength=h * w)

    expected = ref_counting_only().reshape(h, w)
    order = np.argsort(rows, kind="stable")
    indptr = np.searchsorted(rows[order], np.arange(extent + 1)).astype(np.uint64)
    indices = cols[order]
    out: list[dict] = []
    cases = [
        ("CSR", lambda: spy_density_csr(indptr, indices, (extent, extent), None, (h, w)).counts),
        ("unsorted COO", lambda: spy_density(rows, cols, (extent, extent), None, (h, w)).counts),
    ]
    for label, ours in cases:
        note = "" if np.array_equal(ours(), expected) else "; COUNTS DIFFER"
        ours_s, ref_s = best_of(ours, ref, repeats=repeats)
        out.append(result(f"spy binning {nnz / 1e6:g}M non-zeros ({label}) → {h}²", ours_s, ref_s, "<= 1.3",
                          note="vs numpy computing the pixel ids from the same uint64 coordinates "
                          f"((r*h//n)*w + c*w//n) and np.bincount; ours {ours_s * 1e3:.0f} ms" + note, profile=ours))
        ours_s, ref_s = best_of(ours, ref_counting_only, repeats=repeats)
        out.append(result(f"spy binning {nnz / 1e6:g}M non-zeros ({label}) vs counting only", ours_s, ref_s,
                          "report", note="reference: np.bincount of pixel ids computed before its clock starts "
                          "(less work than ours)"))
    out.append(_memory_row(f"spy binning {nnz / 1e6:g}M non-zeros (unsorted COO)", cases[1][1],
                           lambda counts: counts.nbytes))
    return out


def run(tmpdir: Path, quick: bool) -> list[dict]:
    return bench_heatmaps(tmpdir, quick) + bench_spy(quick)
