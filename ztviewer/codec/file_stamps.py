"""How a file on disk differs from when it was opened: its stamp (size, modification time, inode) then and now."""
from __future__ import annotations

import os

REPLACED = "it was replaced by another file"
GONE = "it is gone"


def file_stamp(st: os.stat_result) -> tuple[int, int, int]:
    """``(size, modification time in ns, inode)`` of a file's ``stat``."""
    return st.st_size, st.st_mtime_ns, st.st_ino


def stamp_difference(then: tuple[int, int, int], now: tuple[int, int, int], within: int | None = None) -> str | None:
    """How a file stamped ``now`` differs from the one stamped ``then``, or ``None``. With ``within``, only the
    file's first ``within`` bytes matter (an earlier generation of an appended file): it may grow and be touched
    (an append), but it must stay the same file and keep those bytes."""
    replaced = now[2] != then[2] and bool(now[2] and then[2])   # some file systems number no files
    if within is not None:
        if replaced:
            return REPLACED
        return None if now[0] >= within else f"its size changed from {then[0]:,} to {now[0]:,} bytes"
    if now == then:
        return None
    if now[0] != then[0]:
        return f"its size changed from {then[0]:,} to {now[0]:,} bytes"
    return REPLACED if replaced else "it was rewritten (its modification time changed)"
