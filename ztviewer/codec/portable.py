"""Stand-ins for operating-system calls that only some platforms have.

Every function here looks the optional call up when it is called (``getattr(os, "pread", None)``,
``import fcntl``) and falls back to something every platform has when it is missing, so the choice is made by
feature test, never by platform name, and a test that removes the calls exercises the fallbacks for real.

- :func:`pread`: ``os.pread`` (Unix), else ``lseek`` + ``read`` under the caller's lock; :func:`pread_into` the
  same into a caller's buffer (``os.preadv``).
- :func:`resident_pages`, :func:`all_resident`: ``mincore(2)`` through ctypes (Linux),
  ``None`` elsewhere; :func:`libc_call` looks such a C library function up.
- :func:`advise`: ``os.posix_fadvise`` (read-ahead hints, dropping cached pages), a no-op where it is missing.
- :func:`copy_file_range`, :func:`sendfile`, :func:`splice`: the kernel copy calls, ``None`` when absent;
  the writer then copies through the source's memory map.
- :func:`enlarge_pipe`: ``fcntl(F_SETPIPE_SZ)`` where ``fcntl`` exists (Linux).
- :func:`open_regular`: ``open(path, "rb")`` that refuses FIFOs, devices and sockets before they can block.
- :func:`lock_for_writing` / :func:`held_by_nobody`: ``flock`` where ``fcntl`` exists (stale temporaries).
- :func:`replace`: ``os.replace``, releasing the open target's file and map first where the system refuses to
  replace a file that is open or mapped (Windows).
"""
from __future__ import annotations

import ctypes
import errno
import gc
import os
import stat
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO

#: flag that keeps Windows' C runtime from translating line ends on descriptors from ``os.open``.
O_BINARY: int = getattr(os, "O_BINARY", 0)
#: flag that keeps a descriptor from leaking into child processes, where the system knows it.
O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_F_SETPIPE_SZ = 1031  # Linux's fcntl command; the fcntl module names it only from Python 3.10 on Linux


def pread(fd: int, length: int, offset: int, lock: threading.Lock) -> bytes:
    """Up to ``length`` bytes at ``offset`` of ``fd``, without disturbing other readers of ``fd``.

    Without ``os.pread`` the descriptor's position is moved with ``lseek`` and read with ``read``; ``lock``
    must be held by every reader of ``fd`` so two threads never interleave the seek and the read.
    """
    positional = getattr(os, "pread", None)
    if positional is not None:
        data: bytes = positional(fd, length, offset)
        return data
    with lock:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, length)


def pread_into(fd: int, buffer: memoryview, offset: int, lock: threading.Lock) -> int:
    """Fill ``buffer`` from ``offset`` of ``fd`` as far as the file goes; the number of bytes read (short only at
    the end of the file). ``os.preadv`` reads straight into the buffer; without it, :func:`pread` and a copy."""
    vectored: Callable[..., int] | None = getattr(os, "preadv", None)
    filled = 0
    while filled < len(buffer):
        if vectored is not None:
            got = vectored(fd, [buffer[filled:]], offset + filled)
        else:
            data = pread(fd, len(buffer) - filled, offset + filled, lock)
            got = len(data)
            buffer[filled:filled + got] = data
        if not got:
            break
        filled += got
    return filled


