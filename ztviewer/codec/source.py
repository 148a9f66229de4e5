"""Read-only, bounds-checked access to a local file's bytes through a memory map (:class:`LocalFile`).

:class:`Source`, the base of every source, and :class:`InMemorySource` are those of :mod:`.io`, named here too.
"""
from __future__ import annotations

import errno
import mmap
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, BinaryIO, Protocol

import ztviewer.codec.portable as portable

from .errors import SourceChanged
from .file_stamps import GONE, REPLACED, file_stamp, stamp_difference
from .io.base import CHUNK, Source, ended, reporting
from .io.memory import InMemorySource
from .io.protocol import CancelCheck, Capabilities, Progress, Stamp

__all__ = ["LOCAL_FILE", "PREAD_LIMIT", "InMemorySource", "LocalFile", "Source", "positional_chunks"]

PREAD_LIMIT = 16 << 20  # larger reads go through the map
LOCAL_FILE = Capabilities(views=True, mapped=True, descriptor=True)
#: a local file the process could not map (its address space is too small for it): read, never mapped
UNMAPPED_FILE = Capabilities(views=False, mapped=False, descriptor=True)
#: why mapping a file can fail for want of address space (errno; Windows: not enough memory, paging file too small)
_NO_ROOM = {errno.ENOMEM, errno.EOVERFLOW, errno.EFBIG}
_NO_ROOM_WINDOWS = {8, 1455}


if TYPE_CHECKING:  # (a protocol class costs some 0.1 ms to create at start-up)
    class MappingSource(Protocol):
        """A source that maps a file (:class:`LocalFile`, a shard's source)."""

        path: str

        @property
        def stamp(self) -> Stamp: ...
        @property
        def holds_file(self) -> bool: ...
        def bytes_changed(self, within: int | None = None) -> str | None: ...
        def reader_fd(self) -> int | None: ...


class FileMap(mmap.mmap):
    """A read-only map of a whole file that knows its file: the source that made it (held weakly), its path, its
    stamp when mapped and how much of it matters (``within``: see :meth:`LocalFile.read_prefix_only`). An array
    viewing the map reaches them through its base (:func:`.mapped_pages.map_of`), with no table of maps."""

    __slots__ = ("path", "source", "stamp", "within")
    source: weakref.ref[MappingSource]
    path: str
    stamp: Stamp
    within: int | None


def map_file(fileno: int, source: MappingSource, within: int | None = None) -> FileMap:
    """The whole file open as ``fileno``, mapped read-only, for ``source``."""
    mapped = FileMap(fileno, 0, access=mmap.ACCESS_READ)
    mapped.source, mapped.path, mapped.stamp, mapped.within = weakref.ref(source), source.path, source.stamp, within
    return mapped


def source_of_map(mapped: object) -> MappingSource | None:
    """The open source whose map ``mapped`` is (so a view of it can be read with positional reads instead of page
    faults), or ``None``."""
    return mapped.source() if isinstance(mapped, FileMap) else None


def map_changed(mapped: object) -> str | None:
    """How the file under ``mapped`` (a map made by a :class:`Source`) differs from when it was mapped, or
    ``None`` (also for objects that are not such maps). Once its source is closed, the path is looked at: a
    file replaced there since counts as changed (the safe answer: the map's own file cannot be reached)."""
    if not isinstance(mapped, FileMap):
        return None
    source = mapped.source()
    if source is not None and source.holds_file:
        return source.bytes_changed()
    try:
        now = file_stamp(os.stat(mapped.path))
    except OSError:
        return GONE
    return stamp_difference(mapped.stamp, now, mapped.within)


def require_map_unchanged(mapped: object) -> None:
    """Raise :class:`SourceChanged` when :func:`map_changed` says the file under ``mapped`` changed."""
    why = map_changed(mapped)
    if why is not None:
        path = mapped.path if isinstance(mapped, FileMap) else "the file"
        raise SourceChanged(f"{path} changed on disk since it was opened: {why}; reload it",
                            rule="an open file must not change under the reader")


