"""Read-only, bounds-checked access to a file's bytes through a memory map."""
from __future__ import annotations

import mmap
import os
import threading
import weakref
from collections.abc import Iterator
from typing import BinaryIO

import ztviewer.codec.portable as portable

from .errors import OutOfBounds, SourceChanged
from .file_stamps import GONE, REPLACED, file_stamp, stamp_difference
from .source_ranges import RangeReader

PREAD_LIMIT = 16 << 20  # larger reads go through the map


class _MapRecord:
    """What is known of a map's file: its :class:`Source` (held weakly), its path and its stamp when mapped."""

    __slots__ = ("path", "source", "stamp", "within")

    def __init__(self, source: Source) -> None:
        self.source, self.path, self.stamp = weakref.ref(source), source.path, source._stamp
        self.within = source._within


_SOURCES_OF_MAPS: weakref.WeakKeyDictionary[mmap.mmap, _MapRecord] = weakref.WeakKeyDictionary()


def _record_of(mapped: object) -> _MapRecord | None:
    try:
        record: _MapRecord | None = _SOURCES_OF_MAPS.get(mapped)  # type: ignore[call-overload]  # a non-map: TypeError
    except TypeError:  # not weakly referenceable: not a map
        return None
    return record


def source_of_map(mapped: object) -> Source | None:
    """The open :class:`Source` whose map ``mapped`` is (so a view of it can be read with positional reads
    instead of page faults), or ``None``."""
    record = _record_of(mapped)
    return record.source() if record is not None else None


def remember_map(mapped: mmap.mmap, source: Source) -> None:
    """Let :func:`source_of_map` find ``source`` from its map (held weakly on both sides)."""
    _SOURCES_OF_MAPS[mapped] = _MapRecord(source)


def map_changed(mapped: object) -> str | None:
    """How the file under ``mapped`` (a map made by a :class:`Source`) differs from when it was mapped, or
    ``None`` (also for objects that are not such maps). Once its source is closed, the path is looked at: a
    file replaced there since counts as changed (the safe answer: the map's own file cannot be reached)."""
    record = _record_of(mapped)
    if record is None:
        return None
    source = record.source()
    if source is not None and source._file is not None:
        return source.bytes_changed()
    try:
        now = file_stamp(os.stat(record.path))
    except OSError:
        return GONE
    return stamp_difference(record.stamp, now, record.within)


def require_map_unchanged(mapped: object) -> None:
    """Raise :class:`SourceChanged` when :func:`map_changed` says the file under ``mapped`` changed."""
    why = map_changed(mapped)
    if why is not None:
        record = _record_of(mapped)
        path = record.path if record is not None else "the file"
        raise SourceChanged(f"{path} changed on disk since it was opened: {why}; reload it",
                            rule="an open file must not change under the reader")


