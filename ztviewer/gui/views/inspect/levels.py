"""Colour maps and colour levels of the inspect images: which map suits the data, and where its ends go.

Signed data gets a diverging map centred on zero (levels symmetric about 0), complex phases a cyclic map over
[-π, π], everything else a sequential map.
Levels come from the displayed pixels only (screen-sized arrays, so this is cheap): ``auto`` = full finite
range, ``percentile`` (the default, 0.1 %) = clip a percentage at each end so one spike does not wash the
image out (computed on at most 65,536 sampled pixels),
``manual`` = what the user typed or dragged on the colour bar.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

SEQUENTIAL = ("viridis", "magma", "inferno", "plasma", "cividis", "turbo", "grey")
DIVERGING = ("blue–white–red", "blue–grey–red", "cool–warm")
CYCLIC = ("phase wheel",)
COLORMAPS = SEQUENTIAL + DIVERGING + CYCLIC
_NAMES = {"grey": "CET-L1", "blue–white–red": "CET-D1A", "blue–grey–red": "CET-D1", "cool–warm": "CET-D9",
          "phase wheel": "CET-C2"}
DEFAULT_SEQUENTIAL = "viridis"
DEFAULT_DIVERGING = "blue–white–red"
LEVEL_MODES = ("percentile", "auto", "manual")
DEFAULT_PERCENT = 0.1
SAMPLE = 1 << 16


def colormap(name: str) -> pg.ColorMap:
    if name == "blues":  # spy plots: light blue for a single entry, navy for full pixels
        return pg.ColorMap([0.0, 1.0], [(158, 202, 225), (8, 48, 107)])
    return pg.colormap.get(_NAMES.get(name, name))


def is_diverging(name: str) -> bool:
    return name in DIVERGING


def default_colormap(signed: bool, phase: bool = False) -> str:
    """Phase angles → a cyclic map; signed values → diverging about 0; else sequential."""
    if phase:
        return CYCLIC[0]
    return DEFAULT_DIVERGING if signed else DEFAULT_SEQUENTIAL


def _sample(image: np.ndarray) -> np.ndarray:
    flat = np.asarray(image).reshape(-1)
    if flat.size > SAMPLE:
        flat = flat[:: -(-flat.size // SAMPLE)]
    return flat


def compute_levels(image: np.ndarray, mode: str, percent: float, centred: bool) -> tuple[float, float]:
    """Levels for ``image`` in ``mode`` (``auto`` or ``percentile``); ``centred`` makes them ±m about 0.

    Percentiles pick actual pixel values (the next one outwards), so a small image keeps its true extremes.
    """
    data = np.asarray(_sample(image) if mode == "percentile" else image).reshape(-1)
    finite = data[np.isfinite(data)]
    if finite.size == 0:
        return (-1.0, 1.0) if centred else (0.0, 1.0)
    clip = percent if mode == "percentile" and percent > 0 else 0.0
    if centred:
        magnitude = np.abs(finite)
        m = _percentiles(magnitude, [(100.0 - clip, "higher")])[0] if clip else float(magnitude.max())
        m = m if m > 0 else 1.0
        return -m, m
    if clip:
        low, high = _percentiles(finite, [(clip, "lower"), (100.0 - clip, "higher")])
    else:
        low, high = float(finite.min()), float(finite.max())
    if not low < high:
        low, high = low - 0.5, high + 0.5
    return low, high


def _percentiles(values: np.ndarray, wanted: list[tuple[float, str]]) -> list[float]:
    """``np.percentile(values, q, method=m)`` for each ``(q, m)`` with ``m`` ``"lower"`` or ``"higher"``: ranks near
    an end from the values past a threshold (:func:`_tail_rank`), else from one partial sort of all of them
    (numpy sorts again per call, and partitions NaN to the end first: these values are finite). The ranks are
    numpy's: ``floor`` or ``ceil`` of ``(n - 1) * q / 100``; a zero level is +0 (never shown as "-0")."""
    last = values.size - 1
    ranks = [int(math.floor(last * (q / 100)) if method == "lower" else math.ceil(last * (q / 100)))
             for q, method in wanted]
    tails = [_tail_rank(values, k) for k in ranks]
    if all(value is not None for value in tails):
        return [float(value) + 0.0 for value in tails]   # type: ignore[arg-type]
    ordered = np.partition(values, ranks)
    return [float(ordered[k]) + 0.0 for k in ranks]


#: values at most this many apart from an end are found among the values past a threshold (see :func:`_tail_rank`)
_TAIL = 1 << 10
_SUBSAMPLE = 16


def _tail_rank(values: np.ndarray, k: int) -> float | None:
    """``np.partition(values, k)[k]`` for a rank near either end, without partitioning every value: a threshold
    taken from every 16th value keeps a few times the values between it and the end; when at least the
    ``n - k`` (or ``k + 1``) wanted are among them, the rank is found in those alone (exact: they are the largest
    (smallest) values, ties included). ``None`` when ``k`` is not near an end or the threshold kept too few."""
    n = values.size
    top = k >= n // 2
    needed = n - k if top else k + 1
    if n < 8 * _TAIL or needed > _TAIL:
        return None
    sub = values[::_SUBSAMPLE]
    j = min(sub.size, needed // _SUBSAMPLE * 4 + 8)   # subsampled values past the threshold
    if top:
        threshold = np.partition(sub, sub.size - j)[sub.size - j]
        kept = values[values >= threshold]
        if kept.size < needed:
            return None
        return float(np.partition(kept, kept.size - needed)[kept.size - needed])
    threshold = np.partition(sub, j - 1)[j - 1]
    kept = values[values <= threshold]
    if kept.size < needed:
        return None
    return float(np.partition(kept, needed - 1)[needed - 1])


def log_magnitude(image: np.ndarray) -> np.ndarray:
    """``log10 |x|`` with zeros (and NaN) as NaN, which the image shows as transparent."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log10(np.abs(image.astype(np.float64, copy=False)))
    out[~np.isfinite(out)] = np.nan
    return out.astype(np.float32)


def is_signed(image: np.ndarray) -> bool:
    """Whether the displayed values hold negative numbers."""
    with np.errstate(invalid="ignore"):
        low = np.fmin.reduce(image, axis=None, initial=np.inf) if image.size else np.inf
    return bool(low < 0)
