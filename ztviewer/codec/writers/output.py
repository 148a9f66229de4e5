"""The byte sink every writer writes through: position tracking, zero padding, progress and cancel, and
kernel-side copies of unchanged byte ranges.

Unchanged blobs are copied in the kernel, never through user space: ``os.copy_file_range`` when source and
output offsets agree modulo the page size, ``os.splice`` through a pipe when they do not (much faster there),
falling back to ``os.sendfile`` and then to chunked writes from the source's memory map. Each call is used only
where the system has it (:mod:`..portable`); elsewhere (Windows, macOS) every copy goes through the map.
Copies run in chunks so a cancel request is seen within one chunk.

Small writes and small copies (under :data:`SMALL`) are gathered in memory and written together (at most
:data:`GATHER` bytes at a time): a file of many small tensors costs a few large writes, not several system calls
per tensor. :meth:`Output.flush` writes what is gathered; writers flush when they close.
"""
from __future__ import annotations

import errno
import os
import queue
import threading
from collections.abc import Callable

import ztviewer.codec.portable as portable

from ..errors import Cancelled
from ..source import Source

COPY_CHUNK = 64 << 20
WRITE_CHUNK = 8 << 20
PAGE = 4096
PIPE_SIZE = 1 << 20
SMALL = 64 << 10
GATHER = 1 << 20

ProgressCallback = Callable[[int, int], None]
CancelCheck = Callable[[], bool]
_NO_KERNEL_COPY = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF, errno.ETXTBSY,
                   errno.EPERM, errno.ENOTSOCK}  # ENOTSOCK: macOS sends files to sockets only


class Output:
    """A file descriptor opened for writing, written strictly sequentially from position 0.

    Parameters
    ----------
    fd:
        Descriptor of the (temporary) output file, positioned at 0.
    progress:
        Called as ``progress(done, total)`` with work bytes (bytes read from the sources, plus the bytes of
        headers and manifests); ``total`` is set by the writer with :meth:`expect`.
    cancelled:
        Polled between chunks; when it returns true the write stops with :class:`Cancelled`.
    """

    def __init__(self, fd: int, progress: ProgressCallback | None = None,
                 cancelled: CancelCheck | None = None) -> None:
        self.fd = fd
        self.pos = 0
        self.total = 0
        self.done = 0
        self._progress = progress
        self.cancelled = cancelled
        self._kernel_copy = portable.has_kernel_copy()
        self._sendfile = portable.has_sendfile()
        self._splice_ok = portable.has_splice()
        self._gathered = bytearray()

    def expect(self, total: int) -> None:
        self.total = total
        self.report(0)

    def check_cancel(self) -> None:
        if self.cancelled is not None and self.cancelled():
            raise Cancelled("save cancelled")

    def report(self, work: int) -> None:
        self.done += work
        if self._progress is not None:
            self._progress(self.done, max(self.total, self.done))

    def write(self, data: bytes | bytearray | memoryview, work: int | None = None) -> None:
        """Write all of ``data``; ``work`` is the progress it accounts for (default: its length)."""
        view = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
        if len(view) < SMALL:
            self._gather(view)
        else:
            self.flush()
            for start in range(0, len(view), WRITE_CHUNK):
                self.check_cancel()
                self._write_all(view[start:start + WRITE_CHUNK])
        self.report(len(view) if work is None else work)

    def _gather(self, data: memoryview) -> None:
        self._gathered += data
        self.pos += len(data)
        if len(self._gathered) >= GATHER:
            self.check_cancel()
            self.flush()

    def flush(self) -> None:
        """Write the gathered small writes; afterwards the descriptor's position is :attr:`pos`."""
        if self._gathered:
            part = memoryview(self._gathered)
            while part:
                part = part[os.write(self.fd, part):]
            part.release()
            self._gathered.clear()

    def truncate(self, position: int) -> None:
        """Cut the output back to ``position`` (at most :attr:`pos`) and continue writing there."""
        self.flush()
        os.ftruncate(self.fd, position)
        os.lseek(self.fd, position, os.SEEK_SET)
        self.pos = position

    def _write_all(self, part: memoryview) -> None:
        """Write ``part`` directly (nothing may be gathered: :meth:`flush` first)."""
        while part:
            n = os.write(self.fd, part)
            self.pos += n
            part = part[n:]

    def pad_to(self, alignment: int) -> None:
        """Zero bytes up to the next multiple of ``alignment``."""
        gap = -self.pos % alignment
        if gap:
            self.write(bytes(gap), work=0)

    def copy_range(self, source: Source, offset: int, length: int) -> None:
        """Copy ``length`` bytes at ``offset`` of ``source`` to the output, byte for byte."""
        source.check_range(offset, length, "copied range")
        if not length:
            return
        if length < SMALL:
            self._gather(source.view(offset, length))
            self.report(length)
            return
        self.flush()
        kernel = source.capabilities.descriptor and (self._kernel_copy or self._sendfile)
        fd = source.fileno() if kernel else None
        # our own descriptor: a shard source may close (park) its file while we copy
        src_fd = os.dup(fd) if fd is not None else None
        pipe = self._pipe() if src_fd is not None and (offset - self.pos) % PAGE else None
        try:
            done = 0
            while done < length:
                self.check_cancel()
                want = min(COPY_CHUNK, length - done)
                n = 0
                if pipe is not None:
                    n = self._splice(pipe, src_fd, offset + done, want)  # type: ignore[arg-type]
                if n <= 0 and src_fd is not None:
                    n = self._kernel(src_fd, offset + done, want)
                if n <= 0:
                    view = source.view(offset + done, want)
                    self.write(view, work=0)
                    n = want
                else:
                    self.pos += n
                done += n
                self.report(n)
        finally:
            for descriptor in (src_fd, *(pipe or ())):
                if descriptor is not None:
                    os.close(descriptor)

    def _pipe(self) -> tuple[int, int] | None:
        """A pipe for :meth:`_splice`, enlarged to :data:`PIPE_SIZE` where the system allows."""
        if not self._splice_ok:
            return None
        r, w = os.pipe()
        portable.enlarge_pipe(w, PIPE_SIZE)
        return r, w

    def _splice(self, pipe: tuple[int, int], src_fd: int, offset: int, count: int) -> int:
        """Copy through a pipe with ``os.splice``: when source and output offsets differ modulo the page size,
        this is about twice as fast as ``copy_file_range`` on ext4 (safetensors → zt conversions)."""
        r, w = pipe
        done = 0
        while done < count:
            try:
                n = portable.splice(src_fd, w, min(PIPE_SIZE, count - done), offset_src=offset + done)
            except OSError as exc:
                if done or exc.errno not in _NO_KERNEL_COPY:
                    raise
                self._splice_ok = False
                return 0
            if n <= 0:
                break
            moved = 0
            while moved < n:
                moved += portable.splice(r, self.fd, n - moved)
            done += n
        return done

    def _kernel(self, src_fd: int, offset: int, count: int) -> int:
        """Bytes copied in the kernel (0 when neither copy_file_range nor sendfile can do it here)."""
        if self._kernel_copy:
            try:
                n = portable.copy_file_range(src_fd, self.fd, count, offset, self.pos) or 0
                if n > 0:
                    os.lseek(self.fd, self.pos + n, os.SEEK_SET)
                    return n
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    raise
                self._kernel_copy = False
        if self._sendfile:
            try:
                n = portable.sendfile(self.fd, src_fd, offset, count) or 0
                if n > 0:
                    return n
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    raise
                self._sendfile = False
        return 0