class Source:
    """A file's bytes, mapped read-only. Every slice is checked against the file size.

    Headers and footers are read with positional reads (``os.pread``, or seek and read under a lock where the
    system lacks it: :func:`.portable.pread`); the map is created on first access to data (a view, the
    buffer, or a read larger than :data:`PREAD_LIMIT`), so opening a huge file costs the same as a tiny one.
    A zero-byte file cannot be mapped; it is represented by an empty buffer.
    ``Source.from_bytes`` wraps in-memory data the same way (tests, fuzzing).
    """

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

    @classmethod
    def from_bytes(cls, data: bytes | bytearray, path: str = "<memory>") -> Source:
        self = cls.__new__(cls)
        self.path = path
        self._file = None
        self._map = None
        self.size = len(data)
        self._stamp = (self.size, 0, 0)
        self._buffer = memoryview(bytes(data))
        self._lock = threading.Lock()
        self._released = False
        return self

    def changed(self) -> str | None:
        """How the file differs from when it was opened, or ``None``: its bytes (:meth:`bytes_changed`), else its
        name (:meth:`path_changed`: replaced by another file, as a save by rename does, or removed). What the app
        tells the user about and offers to reload. In-memory and closed sources never change."""
        return self.bytes_changed() or self.path_changed()

    def bytes_changed(self) -> str | None:
        """How the open file differs from when it was opened (size, modification time), or ``None``: whether what
        is read is still what the model describes (a file replaced or removed under its name is still whole)."""
        return self._stamp_changed(self._within)

    def read_prefix_only(self, size: int) -> None:
        """Only the first ``size`` bytes of this file are read from now on (an earlier generation of a zTensor v2
        file, read alone): a change after them, such as an append, no longer counts as a change of its bytes, for
        this source and for the views of maps made after this call."""
        self._within = size

    def _stamp_changed(self, within: int | None = None) -> str | None:
        file = self._file
        if file is None or self._released:
            return None
        try:
            now = file_stamp(os.fstat(file.fileno()))
        except (OSError, ValueError):
            return None
        return stamp_difference(self._stamp, now, within)

    def path_changed(self) -> str | None:
        """Whether the path no longer names the open file: another file there (:data:`REPLACED`), none
        (:data:`GONE`), or ``None`` (also when it cannot be told, and for in-memory and closed sources)."""
        if self._file is None or self._released:
            return None
        try:
            now = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            return GONE
        except OSError:
            return None
        then = self._stamp[2]
        return REPLACED if then and now.st_ino and now.st_ino != then else None

    def require_unchanged(self) -> None:
        """Raise :class:`SourceChanged` when the bytes read are no longer the ones the model was read from."""
        why = self.bytes_changed()
        if why is not None:
            raise SourceChanged(f"{self.path} changed on disk since it was opened: {why}; reload it",
                                rule="an open file must not change under the reader")

    def read_chunks(self, offset: int, length: int, chunk: int = 8 << 20, what: str = "range", *,
                    reuse: bool = False, **where: str | None) -> Iterator[bytes | memoryview]:
        """``length`` bytes at ``offset`` as chunks read with positional reads, never through the map: a file
        truncated meanwhile gives a short read (:class:`SourceChanged`), where touching a map past the new end
        kills the process. In-memory sources give views of their buffer. With ``reuse`` every chunk is read
        into one buffer, so a chunk is valid only until the next is requested (no allocation per chunk)."""
        self.check_range(offset, length, what, **where)
        self._reopen_released()
        file = self._file
        if file is None:
            buffer = self._mapped()
            for start in range(offset, offset + length, chunk):
                yield buffer[start:min(start + chunk, offset + length)]
            return
        yield from self._positional(file.fileno(), self._lock, offset, length, chunk, what, where, reuse)

    def _positional(self, fd: int, lock: threading.Lock, offset: int, length: int, chunk: int, what: str,
                    where: dict[str, str | None], reuse: bool = False) -> Iterator[bytes | memoryview]:
        buffer = memoryview(bytearray(min(chunk, length))) if reuse else None
        for start in range(offset, offset + length, chunk):
            want = min(chunk, offset + length - start)
            if buffer is not None:
                got = portable.pread_into(fd, buffer[:want], start, lock)
                if got < want:
                    raise self._ended(start + got, what, where)
                yield buffer[:want]
                continue
            data = portable.pread(fd, want, start, lock)
            while len(data) < want:
                more = portable.pread(fd, want - len(data), start + len(data), lock)
                if not more:
                    raise self._ended(start + len(data), what, where)
                data += more
            yield data

    def _ended(self, at: int, what: str, where: dict[str, str | None]) -> SourceChanged:
        return SourceChanged(f"{self.path} ends at byte {at:,} while reading {what}; it was {self.size:,} bytes "
                             "when opened; reload it", offset=at,
                             rule="an open file must not change under the reader", **where)

    def reader(self, offset: int, length: int, what: str = "range", **where: str | None) -> RangeReader:
        """A file-like reader of ``[offset, offset + length)`` by positional reads (for decompressors)."""
        return RangeReader(self.read_chunks(offset, length, 1 << 17, what, reuse=True, **where))

    def _mapped(self, checked_by: Source | None = None) -> memoryview:
        """The map of the whole file, made on first use once ``checked_by`` (default: this source; a prefix of it
        checks only its own bytes) finds the file unchanged."""
        if self._buffer is None:
            self._reopen_released()
            if self._file is None:
                raise ValueError(f"{self.path} is closed")
            (checked_by or self).require_unchanged()  # a shorter file maps fewer bytes; pages past its end are fatal
            self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
            remember_map(self._map, self)
            self._buffer = memoryview(self._map)
        return self._buffer

    def _pread(self, offset: int, length: int) -> bytes | None:
        """``length`` bytes at ``offset`` without the map (fewer where the file now ends: a truncated file is
        never read through its map, which would be fatal), or ``None`` when the map should serve them (in-memory
        sources, reads past :data:`PREAD_LIMIT`)."""
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

    def check_range(self, offset: int, length: int, what: str = "range", **where: str | None) -> None:
        """Raise :class:`OutOfBounds` unless ``[offset, offset+length)`` lies inside the file."""
        if offset < 0 or length < 0:
            raise OutOfBounds(f"{what} has a negative offset or length ({offset}, {length})",
                              offset=offset, rule="byte ranges must lie inside the file", **where)
        if offset + length > self.size:
            raise OutOfBounds(
                f"{what} [{offset}, {offset + length}) runs past the end of the file ({self.size} bytes)",
                offset=offset, rule="offset + length <= file size", **where,
            )

    def view(self, offset: int, length: int, what: str = "range", **where: str | None) -> memoryview:
        """A zero-copy view of ``length`` bytes at ``offset`` (refused once the file changed on disk)."""
        self.check_range(offset, length, what, **where)
        if length and self._file is not None:
            self.require_unchanged()
        return self._mapped()[offset:offset + length]

    def read(self, offset: int, length: int, what: str = "range", **where: str | None) -> bytes:
        """A copy of ``length`` bytes at ``offset`` (read without mapping the file when small)."""
        self.check_range(offset, length, what, **where)
        data = self._pread(offset, length)
        if data is None:
            return bytes(self.view(offset, length, what, **where))
        if len(data) < length:
            raise self._ended(offset + len(data), what, where)
        return data

    def head(self, n: int) -> bytes:
        return self.window(0, n)

    def tail(self, n: int) -> bytes:
        start = max(0, self.size - n)
        return self.window(start, self.size - start)

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
        mapped = self._map
        if mapped is None or not hasattr(mapped, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
            return
        start = max(0, offset) // mmap.PAGESIZE * mmap.PAGESIZE
        end = min(self.size, offset + length)
        if end > start:
            try:
                mapped.madvise(mmap.MADV_DONTNEED, start, end - start)
            except (OSError, ValueError):  # advice only: a closed map or a refused range changes nothing
                pass

    def fileno(self) -> int | None:
        """The OS file descriptor of the mapped file (``None`` for in-memory sources); lets writers copy
        unchanged byte ranges in the kernel (``os.copy_file_range``) even after the path was replaced."""
        self._reopen_released()
        return self._file.fileno() if self._file is not None else None

    def reader_fd(self) -> int | None:
        """A descriptor of its own for positional reads from another thread (the caller closes it), ``None`` for
        in-memory sources: a duplicate where the system has ``os.pread`` (positional reads share no position),
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
        if self._buffer is not None:
            try:
                self._buffer.release()
            except BufferError:
                pass
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:
                pass
            self._map = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
