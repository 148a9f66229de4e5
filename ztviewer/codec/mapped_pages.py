"""Giving back the pages of a file map a pass has finished reading.

Pages of a read-only file map that a scan touched count in the process's resident set (RSS / VmHWM) although
the page cache could drop them, so a pass over a 2 GiB component would look like 2 GiB of memory.
:func:`release` tells the kernel a view's pages are no longer needed (``madvise(MADV_DONTNEED)``: for a
read-only shared file mapping the pages leave this process, the data stays in the page cache and is faulted
back in if read again; Linux only, elsewhere nothing happens). :func:`scan` walks a 1-D array in chunks,
releasing each one once the next is asked for, and refusing (:func:`require_unchanged`) once the file changed.
"""
from __future__ import annotations

import ctypes
import mmap
from collections.abc import Iterator

import numpy as np

from .portable import libc_call
from .source import require_map_unchanged

_MADV_DONTNEED = 4
_PAGE = mmap.PAGESIZE
SCAN_CHUNK = 1 << 20
_madvise = libc_call("madvise", ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)


def map_of(array: np.ndarray) -> mmap.mmap | None:
    """The ``mmap.mmap`` under ``array``, if it is a view of one."""
    root = array
    while isinstance(root, np.ndarray) and root.base is not None:
        root = root.base
    if isinstance(root, memoryview):
        root = root.obj
    return root if isinstance(root, mmap.mmap) else None


def require_unchanged(array: np.ndarray) -> None:
    """Raise :class:`~.errors.SourceChanged` when ``array`` is a view of a file map whose file changed on disk
    since it was mapped (another program truncated or rewrote it): touching its pages past the file's new end
    would kill the process (SIGBUS). Call it right before reading a view kept from earlier; arrays that are not
    views of a map pass (one ``fstat`` when they are)."""
    mapped = map_of(array)
    if mapped is not None:
        require_map_unchanged(mapped)


#: numpy 2 moved ``byte_bounds``; looked up once (asking numpy 2 for the old name raises, at ~5 µs a call)
_byte_bounds = getattr(np, "byte_bounds", None) or np.lib.array_utils.byte_bounds


def byte_bounds(view: np.ndarray) -> tuple[int, int]:
    """The addresses ``[low, high)`` of the memory ``view`` spans."""
    return _byte_bounds(view)


def release(view: np.ndarray) -> None:
    """Drop the whole pages under ``view`` from this process's resident set. Does nothing unless ``view`` is a
    view of a file map: on anonymous memory ``MADV_DONTNEED`` would discard the data itself."""
    if _madvise is None or view.size == 0 or map_of(view) is None:
        return
    release_addresses(*byte_bounds(view))


def release_addresses(low: int, high: int) -> None:
    """:func:`release` of the bytes at addresses ``[low, high)``, which the caller knows lie in a file map (a
    pass releasing many parts of one view computes their addresses instead of asking numpy for each)."""
    start = -(-low // _PAGE) * _PAGE  # only pages entirely inside the range
    stop = high // _PAGE * _PAGE
    if _madvise is not None and stop > start:
        _madvise(ctypes.c_void_p(start), ctypes.c_size_t(stop - start), _MADV_DONTNEED)


def scan(array: np.ndarray, chunk: int = SCAN_CHUNK) -> Iterator[np.ndarray]:
    """Consecutive slices of the 1-D ``array`` of at most ``chunk`` elements; the pages of a file map under
    each are released when the next is requested (and after the last), so a pass keeps little resident."""
    mapped = map_of(array) is not None
    for start in range(0, array.shape[0], chunk):
        part = array[start:start + chunk]
        if mapped:
            require_unchanged(part)
        yield part
        if mapped:
            release(part)


def scan_pairs(a: np.ndarray, b: np.ndarray, chunk: int = SCAN_CHUNK) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:func:`scan` of two arrays of one length side by side."""
    yield from zip(scan(a, chunk), scan(b, chunk), strict=True)