def libc_call(name: str, *argtypes: Any) -> Any:
    """The C library's function ``name`` declared with ``argtypes`` and an ``int`` result, where the system has it
    (Linux), else ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        call = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    call.argtypes = argtypes
    call.restype = ctypes.c_int
    return call


def _mincore() -> Any:
    global _MINCORE
    if _MINCORE is None:
        _MINCORE = libc_call("mincore", ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p) or False
    return _MINCORE


_MINCORE: Any = None


def resident_pages(mapped: memoryview, offset: int, length: int) -> tuple[int, Any] | None:
    """``(first, flags)``: whether each page of ``mapped[offset:offset + length]`` (a view of a file map) is in the
    page cache (a numpy bool array; ``flags[k]`` is the page at byte ``first + k * mmap.PAGESIZE`` of ``mapped``),
    from ``mincore(2)`` where the system has it (Linux), else ``None``."""
    call = _mincore()
    if not call or length <= 0:
        return None
    import mmap

    import numpy as np

    page = mmap.PAGESIZE
    base = np.frombuffer(mapped, np.uint8).ctypes.data
    start = (base + offset) // page * page
    pages = -(-(base + offset + length - start) // page)
    vec = np.zeros(pages, np.uint8)
    if call(ctypes.c_void_p(start), ctypes.c_size_t(pages * page), ctypes.c_void_p(vec.ctypes.data)) != 0:
        return None
    return start - base, (vec & 1).astype(bool)


def all_resident(mapped: memoryview, offsets: Iterable[int], length: int) -> bool | None:
    """Whether every page of each span ``mapped[offset:offset + length]`` (a view of a file map) is in the page
    cache: :func:`resident_pages` for many spans of one length at a fraction of the cost (the map's address looked
    up once, one result buffer, one ``mincore(2)`` call per span); ``None`` where the system cannot tell."""
    call = _mincore()
    if not call or length <= 0:
        return None
    import mmap

    import numpy as np

    page = mmap.PAGESIZE
    base = np.frombuffer(mapped, np.uint8).ctypes.data
    vec = ctypes.create_string_buffer(-(-length // page) + 1)
    for offset in offsets:
        start = (base + offset) // page * page
        pages = -(-(base + offset + length - start) // page)
        if call(start, pages * page, vec) != 0:
            return None
        if vec.raw[:pages].translate(None, _RESIDENT_FLAGS):   # a page whose flag (bit 0) is clear
            return False
    return True


#: ``mincore`` result bytes with the residency bit set (the other bits are reserved)
_RESIDENT_FLAGS = bytes(b for b in range(256) if b & 1)


def advise(fd: int, offset: int, length: int, advice: str) -> bool:
    """``os.posix_fadvise(fd, offset, length, os.POSIX_FADV_<advice>)`` where the system has it (``WILLNEED``:
    start reading the range in the background; ``DONTNEED``: drop its clean cached pages). Returns whether the
    advice was given; advice that is refused changes nothing."""
    call: Callable[..., None] | None = getattr(os, "posix_fadvise", None)
    flag = getattr(os, f"POSIX_FADV_{advice}", None)
    if call is None or flag is None:
        return False
    try:
        call(fd, offset, length, flag)
    except OSError:
        return False
    return True


def copy_file_range(src: int, dst: int, count: int, offset_src: int, offset_dst: int) -> int | None:
    """``os.copy_file_range`` (Linux), or ``None`` where the system lacks it."""
    call: Callable[..., int] | None = getattr(os, "copy_file_range", None)
    return None if call is None else call(src, dst, count, offset_src, offset_dst)


def sendfile(out_fd: int, in_fd: int, offset: int, count: int) -> int | None:
    """``os.sendfile`` between files (Linux; macOS sends only to sockets), or ``None`` where it is absent."""
    call: Callable[..., int] | None = getattr(os, "sendfile", None)
    return None if call is None else call(out_fd, in_fd, offset, count)


def has_kernel_copy() -> bool:
    return hasattr(os, "copy_file_range")


def has_sendfile() -> bool:
    return hasattr(os, "sendfile")


def has_splice() -> bool:
    return hasattr(os, "splice")


def splice(src: int, dst: int, count: int, offset_src: int | None = None) -> int:
    """``os.splice`` (Linux); call only after :func:`has_splice`."""
    call: Callable[..., int] = getattr(os, "splice")  # noqa: B009  (os.splice is not declared on every platform)
    if offset_src is None:
        return call(src, dst, count)
    return call(src, dst, count, offset_src=offset_src)


def enlarge_pipe(fd: int, size: int) -> None:
    """Ask for a pipe buffer of ``size`` bytes where the system allows it; otherwise keep the default."""
    try:
        import fcntl
    except ImportError:
        return
    call: Any = getattr(fcntl, "fcntl", None)
    if call is None:
        return
    try:
        call(fd, _F_SETPIPE_SZ, size)
    except OSError:
        pass


def replace(src: str, dst: str, release: Callable[[], None] | None = None) -> None:
    """``os.replace(src, dst)``; when the system refuses because ``dst`` is open or mapped (Windows), call
    ``release`` (which closes this process's file and map of ``dst``) and try once more."""
    _released_if_refused(lambda: os.replace(src, dst), release, PermissionError)


def truncate(fd: int, length: int, release: Callable[[], None] | None = None) -> None:
    """``os.ftruncate(fd, length)``; when the system refuses because the file is mapped (Windows), call
    ``release`` (which closes this process's maps of the file) and try once more."""
    _released_if_refused(lambda: os.ftruncate(fd, length), release, OSError)


def _released_if_refused(attempt: Callable[[], None], release: Callable[[], None] | None,
                         refusal: type[OSError]) -> None:
    try:
        attempt()
        return
    except refusal:
        if release is None:
            raise
    release()
    gc.collect()  # views of the old map that only a reference cycle keeps alive
    attempt()


def lock_for_writing(fd: int) -> None:
    """Hold an advisory lock on ``fd`` for as long as it is open (``flock`` where ``fcntl`` exists), so that
    :func:`held_by_nobody` can tell a temporary file being written from one a killed process left behind."""
    _try_exclusive_flock(fd)


def held_by_nobody(path: str) -> bool | None:
    """Whether no process holds the lock of :func:`lock_for_writing` on ``path`` (its writer died); ``None``
    where the system has no ``flock`` (there, an open file cannot be deleted: Windows)."""
    if _flock() is None:
        return None
    try:
        flags = os.O_RDONLY | O_CLOEXEC | O_BINARY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        return _try_exclusive_flock(fd) is True
    finally:
        os.close(fd)


def _flock() -> tuple[Callable[[int, int], None], int] | None:
    """``(fcntl.flock, LOCK_EX | LOCK_NB)`` where the system has them, else ``None`` (Windows)."""
    try:
        import fcntl
    except ImportError:
        return None
    call, exclusive, nonblocking = (getattr(fcntl, name, None) for name in ("flock", "LOCK_EX", "LOCK_NB"))
    if call is None or exclusive is None or nonblocking is None:
        return None
    return call, exclusive | nonblocking


def _try_exclusive_flock(fd: int) -> bool | None:
    """Take an exclusive advisory lock without waiting: ``True`` taken, ``False`` held by another open file,
    ``None`` where there is no ``flock``."""
    found = _flock()
    if found is None:
        return None
    call, flags = found
    try:
        call(fd, flags)
    except OSError:
        return False
    return True


class NotARegularFile(OSError):
    """The path names a FIFO, device, socket or directory: reading it could block forever or never end."""


def file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str) -> BinaryIO:
    """``open(path, "rb")`` for regular files only (symbolic links followed): a FIFO, device or socket raises
    :class:`NotARegularFile` before anything could block (see :func:`open_regular_fd`)."""
    return os.fdopen(open_regular_fd(path), "rb")


def open_regular_fd(path: str) -> int:
    """A read-only descriptor of ``path`` if it is a regular file, else :class:`NotARegularFile`. The type is
    checked before opening and again on the open descriptor (``O_NONBLOCK`` where the system has it, so even a
    FIFO swapped in meanwhile cannot hang the open)."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotARegularFile(errno.EINVAL, f"{file_kind(mode)}, not a regular file", path)
    fd = os.open(path, os.O_RDONLY | O_BINARY | O_CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(errno.EINVAL, f"{file_kind(mode)}, not a regular file", path)
    except BaseException:
        os.close(fd)
        raise
    return fd
