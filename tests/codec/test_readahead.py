"""Reading ahead through a ring of buffers: exact bytes in order, short files, cancel, no POSIX calls."""
from __future__ import annotations

import hashlib
import os
import threading

import pytest

from tests._no_posix import hidden_posix_calls
from ztviewer.codec.digest import compute
from ztviewer.codec.errors import Cancelled, OutOfBounds
from ztviewer.codec.readahead import read_ahead
from ztviewer.codec.source import InMemorySource, LocalFile


@pytest.fixture
def data_file(tmp_path):
    data = os.urandom(1_000_003)
    path = tmp_path / "data.bin"
    path.write_bytes(data)
    return path, data


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name == "ztviewer-read-ahead"}


@pytest.mark.parametrize(("offset", "length", "chunk"), [(0, 1_000_003, 65536), (17, 999_000, 4096),
                                                         (5, 100, 4096), (0, 0, 4096), (3, 65536 * 3, 65536)])
def test_chunks_are_the_range_in_order(data_file, offset, length, chunk):
    path, data = data_file
    with LocalFile(path) as source:
        parts = [bytes(part) for part in read_ahead(source, offset, length, chunk=chunk, depth=3)]
    assert b"".join(parts) == data[offset:offset + length]
    assert all(len(p) <= chunk for p in parts)
    assert not _threads()


def test_without_positional_reads_the_path_is_read_again(data_file):
    path, data = data_file
    with hidden_posix_calls(), LocalFile(path) as source:
        joined = b"".join(bytes(p) for p in read_ahead(source, 1, 900_000, chunk=65536))
        assert source.read(0, 16) == data[:16]  # its own descriptor was not moved
    assert joined == data[1:900_001]


def test_in_memory_source_is_served_from_its_buffer():
    source = InMemorySource(bytes(range(256)) * 1000)
    assert b"".join(bytes(p) for p in read_ahead(source, 10, 200_000, chunk=4096)) == source.read(10, 200_000)


def test_a_file_that_shrank_is_an_error_naming_where_it_ends(data_file):
    path, _ = data_file
    with LocalFile(path) as source:
        os.truncate(path, 300_000)
        with pytest.raises(OutOfBounds, match="ends at byte 300,000"):
            for _ in read_ahead(source, 0, 1_000_003, chunk=65536):
                pass
    assert not _threads()


def test_cancel_stops_between_chunks_and_ends_the_reader(data_file):
    path, _ = data_file
    seen = []
    with LocalFile(path) as source, pytest.raises(Cancelled):
        for part in read_ahead(source, 0, 1_000_003, chunk=4096, cancelled=lambda: len(seen) >= 3):
            seen.append(len(part))
    assert seen == [4096] * 3
    assert not _threads()


def test_leaving_early_ends_the_reader(data_file):
    path, data = data_file
    with LocalFile(path) as source:
        chunks = read_ahead(source, 0, 1_000_003, chunk=4096)
        assert bytes(next(chunks)) == data[:4096]
        chunks.close()
    assert not _threads()


@pytest.mark.parametrize("algorithm", ["sha256", "crc32c", "xxh3"])
def test_digest_of_a_range_read_ahead(data_file, algorithm):
    path, data = data_file
    progress = []
    with LocalFile(path) as source:
        got = compute(source, 7, 999_990, algorithm, progress=progress.append)
    assert sum(progress) == 999_990
    if algorithm == "sha256":
        assert got.value == hashlib.sha256(data[7:999_997]).hexdigest()
    with LocalFile(path) as source:
        assert compute(source, 7, 999_990, algorithm) == got
    assert compute(InMemorySource(data), 7, 999_990, algorithm) == got


def test_a_resident_range_is_probed_at_spread_spans_and_served_from_the_map(tmp_path, monkeypatch):
    import ztviewer.codec.readahead as readahead

    data = os.urandom(readahead.PROBE_SPANS * readahead.PROBE_SPAN + 3 * readahead.MAP_CHUNK + 5)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    probed: list[tuple[int, int, int]] = []
    asked: list[int] = []

    def resident(mapped, offsets, length):
        asked.append(1)
        probed.extend((len(mapped), offset, length) for offset in offsets)
        return True

    def no_reader(*args, **kwargs):
        raise AssertionError("a resident range must not be read by the read-ahead thread")

    monkeypatch.setattr(readahead.portable, "all_resident", resident)
    monkeypatch.setattr(readahead, "_Reader", no_reader)
    with LocalFile(path) as source:
        monkeypatch.setattr(source, "reader_fd", lambda: pytest.fail("a resident range opens no reader descriptor"))
        parts = [bytes(p) for p in read_ahead(source, 3, len(data) - 4)]
        fed: list[bytes] = []
        readahead.feed(source, 3, len(data) - 4, lambda part: fed.append(bytes(part)))
    assert b"".join(parts) == data[3:-1] == b"".join(fed)
    assert max(len(p) for p in parts) == readahead.MAP_CHUNK
    assert len(probed) == 2 * readahead.PROBE_SPANS and len(asked) == 2     # one question per pass
    assert all(size == len(data) - 4 and at >= 0 and at + n <= size for size, at, n in probed)
    assert probed[-1][1] + probed[-1][2] == len(data) - 4  # the spans reach the end of the range


