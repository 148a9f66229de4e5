"""NaN and ±Inf in the heatmap: drawn in colours of their own over the colour-mapped image (a NaN must not look
like the diverging map's white midpoint, nor an infinity like the largest finite value), named in a legend, and
found one after another by "Next NaN/Inf" (searched strip by strip on a worker, wrapping around the plane)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .export import SliceSource, strips

#: (name, RGBA) of each non-finite kind; none of them is a colour of the colour maps' ends or midpoints
MARK_COLOURS: dict[str, tuple[int, int, int, int]] = {
    "NaN": (255, 0, 255, 255),       # magenta
    "+Inf": (0, 229, 255, 255),      # cyan
    "−Inf": (255, 160, 0, 255),      # orange
}


def nonfinite_marks(values: np.ndarray) -> tuple[np.ndarray, list[str]] | None:
    """An RGBA image the shape of ``values`` with each NaN / +Inf / −Inf pixel in its colour (others transparent)
    and the kinds present, or ``None`` when every value is finite (or the values are not floats). Complex values
    are marked by their magnitude (a NaN part: NaN, an infinite part: +Inf)."""
    values = np.asarray(values)
    if values.dtype.kind not in "fc" or values.size == 0:
        return None
    if np.isfinite(values).all():
        return None
    if values.dtype.kind == "c":
        values = np.abs(values)
    masks = {"NaN": np.isnan(values), "+Inf": np.isposinf(values), "−Inf": np.isneginf(values)}
    rgba = np.zeros((*values.shape, 4), np.uint8)
    present = []
    for name, mask in masks.items():
        if mask.any():
            rgba[mask] = MARK_COLOURS[name]
            present.append(name)
    return rgba, present


def legend_html(present: list[str]) -> str:
    """The legend of the marks shown (``""`` when none)."""
    return "  ".join(f"<span style='color:rgb{MARK_COLOURS[name][:3]}'>■</span> {name}" for name in present)


def next_nonfinite(source: SliceSource, after: tuple[int, int] | None,
                   cancelled: Callable[[], bool] | None = None) -> tuple[int, int] | None:
    """The first NaN or ±Inf of the plane after element ``after`` in row-major order, wrapping around to the
    start (``after=None``: from the first element); ``None`` when the plane has none. Reads from ``after``'s row
    on, then the rows before it: the whole plane at most once, a strip at a time."""
    _, cols = source.shape
    if cols == 0:
        return None
    start = -1 if after is None else after[0] * cols + after[1]
    row = 0 if after is None else after[0]
    for first, end in ((row, None), (0, row + 1)):
        for r0, strip in strips(source, cancelled, first, end):
            strip = np.asarray(strip)
            if strip.dtype.kind not in "fc":
                return None
            positions = np.flatnonzero(~np.isfinite(strip.reshape(-1))) + r0 * cols
            if end is None:
                positions = positions[positions > start]
            if positions.size:
                return divmod(int(positions[0]), cols)
    return None
