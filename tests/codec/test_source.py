"""The source reads headers without mapping the file; data access maps it; bounds are always checked."""
from __future__ import annotations

import numpy as np
import pytest
import safetensors.numpy

from ztviewer.codec import open_file
from ztviewer.codec.decode import dense_array
from ztviewer.codec.errors import OutOfBounds, SourceChanged
from ztviewer.codec.source import PREAD_LIMIT, InMemorySource, LocalFile


def test_opening_reads_the_header_without_mapping(tmp_path):
    path = tmp_path / "w.safetensors"
    safetensors.numpy.save_file({"w": np.arange(1000, dtype=np.float32)}, str(path))
    tf = open_file(path)
    assert tf.readable and tf.source._map is None
    assert np.array_equal(dense_array(tf, tf.tensor("w")), np.arange(1000, dtype=np.float32))
    assert tf.source._map is None  # decoded arrays are read with positional reads: memory of their own
    assert np.array_equal(dense_array(tf, tf.tensor("w"), mapped=True), np.arange(1000, dtype=np.float32))
    assert tf.source._map is not None  # a view of the map is asked for explicitly
    tf.close()


def test_reads_match_the_file_mapped_or_not(tmp_path):
    data = bytes(range(256)) * 40
    path = tmp_path / "b.bin"
    path.write_bytes(data)
    source = LocalFile(path)
    assert source.head(10) == data[:10] and source.tail(5) == data[-5:] and source.read(300, 20) == data[300:320]
    assert source.window(len(data) - 3, 100) == data[-3:]
    assert source._map is None
    assert bytes(source.view(100, 50)) == data[100:150] and source._map is not None
    assert source.read(300, 20) == data[300:320]
    with pytest.raises(OutOfBounds):
        source.read(len(data) - 2, 3)
    source.close()
    with pytest.raises(ValueError):
        source.view(0, 1)


def test_large_reads_go_through_the_map(tmp_path):
    path = tmp_path / "big.bin"
    path.write_bytes(b"\x01" * (PREAD_LIMIT + 1))
    source = LocalFile(path)
    assert source.read(0, PREAD_LIMIT + 1) == b"\x01" * (PREAD_LIMIT + 1)
    assert source._map is not None
    source.close()


def test_empty_file_is_an_empty_source(tmp_path):
    path = tmp_path / "empty.zt"
    path.write_bytes(b"")
    source = LocalFile(path)
    assert source.size == 0 and source.head(8) == b"" and bytes(source.buffer) == b""
    source.close()


def test_drop_pages_keeps_the_bytes_readable(tmp_path):
    """Giving mapped pages back is advice only: the same bytes read again afterwards, whatever the range."""

    path = tmp_path / "pages.bin"
    data = bytes(range(256)) * 64
    path.write_bytes(data)
    with LocalFile(path) as source:
        source.drop_pages(0, 10)  # not mapped yet: nothing to do
        assert bytes(source.view(0, len(data))) == data
        for offset, length in ((1, 5000), (4096, 4096), (0, len(data) + 100), (len(data) - 1, 1)):
            source.drop_pages(offset, length)
            assert bytes(source.view(0, len(data))) == data
    memory = InMemorySource(b"abc")
    memory.drop_pages(0, 3)
    assert memory.read(0, 3) == b"abc"


def test_reader_reads_the_range_through_one_reused_buffer(tmp_path):
    data = np.random.default_rng(3).integers(0, 256, 3 * (1 << 17) + 1234, dtype=np.uint8).tobytes()
    path = tmp_path / "b.bin"
    path.write_bytes(data)
    source = LocalFile(path)
    reader = source.reader(7, len(data) - 7)
    parts = []
    while part := reader.read(50_000):
        parts.append(bytes(part))
    assert b"".join(parts) == data[7:] and max(map(len, parts)) == 50_000
    chunks = list(source.read_chunks(0, len(data), 1 << 17, reuse=True))
    assert len({id(c.obj) for c in chunks}) == 1  # one buffer: each chunk valid until the next
    assert bytes(chunks[-1]) == data[3 << 17:]
    source.close()


def test_reader_reports_a_file_cut_short_while_reading(tmp_path):
    path = tmp_path / "b.bin"
    path.write_bytes(bytes(4 << 17))
    source = LocalFile(path)
    reader = source.reader(0, 4 << 17)
    assert len(reader.read(1 << 17)) == 1 << 17
    with open(path, "r+b") as f:
        f.truncate(1 << 18)
    assert len(reader.read(1 << 17)) == 1 << 17
    with pytest.raises(SourceChanged, match="ends at byte 262,144"):
        reader.read(1 << 17)
    source.close()


def test_a_source_read_for_a_prefix_only_ignores_changes_after_it(tmp_path):
    path = tmp_path / "c.bin"
    path.write_bytes(bytes(1000))
    whole, prefix = LocalFile(path), LocalFile(path)
    prefix.read_prefix_only(600)
    with open(path, "ab") as f:                          # an append: after the prefix
        f.write(b"more")
    assert whole.bytes_changed() is not None and prefix.bytes_changed() is None
    with open(path, "r+b") as f:                         # cut inside the prefix: changed for both
        f.truncate(500)
    assert prefix.bytes_changed() is not None
    with pytest.raises(SourceChanged):
        prefix.require_unchanged()
    whole.close()
    prefix.close()


def test_a_file_the_process_cannot_map_is_read_instead(tmp_path, monkeypatch):
    """Issue 31: a map that fails for want of address space (ENOMEM) turns the source into a read-only one that
    copies ranges with positional reads; it says so in its capabilities, and every byte is still the file's."""
    import errno

    import ztviewer.codec.source as source_module
    from ztviewer.codec.source import LOCAL_FILE, UNMAPPED_FILE, LocalFile

    payload = bytes(range(256)) * 40_000  # 10 MB: past the positional-read limit, so big views need chunks
    path = tmp_path / "big.bin"
    path.write_bytes(payload)

    def no_room(*args, **kwargs):
        raise OSError(errno.ENOMEM, "Cannot allocate memory")

    monkeypatch.setattr(source_module, "map_file", no_room)
    source = LocalFile(path)
    assert source.capabilities is LOCAL_FILE
    assert bytes(source.view(100, 10)) == payload[100:110]
    assert source.capabilities is UNMAPPED_FILE and not source.capabilities.views
    assert bytes(source.view(3, len(payload) - 5)) == payload[3:-2]
    assert source.read(len(payload) - 7, 7) == payload[-7:]
    source.close()


def test_a_map_failing_for_another_reason_is_not_hidden(tmp_path, monkeypatch):
    import errno

    import ztviewer.codec.source as source_module
    from ztviewer.codec.source import LocalFile

    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 100)

    def denied(*args, **kwargs):
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(source_module, "map_file", denied)
    with pytest.raises(OSError, match="Permission denied"):
        LocalFile(path).view(0, 10)
