"""Making a file cold (out of the page cache) and checking that it is, for the cold-cache figures.

``posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)`` drops a file's clean cached pages (after an ``fsync`` so none is
dirty); residency is checked with ``mincore(2)`` over a map of the file (ctypes, Linux) or, failing that,
util-linux ``fincore``. Where neither the advice nor a check exists the cold rows are skipped with a message.
"""
from __future__ import annotations

import mmap
import os
import shutil
import subprocess
from pathlib import Path

from ztviewer.codec import portable


def resident_fraction(path: Path) -> float | None:
    """Share of ``path``'s pages in the page cache (0.0 – 1.0), ``None`` when it cannot be told here."""
    size = os.path.getsize(path)
    if not size:
        return 0.0
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm, memoryview(mm) as view:
        pages = portable.resident_pages(view, 0, size)
    if pages is not None:
        return float(pages[1].mean())
    tool = shutil.which("fincore")
    if tool:
        proc = subprocess.run([tool, "--bytes", "--noheadings", "--output", "RES", str(path)], check=False,
                              capture_output=True, text=True)
        if proc.returncode == 0 and proc.stdout.strip().isdigit():
            return int(proc.stdout.strip()) / size
    return None


def why_not_cold() -> str | None:
    """``None`` when this system can make files cold and check it, else the reason (the row's message)."""
    if not hasattr(os, "posix_fadvise"):
        return "no posix_fadvise on this system: cold-cache rows skipped"
    if portable.libc_call("mincore") is None and not shutil.which("fincore"):
        return "neither mincore (ctypes, Linux) nor fincore: cold-cache rows skipped"
    return None


def make_cold(path: Path, limit: float = 0.02) -> float:
    """Drop ``path`` from the page cache; returns the resident fraction afterwards (raises above ``limit``)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    left = resident_fraction(path)
    if left is None or left > limit:
        raise RuntimeError(f"{path} is still {left} resident after POSIX_FADV_DONTNEED")
    return left


def cold_read_seconds(path: Path, offset: int, length: int, chunk: int = 8 << 20) -> float:
    """Seconds to read ``[offset, offset + length)`` of the cold file with sequential ``preadv`` into one buffer:
    the disk's rate, the reference of the cold rows."""
    import time

    make_cold(path)
    buffer = memoryview(bytearray(chunk))
    fd = os.open(path, os.O_RDONLY)
    try:
        start = time.perf_counter()
        done = 0
        while done < length:
            got = os.preadv(fd, [buffer[:min(chunk, length - done)]], offset + done)
            if not got:
                break
            done += got
        return time.perf_counter() - start
    finally:
        os.close(fd)