def test_where_residency_cannot_be_asked_a_range_is_read(tmp_path, monkeypatch):
    """No ``mincore`` (Windows): the probe says "not cached" and the read-ahead thread reads the range."""
    import ztviewer.codec.readahead as readahead

    data = os.urandom(readahead.PROBE_SPANS * readahead.PROBE_SPAN + 12_345)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    with LocalFile(path) as source:
        if readahead.portable.all_resident(source.view(0, len(data)), [0], len(data)) is True:
            assert readahead._in_page_cache(source, 0, len(data))     # just written: cached, as mincore says
        monkeypatch.setattr(readahead.portable, "_MINCORE", False)
        assert not readahead._in_page_cache(source, 0, len(data))
        assert not readahead._in_page_cache(source, 5, 2 << 20)       # one span: the whole range
        assert b"".join(bytes(p) for p in read_ahead(source, 5, len(data) - 6)) == data[5:-1]


@pytest.fixture
def cold_feed(monkeypatch):
    """feed()'s read path on a small file: chunks of 64 KiB, the range taken as not in the page cache."""
    import ztviewer.codec.readahead as readahead

    monkeypatch.setattr(readahead, "FEED_CHUNK", 65536)
    monkeypatch.setattr(readahead, "_in_page_cache", lambda *args: False)
    return readahead


@pytest.mark.parametrize("algorithm", ["sha256", "crc32c", "xxh3"])
def test_feed_reads_a_cold_range_while_another_thread_consumes(data_file, cold_feed, algorithm):
    path, data = data_file
    seen: list[bytes] = []
    consumers: set[str] = set()
    progress: list[int] = []

    def consume(part):
        consumers.add(threading.current_thread().name)
        seen.append(bytes(part))

    with LocalFile(path) as source:
        cold_feed.feed(source, 7, 999_990, consume, progress=progress.append)
        digest = compute(source, 7, 999_990, algorithm)
    assert b"".join(seen) == data[7:999_997] and max(map(len, seen)) == 65536
    assert consumers == {"ztviewer-read-ahead"}                      # not the thread that reads
    assert progress == [len(part) for part in seen]                  # each chunk once, in order, once consumed
    assert digest == compute(InMemorySource(data), 7, 999_990, algorithm)
    assert not _threads()


def test_feed_of_a_file_that_shrank_is_an_error_naming_where_it_ends(data_file, cold_feed):
    path, _ = data_file
    with LocalFile(path) as source:
        os.truncate(path, 300_000)
        with pytest.raises(OutOfBounds, match="ends at byte 300,000"):
            cold_feed.feed(source, 0, 1_000_003, lambda part: None)
    assert not _threads()


def test_feed_cancel_and_a_failing_consumer_end_the_pass(data_file, cold_feed):
    path, _ = data_file
    consumed: list[int] = []
    with LocalFile(path) as source:
        with pytest.raises(Cancelled):
            cold_feed.feed(source, 0, 1_000_003, lambda part: consumed.append(len(part)),
                           cancelled=lambda: len(consumed) >= 3)
        assert len(consumed) == 3                 # polled before each chunk is consumed, read ahead or not

        def broken(part):
            raise ValueError("consumer failed")

        with pytest.raises(ValueError, match="consumer failed"):
            cold_feed.feed(source, 0, 1_000_003, broken)
    assert not _threads()


def test_feed_consumes_no_chunk_read_ahead_before_the_cancel(data_file, cold_feed, monkeypatch):
    """The cancel lands while the second chunk waits in its buffer: it is never consumed."""
    path, _ = data_file
    reads: list[int] = []
    second_read = threading.Event()
    pread_into = cold_feed.portable.pread_into

    def counted_read(*args):
        got = pread_into(*args)
        reads.append(got)
        if len(reads) == 2:
            second_read.set()
        return got

    monkeypatch.setattr(cold_feed.portable, "pread_into", counted_read)
    cancel = threading.Event()
    consumed: list[int] = []

    def consume(part):
        consumed.append(len(part))
        assert second_read.wait(60), "the second chunk was never read"     # a hang guard, not a figure
        cancel.set()

    with LocalFile(path) as source, pytest.raises(Cancelled):
        cold_feed.feed(source, 0, 1_000_003, consume, cancelled=cancel.is_set)
    assert consumed == [65536]
    assert not _threads()
