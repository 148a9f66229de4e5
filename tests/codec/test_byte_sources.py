"""Every byte source reads every corpus file alike: the same bytes, the same ``info --json`` document and the same
``check`` verdict as the local file, whether the source maps the file (:class:`LocalFile`), holds it in memory
(:class:`InMemorySource`), reads it as a shard of a set does (:class:`ShardSource`), reads it through fsspec (memory
and local file systems) or offers nothing but the protocol (an object of this test's own, not derived from
:class:`Source`)."""
from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests._corpus import CORPUS, corpus_available
from ztviewer.cli_info import write_json
from ztviewer.codec import readahead, registry
from ztviewer.codec.check import check_file
from ztviewer.codec.convert import convert_open
from ztviewer.codec.errors import Cancelled, CodecError, DecodeLimitExceeded, OutOfBounds, SourceChanged
from ztviewer.codec.io.protocol import POSITIONAL_ONLY, Capabilities
from ztviewer.codec.model import TensorFile
from ztviewer.codec.multifile.shard_source import ShardSource, SourcePool
from ztviewer.codec.source import InMemorySource, LocalFile, Source

pytestmark = pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")

DATA_SUFFIXES = {".zt", ".safetensors", ".blz"}
FILES = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.suffix in DATA_SUFFIXES) \
    if corpus_available() else []


class ProtocolOnly:
    """Bytes behind the bare protocol: reads of a ``bytes`` object, nothing else (no views, no descriptor)."""

    capabilities = POSITIONAL_ONLY

    def __init__(self, data: bytes, path: str) -> None:
        self.data, self.path, self.size = data, path, len(data)
        self.reads: list[tuple[int, int]] = []

    @property
    def stamp(self) -> tuple[int, int, int]:
        return self.size, 0, 0

    def read(self, offset: int, length: int, what: str = "range", **where: str | None) -> bytes:
        self.reads.append((offset, length))
        return self.data[offset:offset + length]

    def read_chunks(self, offset: int, length: int, chunk: int = 8 << 20, what: str = "range", *,
                    reuse: bool = False, progress: Callable[[int], object] | None = None,
                    cancelled: Callable[[], bool] | None = None, **where: str | None) -> Iterator[bytes]:
        for start in range(offset, offset + length, chunk):
            if cancelled is not None and cancelled():
                raise Cancelled()
            part = self.read(start, min(chunk, offset + length - start))
            yield part
            if progress is not None:
                progress(len(part))

    def changed(self) -> str | None:
        return None


def _fsspec_memory(path: Path) -> Source:
    from fsspec.implementations.memory import MemoryFileSystem

    from ztviewer.codec.io.fsspec_file import FsspecSource

    fs = MemoryFileSystem()
    fs.pipe_file(f"/corpus/{path.name}", path.read_bytes())
    return FsspecSource(str(path), fs, f"/corpus/{path.name}", block_size=64 << 10)


def _fsspec_local(path: Path) -> Source:
    from ztviewer.codec.io.fsspec_file import FsspecSource

    return FsspecSource(str(path))


BACKENDS: dict[str, Callable[[Path], object]] = {
    "shard": lambda path: ShardSource(str(path), SourcePool(max_mapped=1)),  # a set's source, one file alone
    "memory": lambda path: InMemorySource(path.read_bytes(), str(path)),
    "protocol-only": lambda path: ProtocolOnly(path.read_bytes(), str(path)),
    "fsspec-memory": _fsspec_memory,
    "fsspec-local": _fsspec_local,
}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request) -> Callable[[Path], object]:
    if request.param.startswith("fsspec"):
        pytest.importorskip("fsspec")
    return BACKENDS[request.param]


def _verdict(tf: TensorFile) -> dict:
    report = check_file(tf)
    return {"ok": report.ok, "problems": sorted(str(p) for p in report.problems),
            "decoded": report.tensors_decoded, "digests": report.digests_verified}


def _document(tf: TensorFile) -> str:
    """What ``ztviewer info --json --hash`` prints for the file."""
    out = io.StringIO()
    write_json(tf, out, with_hash=True)
    json.loads(out.getvalue())
    return out.getvalue()


@pytest.mark.parametrize("name", FILES)
def test_every_backend_reads_the_corpus_file_as_the_local_file_does(name, backend):
    path = CORPUS / name
    local = registry.read_source(LocalFile(path))
    other = registry.open_source(backend(path))
    try:
        assert other.source is not local.source
        assert other.source.capabilities.descriptor == isinstance(other.source, ShardSource)
        assert other.readable == local.readable
        assert _document(other) == _document(local)
        assert _verdict(other) == _verdict(local)
    finally:
        local.source.close()
        other.source.close()


