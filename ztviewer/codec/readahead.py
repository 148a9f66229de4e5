"""Reading a byte range ahead of its consumer, through a small ring of reused buffers.

A reader thread fills the buffers with positional reads (:func:`.portable.pread_into`) while the caller works on
the previous one; hashing and compressing release the GIL, so on a cold file reading and computing overlap
instead of taking turns. Nothing is mapped: the resident size stays at the ring (``depth × chunk`` bytes)
whatever the size of the file, and the page cache keeps the file's pages for the next reader.

A range already in the page cache (``mincore``, :func:`.portable.all_resident`) is served from the map
instead, each chunk's pages given back once the next is asked for (:meth:`.Source.drop_pages`): copying it would
cost more than the hash. A source with neither a descriptor nor views of its memory (a remote file) is read
with its own chunked reads.
"""
from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator

import ztviewer.codec.portable as portable

from .errors import Cancelled, OutOfBounds
from .source import Source

#: chunks small enough to stay in the CPU's cache between the copy and the hash (larger ones halve warm crc32c)
CHUNK = 1 << 20
DEPTH = 8
#: ranges from this size on are first checked for being in the page cache already
RESIDENCY_PROBE = 1 << 20
#: a range served from the map is hashed in larger pieces: nothing is copied, so the CPU cache does not limit them,
#: and each piece costs a change check and a ``madvise`` (1 MiB pieces cost 1.7x the hash of a warm 1 GiB part)
MAP_CHUNK = 8 << 20
#: ``mincore`` of a whole 1 GiB range takes ~30 ms; longer ranges are probed at this many evenly spread spans
PROBE_SPANS = 64
PROBE_SPAN = 64 << 10

CancelCheck = Callable[[], bool]
#: :func:`feed` reads a cold range in reads this large, into this many buffers
FEED_CHUNK = 8 << 20
FEED_BUFFERS = 2


class _Reader(threading.Thread):
    """Fills free buffers with consecutive chunks of ``[offset, end)`` and hands them over in order."""

    def __init__(self, fd: int, offset: int, end: int, chunk: int, depth: int) -> None:
        super().__init__(name="ztviewer-read-ahead", daemon=True)
        self.fd, self.offset, self.end, self.chunk = fd, offset, end, chunk
        self.free: queue.SimpleQueue[bytearray | None] = queue.SimpleQueue()
        self.full: queue.SimpleQueue[tuple[bytearray, int] | BaseException] = queue.SimpleQueue()
        self.stopping = False
        self._lock = threading.Lock()
        for _ in range(depth):
            self.free.put(bytearray(min(chunk, end - offset)))

    def run(self) -> None:
        position = self.offset
        portable.advise(self.fd, self.offset, self.end - self.offset, "SEQUENTIAL")
        try:
            while position < self.end:
                buffer = self.free.get()
                if buffer is None or self.stopping:
                    return
                want = min(self.chunk, self.end - position)
                got = portable.pread_into(self.fd, memoryview(buffer)[:want], position, self._lock)
                if got < want:
                    self.full.put(_shrank(position + got))
                    return
                self.full.put((buffer, got))
                position += got
        except BaseException as exc:
            self.full.put(exc)

    def stop(self) -> None:
        self.stopping = True
        self.free.put(None)


def read_ahead(source: Source, offset: int, length: int, *, chunk: int | None = None, depth: int = DEPTH,
               cancelled: CancelCheck | None = None, from_map: bool = True) -> Iterator[memoryview]:
    """The bytes ``[offset, offset + length)`` of ``source`` in consecutive chunks of at most ``chunk`` bytes
    (by default :data:`CHUNK` when read, :data:`MAP_CHUNK` when served from the map).

    Each chunk is valid until the next one is asked for (its buffer is then refilled). ``cancelled()`` is polled
    between chunks and raises :class:`.Cancelled`. In-memory sources are served from their buffer; a range that
    fits one chunk is read in the calling thread. With ``from_map=False`` a file's range is always read, never
    served from the map even when in the page cache (for a consumer that cannot check the file between chunks:
    a decompressor; a file truncated meanwhile is then a short read, an error, never SIGBUS).
    """
    source.check_range(offset, length, "read range")
    if not length:
        return
    fd = None if from_map and _in_page_cache(source, offset, length) else source.reader_fd()
    if fd is None:
        yield from _without_descriptor(source, offset, length, chunk, cancelled)
        return
    chunk = chunk or CHUNK
    try:
        if length <= chunk:
            if cancelled is not None and cancelled():
                raise Cancelled()
            buffer = memoryview(bytearray(length))
            got = portable.pread_into(fd, buffer, offset, threading.Lock())
            if got < length:
                raise _shrank(offset + got)
            yield buffer
            return
        yield from _ring(fd, offset, length, chunk, depth, cancelled)
    finally:
        os.close(fd)


def _without_descriptor(source: Source, offset: int, length: int, chunk: int | None,
                        cancelled: CancelCheck | None) -> Iterator[memoryview]:
    """The range of a source offering no descriptor: views of its memory where it has them, else its own reads."""
    if source.capabilities.views:
        yield from _from_map(source, offset, length, chunk or MAP_CHUNK, cancelled)
        return
    for part in source.read_chunks(offset, length, chunk or CHUNK, "read range", cancelled=cancelled):
        yield memoryview(part)


