"""open_path dispatch, progress and cancel, bounded descriptors, and the batch header path vs the reader."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests.codec.multifile.test_multifile_builders import hf_checkpoint, raw_safetensors, spark_dataset
from ztviewer.codec import open_file
from ztviewer.codec.check import check_file
from ztviewer.codec.errors import Cancelled, UnknownFormat
from ztviewer.codec.multifile import ShardSource, SourcePool, find_set, open_path
from ztviewer.codec.multifile import shard_source as shard_source_module
from ztviewer.codec.multifile.fast_headers import read_batch
from ztviewer.codec.multifile.shard_source import ShardChanged


def test_folder_without_a_set_is_an_error_naming_what_is_there(tmp_path):
    for name in ("a.safetensors", "b.safetensors"):
        save_file({"x": np.zeros(2, np.float32)}, str(tmp_path / name))
    with pytest.raises(UnknownFormat, match=r"2 .safetensors files"):
        open_path(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UnknownFormat, match="without a tensor set"):
        open_path(tmp_path / "empty")


def test_folder_with_one_safetensors_file_opens_it(tmp_path):
    save_file({"x": np.zeros(2, np.float32)}, str(tmp_path / "model.safetensors"))
    with open_path(tmp_path) as tf:
        assert tf.format == "safetensors" and tf.tensors[0].name == "x"


def test_plain_files_go_to_the_registry(tmp_path):
    path = tmp_path / "one.safetensors"
    save_file({"x": np.arange(3, dtype=np.int32)}, str(path))
    with open_path(path) as tf, open_file(path) as ref:
        assert (tf.format, [t.name for t in tf.tensors]) == (ref.format, ["x"])


def test_json_that_is_no_set_is_refused(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"hidden_size": 8}))
    with pytest.raises(UnknownFormat, match="neither a sharded-checkpoint index"):
        open_path(path)


def test_folder_prefers_model_index_and_lists_the_others(tmp_path):
    hf_checkpoint(tmp_path, index_name="model.fp16.safetensors.index.json")
    hf_checkpoint(tmp_path)
    assert find_set(str(tmp_path)) == str(tmp_path / "model.safetensors.index.json")
    with open_path(tmp_path) as tf:
        assert tf.extra["other_indexes"] == ["model.fp16.safetensors.index.json"]


def test_progress_reports_every_shard(tmp_path):
    calls = []
    with open_path(spark_dataset(tmp_path, n_shards=5), progress=lambda d, t: calls.append((d, t))):
        pass
    assert calls == [(i, 5) for i in range(6)]


def test_cancel_raises_and_closes_what_was_opened(tmp_path, monkeypatch):
    manifest = spark_dataset(tmp_path, n_shards=5)
    closed = []
    original = ShardSource.close
    monkeypatch.setattr(ShardSource, "close", lambda self: (closed.append(self.path), original(self)))
    polls = iter([False, False, False, True])
    with pytest.raises(Cancelled):
        open_path(manifest, cancelled=lambda: next(polls))
    assert len(closed) == 3


def test_pool_bounds_open_maps_while_checking_a_whole_set(tmp_path, monkeypatch):
    monkeypatch.setattr(shard_source_module, "MAX_MAPPED", 2)
    big = {"w": np.arange(4096, dtype=np.float32)}  # past the head read at open: decoding maps the file
    shards = {f"model-{i + 1:05d}-of-00006.safetensors": {f"l{i}.w": big["w"] + i} for i in range(6)}
    with open_path(hf_checkpoint(tmp_path, shards)) as tf:
        pool = tf.pool
        assert pool.mapped_count == 0
        report = check_file(tf)
        assert report.ok and report.tensors_decoded == 6
        assert pool.mapped_count <= 2
        for t in tf.tensors:  # parked shards map again on demand
            assert float(np.frombuffer(tf.source_for(t).view(t.components["data"].offset, 4), np.float32)[0]) \
                == int(t.name[1])


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_a_thousand_shards_hold_no_descriptors(tmp_path):
    n = 300
    shards = {f"part-{i:05d}.safetensors": {f"t{i}": np.zeros(2, np.float32)} for i in range(n)}
    index = hf_checkpoint(tmp_path, shards)
    before = len(os.listdir("/proc/self/fd"))
    with open_path(index) as tf:
        assert len(tf.tensors) == n
        assert len(os.listdir("/proc/self/fd")) - before < 5


def test_shard_replaced_after_opening_is_detected(tmp_path):
    path = tmp_path / "s.safetensors"
    save_file({"w": np.zeros(4096, np.float32)}, str(path))
    source = ShardSource(str(path), SourcePool())
    save_file({"w": np.zeros(4097, np.float32)}, str(path))
    with pytest.raises(ShardChanged, match="changed on disk"):
        source.view(0, source.size)
    source.close()


def test_shard_source_reads_like_a_source(tmp_path):
    path = tmp_path / "s.safetensors"
    save_file({"w": np.arange(5000, dtype=np.float32)}, str(path))
    data = path.read_bytes()
    source = ShardSource(str(path), SourcePool(max_mapped=1))
    assert not source.is_mapped
    assert source.head(16) == data[:16] and source.read(8, 10) == data[8:18]
    assert not source.is_mapped  # served from the bytes read at open
    assert source.tail(7) == data[-7:] and source.window(len(data) - 3, 10) == data[-3:]
    assert source.is_mapped and bytes(source.buffer) == data
    source.park()
    assert not source.is_mapped and source.read(len(data) - 4, 4) == data[-4:]
    assert bytes(source.view(len(data) - 10, 10)) == data[-10:] and source.is_mapped
    assert source.read(len(data) - 4000, 4000) == data[-4000:]  # mapped: still read on a descriptor of its own
    source.close()
    with pytest.raises(ValueError):
        source.read(len(data) - 4, 4)
    with pytest.raises(ValueError):
        source.read(0, 8)  # within the bytes read at open: closed all the same


# ------------------------------------------------------------------ batch header path vs the single-file reader

UNUSUAL = {
    "spaces": '{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}',
    "unicode name": '{"\u00e9t\u00e9/\u03bc": {"dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
    "escaped name": '{"a\\"b\\\\c\\u00e9": {"dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
    "offsets out of order": '{"b":{"dtype":"U8","shape":[4],"data_offsets":[4,8]},'
                            '"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}',
    "empty tensor": '{"e":{"dtype":"F64","shape":[0,3],"data_offsets":[0,0]},'
                    '"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}}',
    "metadata later": '{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"__metadata__":{"k":"v"}}',
    "padded": '{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}}      ',
    "scalar": '{"s":{"dtype":"I64","shape":[],"data_offsets":[0,8]}}',
    "colons in metadata": '{"__metadata__":{"date":"2024-01-01T00:00:00"},"a:b":{"dtype":"U8","shape":[8],'
                          '"data_offsets":[0,8]}}',
}
BROKEN = {
    "duplicate key": '{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},'
                     '"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}}',
    "hole": '{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}',
    "size mismatch": '{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}',
    "bad dtype": '{"a":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}}',
    "leading space": ' {"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}}',
    "metadata not strings": '{"__metadata__":{"k":1},"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}}',
    "duplicate inside an entry": '{"a":{"dtype":"U8","dtype":"U8","shape":[8],"data_offsets":[0,8]}}',
    "null metadata": '{"__metadata__":null,"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}}',
    "duplicate metadata key": '{"__metadata__":{"k":"v","k":"w"},"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}}',
    "extra key": '{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8],"x":1}}',
    "negative begin": '{"a":{"dtype":"U8","shape":[8],"data_offsets":[-1,7]}}',
    "bool dim": '{"a":{"dtype":"U8","shape":[true],"data_offsets":[0,1]}}',
    "NaN": '{"__metadata__":{"k":NaN},"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}}',
}


def _tensor_view(tensors):
    return [(t.name, t.dtype, t.shape, t.index, {r: (c.offset, c.length, c.dtype) for r, c in t.components.items()},
             [(p.severity, p.message, p.rule, p.tensor, p.offset) for p in t.problems]) for t in tensors]


def _as_set(tmp_path, first, second):
    with open_file(tmp_path / first) as tf:
        weight_map = {t.name: first for t in tf.tensors} if tf.readable else {"a": first}
    weight_map["plain"] = second
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": weight_map}))
    return index


@pytest.mark.parametrize("case", sorted(UNUSUAL) + sorted(BROKEN))
def test_set_reads_every_shard_as_the_single_file_reader_does(tmp_path, case):
    first, second = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
    raw_safetensors(tmp_path / first, {**UNUSUAL, **BROKEN}[case], bytes(range(8)))
    save_file({"plain": np.arange(3, dtype=np.float32)}, str(tmp_path / second))
    with open_file(tmp_path / first) as single, open_path(_as_set(tmp_path, first, second)) as tf:
        shard = tf.shards[0]
        assert shard.plain == (case in UNUSUAL)
        assert (shard.readable, shard.attributes) == (single.readable, single.attributes)
        expected = _tensor_view(single.tensors)
        for row in expected:
            row[5][:] = [(sev, f"shard {first!r}: {m}", *rest) for sev, m, *rest in row[5]]
        assert _tensor_view(shard.tensors) == expected
        mine = [p.message for p in tf.problems if first in p.message]
        if single.readable:
            assert mine == [f"shard {first!r}: {p.message}" for p in single.problems]
        else:
            assert len(mine) == 1 and single.problems[0].message in mine[0]
        assert tf.tensor("plain").index_in_shard == 0
        assert tf.tensor("plain").index == len(shard.tensors)


def test_batch_path_refuses_any_unusual_header(tmp_path):
    for case, header in BROKEN.items():
        path = raw_safetensors(tmp_path / "x.safetensors", header, bytes(range(8)))
        size = path.stat().st_size
        assert read_batch([path.read_bytes()], [size], ["x"], [None], 0) is None, case


def test_batch_path_matches_reader_on_real_files(tmp_path):
    arrays = {"a": np.zeros((2, 3), np.float16), "b": np.arange(7, dtype=np.int64), "c": np.zeros((0, 4), np.float32),
              "d": np.array(3.5, np.float64), "e": np.ones((1, 1, 1), np.uint8)}
    paths = []
    for i in range(3):
        paths.append(tmp_path / f"s{i}.safetensors")
        save_file(dict(list(arrays.items())[i:]), str(paths[-1]), metadata={"i": str(i)})
    batch = read_batch([p.read_bytes() for p in paths], [p.stat().st_size for p in paths],
                       [p.name for p in paths], ["src"] * 3, 10)
    assert batch is not None
    index = 10
    for path, (n, metadata, tensors, data_bytes) in zip(paths, batch[1]):
        with open_file(path) as single:
            assert (n, metadata) == (single.extra["header_length"], single.attributes)
            assert [(t.name, t.dtype, t.shape, t.components["data"].offset, t.components["data"].length)
                    for t in tensors] == [(t.name, t.dtype, t.shape, t.components["data"].offset,
                                           t.components["data"].length) for t in single.tensors]
            assert [t.index for t in tensors] == list(range(index, index + len(tensors)))
            assert [t.index_in_shard for t in tensors] == [t.index for t in single.tensors]
            assert data_bytes == sum(t.components["data"].length for t in single.tensors)
            index += len(tensors)


def test_batch_path_reads_shards_sharing_a_header_each_as_its_own(tmp_path):
    """Shards whose headers are byte for byte the same (a dataset's) are decoded and checked once, yet each lists
    its own tensors: its own index, shard, source and place in the shard, as the single-file reader reads it."""
    arrays = {"a": np.zeros((2, 3), np.float16), "b": np.arange(7, dtype=np.int64)}
    same = [tmp_path / f"s{i}.safetensors" for i in range(3)]
    for path in same:
        save_file(arrays, str(path), metadata={"k": "v"})
    other = tmp_path / "o.safetensors"
    save_file({"c": np.ones(3, np.float32)}, str(other))
    paths = [same[0], other, same[1], same[2]]
    batch = read_batch([p.read_bytes() for p in paths], [p.stat().st_size for p in paths],
                       [p.name for p in paths], [f"src{i}" for i in range(4)], 5)
    assert batch is not None
    index = 5
    for i, (path, (n, metadata, tensors, data_bytes)) in enumerate(zip(paths, batch[1])):
        with open_file(path) as single:
            assert (n, metadata, data_bytes) == (single.extra["header_length"], single.attributes,
                                                 path.stat().st_size - 8 - n)
            assert [(t.name, t.dtype, t.shape, t.components["data"].offset, t.components["data"].length,
                     t.index_in_shard) for t in tensors] == [
                (t.name, t.dtype, t.shape, t.components["data"].offset, t.components["data"].length, t.index)
                for t in single.tensors]
        assert [t.index for t in tensors] == list(range(index, index + len(tensors)))
        assert {(t.shard, t.source) for t in tensors} == {(path.name, f"src{i}")}
        index += len(tensors)
    with open(same[2], "ab") as f:  # the same header, but one byte its tensors do not cover
        f.write(b"\0")
    assert read_batch([p.read_bytes() for p in paths], [p.stat().st_size for p in paths],
                      [p.name for p in paths], [None] * 4, 0) is None


def test_a_reader_descriptor_is_the_shards_own_whatever_the_pool_parks(tmp_path, monkeypatch):
    """A read-ahead thread's descriptor (reader_fd) must not be a copy of the map's descriptor: the pool closes that
    when it parks the shard (another shard mapped on another thread), possibly between the two calls, and the number
    may by then name another file. Here the shard is parked right after its map's descriptor is handed out."""
    path, other = tmp_path / "s.safetensors", tmp_path / "other.bin"
    save_file({"w": np.arange(5000, dtype=np.float32)}, str(path))
    other.write_bytes(b"x" * 100)
    source = ShardSource(str(path), SourcePool(max_mapped=1))
    real_fileno, opened = ShardSource.fileno, []

    def parked_after(self):
        fd = real_fileno(self)
        self.park()
        opened.append(os.open(other, os.O_RDONLY))   # takes the number the parked map's descriptor had
        return fd

    monkeypatch.setattr(ShardSource, "fileno", parked_after)
    fd = source.reader_fd()
    try:
        assert os.fstat(fd).st_ino == os.stat(path).st_ino
        assert os.read(fd, 8) == path.read_bytes()[:8]   # a fresh descriptor: at the start
    finally:
        os.close(fd)
        for number in opened:
            os.close(number)
    save_file({"w": np.zeros(4097, np.float32)}, str(path))
    with pytest.raises(ShardChanged):
        source.reader_fd()
    source.close()