class WriteBehind:
    """Writes (and hashes) chunks on a thread of its own while the caller produces the next ones: decoding or
    compressing overlaps with writing, since zstd, hashing and ``os.write`` release the GIL.

    At most :data:`DEPTH` chunks are in the writer's hands (one being written, one queued), so a producer rotating
    ``DEPTH + 1`` buffers never refills one still being written: when it asks for the next buffer, the chunk
    handed over two before has been written (:func:`..decode.iter_decoded` with ``buffers=BUFFERS``). Use as a
    context manager; ``out`` must not be written by anyone else inside it. Cancel is checked in the producer's
    thread; a write error is raised there at the next chunk or at the end.
    """

    DEPTH = 2
    BUFFERS = DEPTH + 1

    def __init__(self, out: Output, hash_update: Callable[[memoryview], None] | None = None) -> None:
        self.out = out
        self._hash = hash_update
        self._queue: queue.Queue[memoryview | None] = queue.Queue(maxsize=self.DEPTH - 1)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="ztviewer-write-behind", daemon=True)

    def __enter__(self) -> WriteBehind:
        self.out.flush()
        self._thread.start()
        return self

    def write(self, data: bytes | bytearray | memoryview, work: int | None = None) -> None:
        """Hand ``data`` over (it must stay unchanged until ``DEPTH`` more chunks are handed over)."""
        self._raise_error()
        self.out.check_cancel()
        view = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
        self._queue.put(view)
        self.out.report(len(view) if work is None else work)

    def _run(self) -> None:
        while True:
            view = self._queue.get()
            if view is None:
                return
            if self._error is not None:
                continue  # drain: the producer sees the error at its next chunk
            try:
                if self._hash is not None:
                    self._hash(view)
                self.out._write_all(view)
            except BaseException as exc:
                self._error = exc

    def _raise_error(self) -> None:
        if self._error is not None:
            raise self._error

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self._queue.put(None)
        self._thread.join()
        if exc is None:
            self._raise_error()
