"""Sources for the shards of a multi-file set: many files open at once, few descriptors and maps held.

A set of 1,000 shards must not keep 1,000 descriptors and 1,000 maps (macOS allows 256 descriptors per
process by default). A :class:`ShardSource` is made from what :func:`read_head` read when the shard was
opened: its first :data:`HEAD_BYTES` with one ``read`` (the rest of a longer safetensors header with a second
one), the file closed again; it maps the file only when bytes past that head are asked for. A
:class:`SourcePool` keeps at most ``max_mapped`` shards mapped and parks the least recently used one when another
needs its map. A parked shard maps again on its next access, after checking that the file still has the size and
modification time it had when the set was opened.
"""
from __future__ import annotations

import errno
import mmap
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import BinaryIO

from ..errors import CodecError
from ..file_stamps import file_stamp
from ..io.base import CHUNK, ended, reporting
from ..io.protocol import CancelCheck, Progress
from ..portable import O_BINARY, O_CLOEXEC, NotARegularFile, file_kind, open_regular, open_regular_fd
from ..source import (
    LOCAL_FILE,
    PREAD_LIMIT,
    Source,
    close_all,
    drop_mapped_pages,
    file_changed,
    map_file,
    path_replaced,
    positional_chunks,
)

HEAD_BYTES = 64 << 10  # the length prefix and the whole header of nearly every shard
KEPT_HEAD_BYTES = 4096  # of a head read past its header, what is kept
#: Least bytes read first when a set's previous shard suggests fewer (:func:`next_first_read`).
MIN_FIRST_READ = 512
MAX_HEAD_BYTES = 16 << 20  # a longer safetensors header is read through the map
MAX_MAPPED = 64
#: Flags that open a file without following a link in the last step of its path and without blocking (a FIFO),
#: where the system has both; else 0 (open with :func:`~ztviewer.codec.portable.open_regular_fd` instead).
_NO_FOLLOW, _NO_BLOCK = getattr(os, "O_NOFOLLOW", 0), getattr(os, "O_NONBLOCK", 0)
NO_LINK_FLAGS = os.O_RDONLY | O_BINARY | O_CLOEXEC | _NO_FOLLOW | _NO_BLOCK if _NO_FOLLOW and _NO_BLOCK else 0
#: What :func:`read_head` found: the file's stamp (size, modification time, file number) and its head.
Head = tuple[tuple[int, int, int], bytes]


def read_head(path: str, fd: int | None = None, first: int = HEAD_BYTES) -> Head:
    """Stamp and head of a regular file: its first ``first`` bytes (and the rest of a longer safetensors header,
    up to :data:`MAX_HEAD_BYTES`), of which no more than the header (or :data:`KEPT_HEAD_BYTES`) is kept. Reads
    ``fd`` when given (opened with :data:`NO_LINK_FLAGS`), else opens ``path`` with
    :func:`~ztviewer.codec.portable.open_regular_fd`; the descriptor is closed. Anything but a regular file
    raises :class:`~ztviewer.codec.portable.NotARegularFile`."""
    if fd is None:
        fd = open_regular_fd(path)  # a FIFO or device named as a shard would block or never end
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise NotARegularFile(errno.EINVAL, f"{file_kind(found.st_mode)}, not a regular file", path)
        head = os.read(fd, first)
        if len(head) >= 8:
            end = 8 + int.from_bytes(head[:8], "little")
            if len(head) < end <= min(found.st_size, MAX_HEAD_BYTES):
                head += os.read(fd, end - len(head))
            elif len(head) > max(end, KEPT_HEAD_BYTES):
                head = head[:max(end, KEPT_HEAD_BYTES)]
    finally:
        os.close(fd)
    return file_stamp(found), head


def next_first_read(head: bytes) -> int:
    """How many bytes to read first from the next shard of a set, after one whose :func:`read_head` is ``head``: its
    header and a margin (the shards of a set have headers of about the same length; the bytes read past a header
    cost as much as the syscall itself), at least :data:`MIN_FIRST_READ`, at most :data:`HEAD_BYTES`."""
    end = 8 + int.from_bytes(head[:8], "little")
    return min(HEAD_BYTES, max(MIN_FIRST_READ, end + (end >> 3)))


