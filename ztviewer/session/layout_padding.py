"""The bytes no region or component owns, as numpy columns: zero padding up to the next alignment boundary
after an owned range, gaps for the rest (what :func:`ztviewer.codec.layout_check.find_gaps` reports, with the
padding bytes read in a few large pieces instead of one read per gap)."""
from __future__ import annotations

import numpy as np

from ztviewer.codec import TensorFile
from ztviewer.codec.source import Source

#: (starts, ends, kind codes, owner numbers): one row per byte range
Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: (offsets, lengths) of every tensor's ``data`` component as ``uint64`` columns
#: (:func:`~ztviewer.codec.span_columns.span_columns`)
Spans = tuple[np.ndarray, np.ndarray]

UNOWNED_KINDS = ("padding", "gap", "unparsed")
NO_OWNER = -1
MAX_ALIGNMENT = 1 << 16
FORMAT_ALIGNMENT = {"zt": 64}
NEAR = 4096              # spans at most this far apart are read together
PIECE_BYTES = 1 << 20    # and a piece starts at least at every MiB boundary, which bounds its size


def padding_alignment(tf: TensorFile, spans: Spans | None) -> int:
    """Alignment up to which zero bytes after a range count as padding: the largest power of two (up to
    64 KiB) dividing every non-zero component offset, and at least the format's own (64 for zTensor).
    ``spans``: the columns of every tensor's ``data`` component when all are plain and untouched, else ``None``
    (the components are then looked at one by one)."""
    if spans is not None:
        offsets, lengths = spans
        used = offsets[(offsets > 0) & (lengths > 0)]
        alignment = int((used & (~used + np.uint64(1))).min()) if len(used) else MAX_ALIGNMENT   # lowest set bits
    else:
        alignment = min((c.offset & -c.offset for t in tf.tensors for c in t.components.values()
                         if c.offset > 0 and c.length), default=MAX_ALIGNMENT)
    return max(min(alignment, MAX_ALIGNMENT), FORMAT_ALIGNMENT.get(tf.format, 1))


def unowned_columns(tf: TensorFile, starts: np.ndarray, ends: np.ndarray, kind_names: list[str],
                    spans: Spans | None) -> Columns:
    """Columns of the bytes between owned ranges: zero padding up to the next alignment boundary after a
    range, gaps for the rest (everything is "unparsed" in a file the reader could not parse); ``spans`` as
    :func:`padding_alignment` takes them."""
    size = tf.size
    hole_starts = np.concatenate([[0], ends]).astype(np.int64)
    hole_ends = np.concatenate([starts, [size]]).astype(np.int64)
    holes = hole_ends > hole_starts
    hole_starts, hole_ends = hole_starts[holes], hole_ends[holes]
    alignment = padding_alignment(tf, spans)
    boundaries = np.minimum(hole_ends, -(-hole_starts // alignment) * alignment)
    padded = hole_starts < boundaries
    if tf.source is not None:     # a multi-file set has no bytes of its own to read
        padded[padded] = zero_spans(tf.source, hole_starts[padded], boundaries[padded])
    else:
        padded[:] = False
    rest_starts = np.where(padded, boundaries, hole_starts)
    rest = rest_starts < hole_ends
    if tf.readable:
        padding_kind, gap_kind = kind_names.index("padding"), kind_names.index("gap")
    else:
        padding_kind = gap_kind = kind_names.index("unparsed")
    gap_starts = np.concatenate([hole_starts[padded], rest_starts[rest]])
    gap_ends = np.concatenate([boundaries[padded], hole_ends[rest]])
    kinds = np.concatenate([np.full(int(padded.sum()), padding_kind, np.int16),
                            np.full(int(rest.sum()), gap_kind, np.int16)])
    return gap_starts, gap_ends, kinds, np.full(len(gap_starts), NO_OWNER, np.int64)


def zero_spans(source: Source, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For sorted, non-overlapping spans ``[starts[i], ends[i])``: whether every byte is zero (bytes past the
    end of the file count as zero, as an empty read has no non-zero byte)."""
    zero = np.ones(len(starts), bool)
    if not len(starts):
        return zero
    apart = (starts[1:] - ends[:-1] > NEAR) | (starts[1:] // PIECE_BYTES != starts[:-1] // PIECE_BYTES)
    firsts = np.concatenate([[0], np.flatnonzero(apart) + 1]).tolist()
    for first, stop in zip(firsts, firsts[1:] + [len(starts)], strict=True):
        low = int(starts[first])
        piece = np.frombuffer(source.window(low, int(ends[stop - 1]) - low), np.uint8)
        a = np.minimum(starts[first:stop] - low, len(piece))
        b = np.minimum(ends[first:stop] - low, len(piece))
        inside = np.flatnonzero(a < b)          # the others lie past the end of the file: zero
        if not len(inside):
            continue
        # one pass over the piece: the largest byte of [a0, b0), [b0, a1), [a1, b1), ... (reduceat's indices stay
        # inside the piece; a last span that runs to its end is reduced to the end)
        bounds = np.column_stack([a[inside], b[inside]]).ravel()
        if bounds[-1] == len(piece):
            bounds = bounds[:-1]
        zero[first + inside] = np.maximum.reduceat(piece, bounds)[::2] == 0
    return zero
