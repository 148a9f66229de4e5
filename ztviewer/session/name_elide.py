"""Shortening dotted tensor names to a width without losing what tells them apart.

``model.layers.12.self_attn.q_proj.weight`` in a narrow column becomes ``…layers.12…q_proj.weight``: whole
segments go first, starting with those that say least (leading words, words between an index and the tail),
while layer indices and the last two segments stay as long as anything else can go. Only when that is not
enough is the result cut in the middle by the caller.
"""
from __future__ import annotations

from collections.abc import Callable

ELLIPSIS = "…"


def _is_index(segment: str) -> bool:
    return segment.isdigit()


def _drop_order(parts: list[str]) -> list[int]:
    """Positions of the segments in the order they are dropped."""
    last = len(parts) - 2                     # the last two segments stay
    words = [i for i in range(last) if not _is_index(parts[i])]
    before_index = [i for i in words if i + 1 < len(parts) and _is_index(parts[i + 1])]
    plain = [i for i in words if i not in before_index]
    indices = [i for i in range(last) if _is_index(parts[i])]
    return plain + before_index + indices


def join_kept(parts: list[str], kept: list[bool]) -> str:
    out: list[str] = []
    for part, keep in zip(parts, kept):
        if keep:
            if out and out[-1] != ELLIPSIS:
                out.append(".")
            out.append(part)
        elif not out or out[-1] != ELLIPSIS:
            out.append(ELLIPSIS)
    return "".join(out)


def elide_dotted(name: str, fits: Callable[[str], bool]) -> str:
    """The longest form of ``name`` that ``fits`` accepts, dropping whole dotted segments (see module doc);
    the shortest such form when none fits (the caller cuts it further)."""
    if fits(name):
        return name
    parts = name.split(".")
    if len(parts) < 3:
        return name
    kept = [True] * len(parts)
    text = name
    for position in _drop_order(parts):
        kept[position] = False
        text = join_kept(parts, kept)
        if fits(text):
            return text
    return text
