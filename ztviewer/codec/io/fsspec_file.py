"""Any fsspec file (``https://``, ``hf://``, ``s3://``, ``memory://``, local paths) as a read-only source.

fsspec is an optional dependency (``pip install 'ztviewer[remote]'``), imported when such a source is made. One
handle is opened per file and read under a lock; reads of up to :data:`MAX_CACHED_READ` bytes go through a small
block cache (:data:`CACHED_BLOCKS` blocks of ``block_size`` bytes, 64 KiB–1 MiB), so a reader walking a header in
many small reads costs a few requests. A remote file has neither a map nor a descriptor: readers read the bytes
they need into memory of their own (:meth:`.Source.view` copies the range asked for).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from ..file_stamps import GONE, stamp_difference
from .base import Source, ended
from .protocol import POSITIONAL_ONLY, Stamp

MIN_BLOCK = 64 << 10
MAX_BLOCK = 1 << 20
DEFAULT_BLOCK = 256 << 10
CACHED_BLOCKS = 16
#: longer reads bypass the cache (a tensor's bytes are read once)
MAX_CACHED_READ = MAX_BLOCK


class RemoteNotAvailable(ImportError):
    """fsspec, which reads remote files, is not installed."""


def _filesystem(url: str, storage_options: dict[str, Any]) -> tuple[Any, str]:
    try:
        from fsspec.core import url_to_fs
    except ImportError as exc:
        raise RemoteNotAvailable(f"reading {url} needs fsspec: pip install 'ztviewer[remote]'") from exc
    return url_to_fs(url, **storage_options)  # type: ignore[no-any-return]


def _stamp(fs: Any, path: str) -> Stamp:
    """``(size, 0, identity)``: the identity a hash of what the file system says of the file (its ETag or
    checksum, modification time), which another file under the same name does not share. Anything but a file
    (a directory, a bucket) is :class:`IsADirectoryError`."""
    info = fs.info(path)
    if info.get("type", "file") != "file":
        raise IsADirectoryError(f"{path} is a {info.get('type')}, not a file")
    return int(info["size"]), 0, int(fs.checksum(path)) % (1 << 63) or 1


class FsspecSource(Source):
    """The file at ``url`` (an fsspec URL or local path; ``fs`` and ``path`` instead for a file system already
    made), read-only.

    Parameters
    ----------
    url:
        What the file is called (:attr:`path`), and where it is unless ``fs`` is given.
    fs:
        An fsspec file system holding the file at ``fs_path`` (default: ``url``).
    block_size:
        Bytes of each cached block, clamped to 64 KiB–1 MiB.
    storage_options:
        Passed to fsspec when ``fs`` is not given (credentials, endpoints).
    """

    capabilities = POSITIONAL_ONLY

    def __init__(self, url: str, fs: Any = None, fs_path: str | None = None, *, block_size: int = DEFAULT_BLOCK,
                 **storage_options: Any) -> None:
        self.path = url
        if fs is None:
            fs, fs_path = _filesystem(url, storage_options)
        self._fs, self._fs_path = fs, fs_path if fs_path is not None else url
        self._stamp = _stamp(fs, self._fs_path)
        self.size = self._stamp[0]
        self.block_size = max(MIN_BLOCK, min(MAX_BLOCK, block_size))
        self._handle: Any = fs.open(self._fs_path, "rb", block_size=self.block_size, cache_type="none")
        self._lock = threading.Lock()
        self._blocks: OrderedDict[int, bytes] = OrderedDict()

    @property
    def stamp(self) -> Stamp:
        return self._stamp

    def read(self, offset: int, length: int, what: str = "range", **where: str | None) -> bytes:
        self.check_range(offset, length, what, **where)
        if length > MAX_CACHED_READ:
            data = self._fetch(offset, length)
        else:
            first, last = offset // self.block_size, (offset + length - 1) // self.block_size
            data = b"".join(self._block(index) for index in range(first, last + 1)) if length else b""
            data = data[offset - first * self.block_size:][:length]
        if len(data) < length:
            raise ended(self.path, offset + len(data), self.size, what, where)
        return data

    def _block(self, index: int) -> bytes:
        with self._lock:
            block = self._blocks.get(index)
            if block is not None:
                self._blocks.move_to_end(index)
                return block
        start = index * self.block_size
        block = self._fetch(start, min(self.block_size, self.size - start))
        with self._lock:
            self._blocks[index] = block
            while len(self._blocks) > CACHED_BLOCKS:
                self._blocks.popitem(last=False)
        return block

    def _fetch(self, offset: int, length: int) -> bytes:
        """``length`` bytes at ``offset`` from the handle (fewer where the file now ends)."""
        with self._lock:
            if self._handle is None:
                raise ValueError(f"{self.path} is closed")
            self._handle.seek(offset)
            parts = []
            while length > 0:
                part = self._handle.read(length)
                if not part:
                    break
                parts.append(part)
                length -= len(part)
        return b"".join(parts)

    def bytes_changed(self, within: int | None = None) -> str | None:
        """How the file differs from when it was opened (its size, its identity: one request to the file
        system), or ``None``; also ``None`` once closed and where the file system cannot tell."""
        if self._handle is None:
            return None
        try:
            self._fs.invalidate_cache(self._fs_path)
            now = _stamp(self._fs, self._fs_path)
        except FileNotFoundError:
            return GONE
        except (OSError, KeyError, ValueError):
            return None
        return stamp_difference(self._stamp, now, within)

    def close(self) -> None:
        with self._lock:
            handle, self._handle = self._handle, None
            self._blocks.clear()
        if handle is not None:
            handle.close()
