"""zTensor v2 (ztensor 2.x, spec Draft 4): magic ``89 5A 54 32 0D 0A 1A 0A``, a 40-byte footer, 4 KiB-aligned
blobs and a deterministic-CBOR manifest of objects and parts.

Public API (all Qt-free):

* :func:`read` — the registry's reader (``open_file`` uses it for any file starting with the v2 magic).
* :func:`find_generations`, :func:`search_generations` (which also says whether its budget stopped it),
  :class:`Generation`, :func:`read_generation_at`, :func:`open_generation` — earlier append generations.
* :func:`content_digest`, :func:`object_content_digest` — ``zt.content/1`` (§6.4), what ``zt id`` prints.
* :func:`deep_checks` — whole-file checks for ``ztviewer check``: padding (with a wider generation search when
  opening's stopped), shard digests.
* :mod:`.rules` — the rule strings problems name.
"""
from __future__ import annotations

from ..magic import ZT_V2_MAGIC as MAGIC
from ..magic import sniff_zt_v2 as sniff
from ..magic import sniff_zt_v2_tail as sniff_tail
from . import rules
from .content import content_digest, object_content_digest
from .deep import deep_checks
from .generations import Generation, GenerationSearch, find_generations, search_generations
from .reader import FORMAT, open_generation, read, read_generation_at

__all__ = [
    "FORMAT",
    "MAGIC",
    "Generation",
    "GenerationSearch",
    "content_digest",
    "deep_checks",
    "find_generations",
    "object_content_digest",
    "open_generation",
    "read",
    "read_generation_at",
    "rules",
    "search_generations",
    "sniff",
    "sniff_tail",
]