def _from_map(source: Source, offset: int, length: int, step: int,
              cancelled: CancelCheck | None) -> Iterator[memoryview]:
    """The range as views of the map, ``step`` bytes each, each one's pages given back once the next is asked for."""
    for start in range(offset, offset + length, step):
        if cancelled is not None and cancelled():
            raise Cancelled()
        yield source.view(start, min(step, offset + length - start))
        source.drop_pages(start, step)


def _shrank(at: int) -> OutOfBounds:
    """The error of a read that found the file ending at byte ``at``, inside the range being read."""
    return OutOfBounds(f"the file ends at byte {at:,}, inside the range being read (it shrank after it was opened)",
                       offset=at, rule="an open file must keep its size")


def _in_page_cache(source: Source, offset: int, length: int) -> bool:
    """Whether the range is cached (so the map serves it without I/O and without a copy): every page of it, or of
    :data:`PROBE_SPANS` evenly spread spans of a longer one; not where the system cannot tell."""
    if length < RESIDENCY_PROBE or not source.capabilities.mapped:
        return False
    mapped = source.view(offset, length)
    if length <= PROBE_SPANS * PROBE_SPAN:
        return portable.all_resident(mapped, [0], length) is True
    last = length - PROBE_SPAN
    starts = [k * last // (PROBE_SPANS - 1) for k in range(PROBE_SPANS)]
    return portable.all_resident(mapped, starts, PROBE_SPAN) is True


def _ring(fd: int, offset: int, length: int, chunk: int, depth: int,
          cancelled: CancelCheck | None) -> Iterator[memoryview]:
    reader = _Reader(fd, offset, offset + length, chunk, depth)
    reader.start()
    done = 0
    try:
        while done < length:
            if cancelled is not None and cancelled():
                raise Cancelled()
            item = reader.full.get()
            if isinstance(item, BaseException):
                raise item
            buffer, got = item
            yield memoryview(buffer)[:got]
            reader.free.put(buffer)
            done += got
    finally:
        reader.stop()
        reader.join()


def feed(source: Source, offset: int, length: int, consume: Callable[[memoryview], object], *,
         cancelled: CancelCheck | None = None, progress: Callable[[int], object] | None = None) -> None:
    """Pass the bytes ``[offset, offset + length)`` of ``source`` to ``consume`` in consecutive chunks, in order
    (each valid only during its call); ``progress(n)`` after each chunk consumed, ``cancelled()`` polled before
    each chunk is read and again before it is consumed (raises :class:`.Cancelled`; it may be called from the
    consuming thread), so no chunk is consumed once it returned true; an exception from ``consume`` ends the
    pass and is raised here.

    A range longer than :data:`FEED_CHUNK` that must be read (not in the page cache) is read by this thread, in
    :data:`FEED_CHUNK` reads, while a second thread consumes the previous chunk (hashes release the GIL). On a
    cold file the disk then streams as it does for a plain loop of large reads: :func:`read_ahead`'s reader
    thread handing out 1 MiB chunks did not (a virtual disk: medians 1.5–2.0 against 2.1–2.4 GiB/s). Anything
    else is served by :func:`read_ahead` and consumed in this thread."""
    source.check_range(offset, length, "read range")
    parts: Iterator[memoryview]
    if length <= FEED_CHUNK:
        parts = read_ahead(source, offset, length, cancelled=cancelled)
    else:
        fd = None if _in_page_cache(source, offset, length) else source.reader_fd()
        if fd is not None:
            try:
                _feed_read(fd, offset, length, consume, cancelled, progress)
            finally:
                os.close(fd)
            return
        parts = _without_descriptor(source, offset, length, None, cancelled)
    for part in parts:
        consume(part)
        if progress is not None:
            progress(len(part))


def _feed_read(fd: int, offset: int, length: int, consume: Callable[[memoryview], object],
               cancelled: CancelCheck | None, progress: Callable[[int], object] | None) -> None:
    free: queue.SimpleQueue[tuple[bytearray, int]] = queue.SimpleQueue()   # (buffer, bytes of it just consumed)
    full: queue.SimpleQueue[tuple[bytearray, int] | None] = queue.SimpleQueue()
    failed: list[BaseException] = []
    stopping = threading.Event()
    for _ in range(FEED_BUFFERS):
        free.put((bytearray(min(FEED_CHUNK, length)), 0))

    def consumer() -> None:
        while (item := full.get()) is not None:
            buffer, got = item
            if not stopping.is_set():
                try:
                    if cancelled is not None and cancelled():   # a chunk read ahead is not consumed after a cancel
                        raise Cancelled()
                    consume(memoryview(buffer)[:got])
                except BaseException as exc:
                    failed.append(exc)
                    stopping.set()
            free.put((buffer, got))

    thread = threading.Thread(target=consumer, name="ztviewer-read-ahead", daemon=True)
    thread.start()
    lock = threading.Lock()
    position, end = offset, offset + length
    try:
        while position < end and not failed:
            buffer, consumed = free.get()
            if cancelled is not None and cancelled():
                raise Cancelled()
            if consumed and progress is not None and not failed:
                progress(consumed)
            want = min(len(buffer), end - position)
            got = portable.pread_into(fd, memoryview(buffer)[:want], position, lock)
            if got < want:
                raise _shrank(position + got)
            full.put((buffer, got))
            position += got
    except BaseException:
        stopping.set()
        raise
    finally:
        full.put(None)
        thread.join()
    if failed:
        raise failed[0]
    while not free.empty():
        _, consumed = free.get()
        if consumed and progress is not None:
            progress(consumed)