class ShardChanged(CodecError):
    """A shard file was replaced or resized on disk after the set was opened."""


class SourcePool:
    """Bounds how many :class:`ShardSource` objects hold an open file and map at the same time.

    Parameters
    ----------
    max_mapped:
        Most shards mapped at once (default :data:`MAX_MAPPED`); mapping one more parks the least recently
        used.
    """

    def __init__(self, max_mapped: int | None = None) -> None:
        self.max_mapped = max(1, MAX_MAPPED if max_mapped is None else max_mapped)
        self.lock = threading.RLock()
        self._mapped: OrderedDict[int, ShardSource] = OrderedDict()

    def touch(self, source: ShardSource) -> None:
        """Mark ``source`` as just used (call with :attr:`lock` held)."""
        key = id(source)
        if key in self._mapped:
            self._mapped.move_to_end(key)
            return
        self._mapped[key] = source
        while len(self._mapped) > self.max_mapped:
            _, oldest = self._mapped.popitem(last=False)
            oldest.park()

    def forget(self, source: ShardSource) -> None:
        with self.lock:
            self._mapped.pop(id(source), None)

    @property
    def mapped_count(self) -> int:
        return len(self._mapped)


class ShardSource(Source):
    """A shard's bytes: the head read once at open, the rest through a map the pool may park.

    Parameters
    ----------
    path:
        The shard file.
    pool:
        The pool shared by every shard of the set.
    head:
        What :func:`read_head` read of the file, if the caller did it; else it is done here.
    """

    capabilities = LOCAL_FILE
    # not mapped, not closed until said otherwise (class defaults: a set makes thousands of these)
    _file: BinaryIO | None = None
    _map: mmap.mmap | None = None
    _buffer: memoryview | None = None
    _closed = False

    def __init__(self, path: str, pool: SourcePool, head: Head | None = None) -> None:
        self.path = path
        self._pool = pool
        self._stamp, self._head = read_head(path) if head is None else head
        self.size = self._stamp[0]

    @property
    def stamp(self) -> tuple[int, int, int]:
        return self._stamp

    @property
    def holds_file(self) -> bool:
        return self._file is not None

    def bytes_changed(self, within: int | None = None) -> str | None:
        """How the mapped file differs from when the set was opened (``None`` while parked: mapping it again
        checks)."""
        return file_changed(self._file, self._stamp, within)

    def path_changed(self) -> str | None:
        return None if self._file is None else path_replaced(self.path, self._stamp)

    # -- the map -----------------------------------------------------------------------------------------
    def _mapped(self) -> memoryview:
        """The whole file's view, mapping it again if parked (call with the pool lock held)."""
        if self._closed:
            raise ValueError(f"{self.path} is closed")
        if self._map is None:
            file = open_regular(self.path)
            try:
                stat = os.fstat(file.fileno())
                if file_stamp(stat) != self._stamp:
                    raise ShardChanged(f"{self.path} changed on disk since the set was opened "
                                       f"({self._stamp[0]} → {stat.st_size} bytes); open the set again",
                                       rule="shards must not change while open")
                self._map = map_file(file.fileno(), self)
            except BaseException:
                file.close()
                raise
            self._file = file
            self._buffer = memoryview(self._map)
        self._pool.touch(self)
        return self._buffer  # type: ignore[return-value]

    def park(self) -> None:
        """Close the map and the file; views still held elsewhere keep the old map alive until collected."""
        close_all(self._buffer, self._map, self._file)
        self._buffer = self._map = self._file = None

    def release(self) -> None:
        """Park: the next access maps the file again after checking it did not change."""
        with self._pool.lock:
            self.park()
            self._pool.forget(self)

    @property
    def prefix(self) -> bytes:
        """The bytes read at open (:func:`read_head`): at least the whole header, if it is not too long."""
        return self._head

    @property
    def is_mapped(self) -> bool:
        return self._map is not None

    # -- Source API --------------------------------------------------------------------------------------
    def view(self, offset: int, length: int, what: str = "range", **where: str | None) -> memoryview:
        self.check_range(offset, length, what, **where)
        end = offset + length
        if end <= len(self._head):
            if self._closed:
                raise ValueError(f"{self.path} is closed")
            return memoryview(self._head)[offset:end]
        with self._pool.lock:
            buffer = self._mapped()
            if self._file is not None:
                self.require_unchanged()
            return buffer[offset:end]

    def read_chunks(self, offset: int, length: int, chunk: int = CHUNK, what: str = "range", *,
                    reuse: bool = False, progress: Progress | None = None, cancelled: CancelCheck | None = None,
                    **where: str | None) -> Iterator[bytes | memoryview]:
        """Positional reads on a descriptor of its own (the pool may park the shared one at any time)."""
        self.check_range(offset, length, what, **where)
        return reporting(self._own_chunks(offset, length, chunk, what, reuse, where), progress, cancelled)

    def _own_chunks(self, offset: int, length: int, chunk: int, what: str, reuse: bool,
                    where: dict[str, str | None]) -> Iterator[bytes | memoryview]:
        fd = self._own_fd()
        try:
            yield from positional_chunks(fd, threading.Lock(), offset, length, chunk, reuse=reuse,
                                         ended_at=lambda at: ended(self.path, at, self.size, what, where))
        finally:
            os.close(fd)

    def reader_fd(self) -> int | None:
        """A descriptor of its own for positional reads from another thread (the caller closes it)."""
        return self._own_fd()

    def _own_fd(self) -> int:
        """The path opened again and checked against the set's stamp, never a copy of the map's descriptor, which
        the pool closes whenever it parks the shard (between the two calls, its number may name another file)."""
        if self._closed:
            raise ValueError(f"{self.path} is closed")
        fd = open_regular_fd(self.path)
        try:
            if file_stamp(os.fstat(fd)) != self._stamp:
                raise ShardChanged(f"{self.path} changed on disk since the set was opened; open the set again",
                                   rule="shards must not change while open")
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read(self, offset: int, length: int, what: str = "range", **where: str | None) -> bytes:
        """From the head, else with positional reads on a descriptor of its own (:meth:`read_chunks`: the pool may
        park the shared one at any time), through the map past :data:`~ztviewer.codec.source.PREAD_LIMIT`."""
        self.check_range(offset, length, what, **where)
        if self._closed:
            raise ValueError(f"{self.path} is closed")
        if offset + length <= len(self._head):
            return self._head[offset:offset + length]
        if length > PREAD_LIMIT:
            return bytes(self.view(offset, length, what, **where))
        return b"".join(bytes(part) for part in self._own_chunks(offset, length, CHUNK, what, False, where))

    def head(self, n: int) -> bytes:
        if n <= len(self._head) or len(self._head) == self.size:
            return self._head[:max(0, n)]
        return bytes(self.view(0, min(n, self.size)))

    def tail(self, n: int) -> bytes:
        start = max(0, self.size - n)
        return bytes(self.view(start, self.size - start))

    def window(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``offset``, clipped at EOF, read with positional reads (for hex views: a
        shard another program truncated shows nothing past its end rather than faulting)."""
        offset = max(0, min(offset, self.size))
        length = min(self.size, offset + max(0, length)) - offset
        if offset + length <= len(self._head) or not length:
            return self._head[offset:offset + length]
        try:
            return b"".join(bytes(part) for part in self.read_chunks(offset, length, what="window"))
        except CodecError:   # the shard changed on disk: the set's warning says so
            return b""

    def drop_pages(self, offset: int, length: int) -> None:
        drop_mapped_pages(self._map, self.size, offset, length)

    def fileno(self) -> int | None:
        with self._pool.lock:
            self._mapped()
            return self._file.fileno() if self._file is not None else None

    @property
    def buffer(self) -> memoryview:
        with self._pool.lock:
            return self._mapped() if self.size else memoryview(b"")

    def close(self) -> None:
        with self._pool.lock:
            self._closed = True
            if self._map is not None or self._file is not None:
                self.park()
                self._pool.forget(self)