def positional_chunks(fd: int, lock: threading.Lock, offset: int, length: int, chunk: int, *, reuse: bool = False,
                      ended_at: Callable[[int], Exception]) -> Iterator[bytes | memoryview]:
    """``length`` bytes at ``offset`` of the file ``fd`` in chunks of at most ``chunk`` bytes read with positional
    reads (with ``reuse`` into one buffer, so each chunk is valid until the next); a file ending inside the range
    raises ``ended_at(where it ends)``."""
    buffer = memoryview(bytearray(min(chunk, length))) if reuse else None
    for start in range(offset, offset + length, chunk):
        want = min(chunk, offset + length - start)
        if buffer is not None:
            got = portable.pread_into(fd, buffer[:want], start, lock)
            if got < want:
                raise ended_at(start + got)
            yield buffer[:want]
            continue
        data = portable.pread(fd, want, start, lock)
        while len(data) < want:
            more = portable.pread(fd, want - len(data), start + len(data), lock)
            if not more:
                raise ended_at(start + len(data))
            data += more
        yield data


def file_changed(file: BinaryIO | None, stamp: Stamp, within: int | None = None) -> str | None:
    """How the open ``file`` differs from when it was stamped ``stamp`` (see :func:`.stamp_difference`), or
    ``None``, also for no file and where it cannot be told."""
    if file is None:
        return None
    try:
        now = file_stamp(os.fstat(file.fileno()))
    except (OSError, ValueError):
        return None
    return stamp_difference(stamp, now, within)


def path_replaced(path: str, stamp: Stamp) -> str | None:
    """Whether ``path`` no longer names the file stamped ``stamp``: another file there (:data:`REPLACED`), none
    (:data:`GONE`), or ``None`` (also when it cannot be told)."""
    try:
        now = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return GONE
    except OSError:
        return None
    then = stamp[2]
    return REPLACED if then and now.st_ino and now.st_ino != then else None


