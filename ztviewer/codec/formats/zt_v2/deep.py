"""Whole-file checks too costly for opening, run by ``ztviewer check``: zero padding between blobs (a
warning: §2.4 lets readers ignore it) and each resolved shard's whole-file digest (§7.3 rung 3)."""
from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import xxhash

import ztviewer.codec.formats.zt_v2.rules as rules

from ...errors import Cancelled
from ...model import Problem, TensorFile, error, warning
from ...source import Source
from ..magic import ZT_V2_MAGIC as MAGIC
from .generations import Generation, search_generations

CHUNK = 8 << 20
#: when opening stopped the generation search at its budget and check finds non-zero padding, it searches again
#: reading up to this many times the file's size (padding, footers, candidate manifests): the padding may be theirs
CHECK_SEARCH_FILES = 2
CancelCheck = Callable[[], bool]


def deep_checks(tf: TensorFile, cancelled: CancelCheck | None = None) -> list[Problem]:
    if tf.format != "zt-v2" or tf.source is None or not tf.readable:
        return []
    problems = padding_problems(tf, cancelled)
    for name, source in tf.shard_sources.items():
        entry = tf.extra["_shards"][name]
        actual = file_digest(source, entry.digest.partition(":")[0], cancelled)
        if actual != entry.digest:
            problems.append(error(f"shard {name!r} ({source.path}) has digest {actual}; the root records "
                                  f"{entry.digest}", rule=rules.SHARD_IDENTITY))
    return problems


def file_digest(source: Source, algorithm: str, cancelled: CancelCheck | None = None) -> str:
    """``<algorithm>:<hex>`` of a whole file, streamed."""
    hasher = xxhash.xxh3_64() if algorithm == "xxh3" else hashlib.sha256()
    for start in range(0, source.size, CHUNK):
        if cancelled is not None and cancelled():
            raise Cancelled()
        hasher.update(source.view(start, min(CHUNK, source.size - start)))
    return f"{algorithm}:{hasher.hexdigest()}"


def padding_problems(tf: TensorFile, cancelled: CancelCheck | None = None) -> list[Problem]:
    """A warning for each run of non-zero bytes that no blob, manifest or footer of the current generation
    or an earlier one accounts for, read :data:`CHUNK` bytes at a time (never through the whole file's map).
    Zero padding everywhere also proves no generation went unlisted (each leaves at least its footer there), so
    only when some is found and opening's search had stopped at its budget does a search reading up to
    :data:`CHECK_SEARCH_FILES` times the file's size look for the generations that may account for it."""
    listed: list[Generation] = list(tf.extra.get("_generations") or ())
    problems = _padding_runs(tf, listed, cancelled)
    if not problems or not tf.extra.get("_generations_stopped") or tf.source is None:
        return problems
    search = search_generations(tf, budget=CHECK_SEARCH_FILES * tf.source.size)
    if search.generations == listed and not search.stopped:
        return problems  # none of it was a generation's
    return _padding_runs(tf, search.generations, cancelled, search.stopped)


def _padding_runs(tf: TensorFile, generations: list[Generation], cancelled: CancelCheck | None,
                  search_stopped: bool = False) -> list[Problem]:
    source = tf.source
    assert source is not None
    known = [(0, len(MAGIC))] + [(r.offset, r.end) for r in tf.regions]
    known += [(c.offset, c.end) for t in tf.tensors for c in t.components.values() if c.shard is None]
    for g in generations:
        known += [(g.manifest_offset, g.manifest_offset + g.manifest_length), (g.footer_offset, g.end)]
        known += [(offset, offset + length) for offset, length in g.blobs]
    known.sort()
    maybe = (" (the search for earlier generations stopped at its budget: they may be one's manifest or footer)"
             if search_stopped else "")
    problems: list[Problem] = []
    cursor = 0
    for start, end in known + [(source.size, source.size)]:
        if start > cursor:
            for at in range(cursor, start, CHUNK):
                if cancelled is not None and cancelled():
                    raise Cancelled()
                chunk = np.frombuffer(source.read(at, min(CHUNK, start - at), "padding"), dtype=np.uint8)
                if chunk.any():
                    first = at + int(np.argmax(chunk != 0))
                    problems.append(warning(f"non-zero bytes in the padding [{cursor}, {start}), first at {first}"
                                            + maybe, offset=first, rule=rules.PADDING))
                    break
        cursor = max(cursor, end)
    return problems