@pytest.mark.parametrize("name", [n for n in FILES if not n.startswith("hostile/")][::7])
def test_every_backend_gives_the_file_bytes(name, backend):
    data = (CORPUS / name).read_bytes()
    source = registry.open_source(backend(CORPUS / name)).source
    size = len(data)
    assert source.size == size and source.stamp[0] == size
    assert b"".join(bytes(c) for c in source.read_chunks(0, size, 1000)) == data
    assert source.read(size // 3, size // 2) == data[size // 3:size // 3 + size // 2]
    assert bytes(source.view(7, 100)) == data[7:107]
    assert source.window(size - 10, 100) == data[-10:] and source.head(16) == data[:16]
    with pytest.raises(OutOfBounds, match="runs past the end of the file"):
        source.read(size - 4, 5)
    source.close()


def test_the_bare_protocol_reads_one_tensor_at_a_time(tmp_path):
    """Opening, describing with hashes and checking a file through a source with no views and no descriptor
    reads each tensor's bytes on their own: no read spans more than one tensor, none the whole file."""
    import numpy as np
    from safetensors.numpy import save_file

    arrays = {f"t{i}": np.full((512, 1024), i, dtype=np.float32) for i in range(4)}  # 2 MiB each
    path = tmp_path / "four.safetensors"
    save_file(arrays, str(path))
    inner = ProtocolOnly(path.read_bytes(), str(path))
    tf = registry.open_source(inner)
    assert _document(tf) == _document(registry.read_source(LocalFile(path)))
    assert check_file(tf).ok
    assert max(length for _, length in inner.reads) <= 2 << 20 < inner.size // 3


def test_chunked_reads_report_progress_and_stop_when_cancelled():
    source = InMemorySource(bytes(range(256)) * 40)
    seen: list[int] = []
    assert b"".join(source.read_chunks(0, 10240, 4096, progress=seen.append)) == bytes(range(256)) * 40
    assert seen == [4096, 4096, 2048]
    stop = threading.Event()
    chunks = source.read_chunks(0, 10240, 4096, cancelled=stop.is_set)
    next(chunks)
    stop.set()
    with pytest.raises(Cancelled):
        next(chunks)


def test_capabilities_say_what_each_source_offers(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(b"abc")
    with LocalFile(path) as local:
        assert local.capabilities == Capabilities(views=True, mapped=True, descriptor=True)
        fd = local.reader_fd()
        assert fd is not None
        os.close(fd)
    memory = InMemorySource(b"abc")
    assert memory.capabilities == Capabilities(views=True) and memory.reader_fd() is None
    adapted = registry.open_source(ProtocolOnly(b"abc", "p")).source
    assert adapted.capabilities == POSITIONAL_ONLY and adapted.fileno() is None


def test_fsspec_source_tells_a_file_changed_underneath():
    pytest.importorskip("fsspec")
    from fsspec.implementations.memory import MemoryFileSystem

    from ztviewer.codec.io.fsspec_file import FsspecSource

    fs = MemoryFileSystem()
    fs.pipe_file("/x/changing.bin", b"\x01" * 300_000)
    source = FsspecSource("memory://x/changing.bin", fs, "/x/changing.bin")
    assert source.changed() is None and source.read(0, 4) == b"\x01" * 4
    fs.pipe_file("/x/changing.bin", b"\x02" * 300_000)
    assert source.changed() == "it was replaced by another file"
    fs.pipe_file("/x/changing.bin", b"\x02" * 1000)
    assert source.changed() == "its size changed from 300,000 to 1,000 bytes"
    fs.rm("/x/changing.bin")
    assert source.changed() == "it is gone"


def test_fsspec_source_never_reads_past_the_new_end_of_a_truncated_file(tmp_path):
    pytest.importorskip("fsspec")
    from ztviewer.codec.io.fsspec_file import FsspecSource

    path = tmp_path / "shrinking.bin"
    path.write_bytes(b"\x01" * 3_000_000)
    source = FsspecSource(str(path))
    assert source.read(299_990, 10) == b"\x01" * 10
    os.truncate(path, 1000)
    with pytest.raises(SourceChanged, match="ends at byte 200,000 while reading range"):  # as a short pread says
        source.read(200_000, 10)
    with pytest.raises(SourceChanged, match="ends at byte 1,000 while reading range"):
        source.read(0, 2 << 20)   # longer than a cached read: one read of its own
    with pytest.raises(SourceChanged, match="ends at byte 1,000 while reading range"):
        source.read(500, 1000)
    source.close()


def test_fsspec_source_opened_by_url_caches_small_reads_in_blocks():
    pytest.importorskip("fsspec")
    import fsspec

    from ztviewer.codec.io.fsspec_file import FsspecSource

    fs = fsspec.filesystem("memory")
    fs.pipe_file("/blocks/a.bin", bytes(range(256)) * 2048)
    source = FsspecSource("memory://blocks/a.bin", block_size=1)
    assert source.block_size == 64 << 10  # clamped to the smallest block
    fetched: list[tuple[int, int]] = []
    fetch = source._fetch
    source._fetch = lambda offset, length: fetched.append((offset, length)) or fetch(offset, length)  # type: ignore[method-assign]
    assert source.read(10, 20) == (bytes(range(256)) * 2048)[10:30]
    assert source.read(100, 20) == (bytes(range(256)) * 2048)[100:120]
    assert fetched == [(0, 64 << 10)]
    fs.rm("/blocks/a.bin")


@pytest.mark.parametrize("name", [n for n in FILES if n.startswith(("safetensors/", "zt_v2/"))][::3])
@pytest.mark.parametrize("to", ["zt-v2", "safetensors"])
def test_every_backend_converts_to_the_same_bytes(name, to, backend, tmp_path):
    """Writers copy stored bytes from a source without a descriptor (no kernel copy) byte for byte."""
    path = CORPUS / name
    local = registry.read_source(LocalFile(path))
    other = registry.open_source(backend(path))
    try:
        results = []
        for tf, out in ((local, tmp_path / "local.out"), (other, tmp_path / "other.out")):
            try:
                convert_open(tf, out, to)
                results.append(out.read_bytes())
            except CodecError as exc:
                results.append(str(exc))
        assert results[0] == results[1]
    finally:
        local.source.close()
        other.source.close()


def test_read_ahead_and_feed_serve_a_source_with_neither_descriptor_nor_views():
    """Read ahead and fed in chunks: never one read of the whole range (a remote file fetched whole)."""
    data = bytes(range(251)) * (100 << 10)  # 25 MiB: past the residency probe and feed's own reads
    inner = ProtocolOnly(data, "remote")
    source = registry.open_source(inner).source
    parts = [bytes(part) for part in readahead.read_ahead(source, 5, len(data) - 10)]
    assert b"".join(parts) == data[5:-5] and max(map(len, parts)) <= readahead.CHUNK
    consumed = bytearray()
    progressed: list[int] = []
    readahead.feed(source, 0, len(data), consumed.extend, progress=progressed.append)
    assert consumed == data and sum(progressed) == len(data)
    with pytest.raises(Cancelled):
        readahead.feed(source, 0, len(data), consumed.extend, cancelled=lambda: True)
    assert max(length for _, length in inner.reads) <= readahead.FEED_CHUNK


def test_a_view_of_a_source_without_views_is_that_range_alone_read_in_chunks():
    data = bytes(range(253)) * (80 << 10)  # 20 MiB
    inner = ProtocolOnly(data, "remote")
    source = registry.open_source(inner).source
    view = source.view(3, len(data) - 6)
    assert view.readonly and view == data[3:-3]
    assert max(length for _, length in inner.reads) <= 8 << 20


def test_a_view_too_large_for_memory_is_a_clear_error():
    class Huge(ProtocolOnly):
        size = 1 << 62

        def __init__(self) -> None:
            super().__init__(b"", "huge")
            self.size = 1 << 62

    source = registry.open_source(Huge()).source
    with pytest.raises(DecodeLimitExceeded, match="of 4,611,686,018,427,387,904 bytes does not fit in memory"):
        source.view(0, 1 << 62, "component", tensor="w")


def test_every_backend_reads_an_earlier_generation_as_the_local_file_does(backend, tmp_path):
    pytest.importorskip("ztensor")
    from tests.gui.v2_files import with_generations
    from ztviewer.codec.formats.zt_v2 import find_generations
    from ztviewer.codec.formats.zt_v2.reader import read_generation_at

    path = with_generations(tmp_path / "gen.zt")
    local = registry.read_source(LocalFile(path))
    other = registry.open_source(backend(path))
    try:
        generations = find_generations(local)
        assert generations and [g.end for g in find_generations(other)] == [g.end for g in generations]
        for generation in generations:
            old_local, old_other = read_generation_at(local, generation), read_generation_at(other, generation)
            assert old_other.source.size == generation.end < other.source.size
            assert _document(old_other) == _document(old_local)
            assert _verdict(old_other) == _verdict(old_local)
            assert old_other.source.read(0, generation.end) == path.read_bytes()[:generation.end]
    finally:
        local.source.close()
        other.source.close()


def test_fsspec_source_refuses_a_directory_and_a_missing_file(tmp_path):
    pytest.importorskip("fsspec")
    from ztviewer.codec.io.fsspec_file import FsspecSource

    with pytest.raises(IsADirectoryError, match="is a directory, not a file"):
        FsspecSource(str(tmp_path))
    with pytest.raises(FileNotFoundError):
        FsspecSource(str(tmp_path / "missing.zt"))