def drop_mapped_pages(mapped: mmap.mmap | None, size: int, offset: int, length: int) -> None:
    """Give back the pages of ``[offset, offset + length)`` of the map of a file of ``size`` bytes (see
    :meth:`LocalFile.drop_pages`); a no-op without a map or where ``madvise`` is missing."""
    if mapped is None or not hasattr(mapped, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return
    start = max(0, offset) // mmap.PAGESIZE * mmap.PAGESIZE
    end = min(size, offset + length)
    if end > start:
        try:
            mapped.madvise(mmap.MADV_DONTNEED, start, end - start)
        except (OSError, ValueError):  # advice only: a closed map or a refused range changes nothing
            pass


def close_all(buffer: memoryview | None, mapped: mmap.mmap | None, file: BinaryIO | None) -> None:
    """Release a map's buffer, the map and its file; views still held elsewhere keep the old map alive."""
    if buffer is not None:
        try:
            buffer.release()
        except BufferError:
            pass
    if mapped is not None:
        try:
            mapped.close()
        except BufferError:
            pass
    if file is not None:
        file.close()


class LocalFile(Source):
    """A local file's bytes, mapped read-only. Every slice is checked against the file size.

    Headers and footers are read with positional reads (``os.pread``, or seek and read under a lock where the
    system lacks it: :func:`.portable.pread`); the map is created on first access to data (a view, the
    buffer, or a read larger than :data:`PREAD_LIMIT`), so opening a huge file costs the same as a tiny one.
    A zero-byte file cannot be mapped; it is represented by an empty buffer.
    """

    capabilities: Capabilities = LOCAL_FILE
    _released = False
    _within: int | None = None  # only the first bytes matter: see read_prefix_only

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._file: BinaryIO | None = portable.open_regular(self.path)  # a FIFO would block forever
        try:
            self._stamp = file_stamp(os.fstat(self._file.fileno()))
        except BaseException:
            self._file.close()
            raise
        self.size = self._stamp[0]
        self._map: mmap.mmap | None = None
        self._buffer: memoryview | None = None if self.size else memoryview(b"")
        self._lock = threading.Lock()
        self._released = False

    @property
    def stamp(self) -> Stamp:
        return self._stamp

    @property
    def holds_file(self) -> bool:
        """Whether the file is open (not closed, nor released for now)."""
        return self._file is not None

    def bytes_changed(self, within: int | None = None) -> str | None:
        """How the open file differs from when it was opened (size, modification time; with ``within``, or after
        :meth:`read_prefix_only`, only its first bytes matter), or ``None``: whether what is read is still what
        the model describes (a file replaced or removed under its name is still whole). Closed: ``None``."""
        return None if self._released else file_changed(self._file, self._stamp,
                                                         self._within if within is None else within)

    def read_prefix_only(self, size: int) -> None:
        """Only the first ``size`` bytes of this file are read from now on (an earlier generation of a zTensor v2
        file, read alone): a change after them, such as an append, no longer counts as a change of its bytes, for
        this source and for the views of maps made after this call."""
        self._within = size

    def path_changed(self) -> str | None:
        """Whether the path no longer names the open file: another file there (:data:`REPLACED`), none
        (:data:`GONE`), or ``None`` (also when it cannot be told, and for closed sources)."""
        return None if self._file is None or self._released else path_replaced(self.path, self._stamp)

    def read_chunks(self, offset: int, length: int, chunk: int = CHUNK, what: str = "range", *,
                    reuse: bool = False, progress: Progress | None = None, cancelled: CancelCheck | None = None,
                    **where: str | None) -> Iterator[bytes | memoryview]:
        """``length`` bytes at ``offset`` as chunks read with positional reads, never through the map: a file
        truncated meanwhile gives a short read (:class:`SourceChanged`), where touching a map past the new end
        kills the process. With ``reuse`` every chunk is read into one buffer, so a chunk is valid only until
        the next is requested (no allocation per chunk)."""
        self.check_range(offset, length, what, **where)
        self._reopen_released()
        if self._file is None:
            raise ValueError(f"{self.path} is closed")
        chunks = positional_chunks(self._file.fileno(), self._lock, offset, length, chunk, reuse=reuse,
                                   ended_at=lambda at: ended(self.path, at, self.size, what, where))
        return reporting(chunks, progress, cancelled)

    def _mapped(self, within: int | None = None) -> memoryview:
        """The map of the whole file, made on first use once the file (its first ``within`` bytes, for a prefix
        of it) is found unchanged."""
        if self._buffer is None:
            self._reopen_released()
            if self._file is None:
                raise ValueError(f"{self.path} is closed")
            self.require_unchanged(within)  # a shorter file maps fewer bytes; pages past its end are fatal
            try:
                self._map = map_file(self._file.fileno(), self, self._within)
            except OSError as exc:
                if exc.errno not in _NO_ROOM and getattr(exc, "winerror", None) not in _NO_ROOM_WINDOWS:
                    raise
                self.capabilities = UNMAPPED_FILE  # from now on read, not mapped
                raise MemoryError(f"{self.path} ({self.size:,} bytes) cannot be mapped: {exc.strerror}") from exc
            self._buffer = memoryview(self._map)
        return self._buffer

    def _read_unmapped(self, offset: int, length: int) -> memoryview:
        """``length`` bytes at ``offset`` read into memory of their own (a file too large to map)."""
        data = self._pread(offset, length)
        if data is not None:
            if len(data) < length:
                raise ended(self.path, offset + len(data), self.size, "range", {})
            return memoryview(data)
        gathered = bytearray(length)
        done = 0
        for chunk in self.read_chunks(offset, length, reuse=True):
            gathered[done:done + len(chunk)] = chunk
            done += len(chunk)
        return memoryview(gathered).toreadonly()

    def _pread(self, offset: int, length: int) -> bytes | None:
        """``length`` bytes at ``offset`` without the map (fewer where the file now ends: a truncated file is
        never read through its map, which would be fatal), or ``None`` past :data:`PREAD_LIMIT` (the map
        serves them)."""
        self._reopen_released()
        if self._file is None or length > PREAD_LIMIT:
            return None
        fd = self._file.fileno()
        data = portable.pread(fd, length, offset, self._lock)
        while len(data) < length:  # a short read: the file shrank, or the kernel split the request
            more = portable.pread(fd, length - len(data), offset + len(data), self._lock)
            if not more:
                break
            data += more
        return data

    def view(self, offset: int, length: int, what: str = "range", **where: str | None) -> memoryview:
        """A zero-copy view of ``length`` bytes at ``offset`` (refused once the file changed on disk); a copy
        when the file could not be mapped (then :attr:`capabilities` says so: no views, no map)."""
        return self.view_within(None, offset, length, what, **where)

    def view_within(self, within: int | None, offset: int, length: int, what: str = "range",
                    **where: str | None) -> memoryview:
        self.check_range(offset, length, what, **where)
        if length and self._file is not None:
            self.require_unchanged(within)
        if self.capabilities is UNMAPPED_FILE:
            return self._read_unmapped(offset, length)
        try:
            return self._mapped(within)[offset:offset + length]
        except MemoryError:
            if self.capabilities is not UNMAPPED_FILE:
                raise
            return self._read_unmapped(offset, length)

    def read(self, offset: int, length: int, what: str = "range", **where: str | None) -> bytes:
        """A copy of ``length`` bytes at ``offset`` (read without mapping the file when small)."""
        self.check_range(offset, length, what, **where)
        data = self._pread(offset, length)
        if data is None:
            return bytes(self.view(offset, length, what, **where))
        if len(data) < length:
            raise ended(self.path, offset + len(data), self.size, what, where)
        return data

    def window(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``offset``, clipped at EOF (for hex views)."""
        offset = max(0, min(offset, self.size))
        length = min(self.size, offset + max(0, length)) - offset
        data = self._pread(offset, length)
        return data if data is not None else bytes(self.view(offset, length, "window"))

    def drop_pages(self, offset: int, length: int) -> None:
        """Give back the mapped pages of a range this process has finished reading (they stay in the page cache,
        so reading them again costs a fault, not I/O): streaming a file larger than memory through the map then
        keeps the resident size bounded. A no-op without a map or where ``madvise`` is missing."""
        drop_mapped_pages(self._map, self.size, offset, length)

    def fileno(self) -> int | None:
        """The OS file descriptor of the mapped file (``None`` once closed); lets writers copy
        unchanged byte ranges in the kernel (``os.copy_file_range``) even after the path was replaced."""
        self._reopen_released()
        return self._file.fileno() if self._file is not None else None

    def reader_fd(self) -> int | None:
        """A descriptor of its own for positional reads from another thread (the caller closes it), ``None`` once
        closed: a duplicate where the system has ``os.pread`` (positional reads share no position),
        else the path opened again, refused with :class:`SourceChanged` unless it still has the same size."""
        fd = self.fileno()
        if fd is None:
            return None
        if hasattr(os, "pread"):
            return os.dup(fd)
        own = portable.open_regular_fd(self.path)
        if os.fstat(own).st_size != self.size:
            os.close(own)
            raise SourceChanged(f"{self.path} changed on disk while open", rule="an open file must keep its size")
        return own

    def release(self) -> None:
        """Close the file and the map for now, so the file can be replaced where an open or mapped file cannot
        be (Windows); the next access opens the path again and refuses if its size is no longer the same."""
        if self._file is None:
            return
        self._unmap()
        self._buffer = None if self.size else memoryview(b"")
        self._released = True

    def _reopen_released(self) -> None:
        if not self._released:
            return
        file = portable.open_regular(self.path)  # held until close or release
        stamp = file_stamp(os.fstat(file.fileno()))
        if stamp[0] != self.size:
            file.close()
            raise SourceChanged(f"{self.path} changed on disk while released ({self.size} → {stamp[0]} bytes); "
                                "open it again", rule="an open file must keep its size")
        self._file, self._released, self._stamp = file, False, stamp

    @property
    def buffer(self) -> memoryview:
        return self._mapped()

    def close(self) -> None:
        """Release the map. Views still held elsewhere (numpy arrays) keep it alive until collected."""
        self._released = False
        self._unmap()

    def _unmap(self) -> None:
        """Release the buffer, the map and the file; views still held elsewhere keep the old map alive."""
        close_all(self._buffer, self._map, self._file)
        self._map = self._file = None
