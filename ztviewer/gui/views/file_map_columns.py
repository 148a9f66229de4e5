"""Which segment colours each pixel column of the file map, computed over whole numpy columns."""
from __future__ import annotations

import numpy as np

from ztviewer.session.file_layout import FileLayout

DEFAULT_PRIORITY = 2


def column_winners(layout: FileLayout, width: int, priority: dict[str, int]) -> np.ndarray:
    """Per pixel column of a bar ``width`` pixels wide, the number of the segment drawn there (-1: none).

    Of the segments meeting a column, the one whose kind has the highest ``priority`` wins, the first one on a
    tie. A segment spanning three or more columns is alone in those between its ends (segments are disjoint).
    """
    count = len(layout)
    winners = np.full(width, -1, np.int64)
    if not count or not layout.size:
        return winners
    scale = width / layout.size
    first = np.minimum(width - 1, (layout.offsets * scale).astype(np.int64))
    last = np.maximum(first, np.minimum(width - 1, ((layout.ends - 1) * scale).astype(np.int64)))
    ranks = np.array([priority.get(kind, DEFAULT_PRIORITY) for kind in layout.kind_names], np.int64)
    keys = ranks[layout.kind_codes] * count + (count - 1 - np.arange(count))   # higher key wins
    best = np.full(width, -1, np.int64)
    np.maximum.at(best, first, keys)
    np.maximum.at(best, last, keys)
    inner = last - first - 1
    wide = inner > 0
    if wide.any():
        spans = inner[wide]
        columns = np.repeat(first[wide] + 1 - np.cumsum(spans) + spans, spans) + np.arange(spans.sum())
        best[columns] = np.repeat(keys[wide], spans)
    drawn = best >= 0
    winners[drawn] = count - 1 - best[drawn] % count
    return winners
