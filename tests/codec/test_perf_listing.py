"""Listing 10,000 tensors builds no tensor object, and the fast paths behind that speed agree exactly with the
full readers they stand in for."""
from __future__ import annotations

import gc
import json
import math
import struct
from itertools import pairwise
from pathlib import Path
from typing import Any

import cbor2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ztviewer.codec import registry
from ztviewer.codec.formats import safetensors as st_reader
from ztviewer.codec.formats import zt_fast, zt_objects, zt_v10
from ztviewer.codec.gc_pause import building_many
from ztviewer.codec.layout_check import _out_of_bounds, _overlap, _same_entry, check_layout
from ztviewer.codec.model import Component, Region, Tensor, TensorFile, warning
from ztviewer.codec.source import InMemorySource, LocalFile, Source
from ztviewer.codec.tensor_table import TensorTable

N = 10_000
DTYPES = [("float32", "F32", "f32", 4), ("float16", "F16", "f16", 2), ("float64", "F64", "f64", 8),
          ("int32", "I32", "i32", 4), ("int64", "I64", "i64", 8), ("uint8", "U8", "u8", 1), ("bool", "BOOL", "bool", 1)]


# ------------------------------------------------------------------------------------------ listing

def _names() -> list[str]:
    return [f"model.layers.{i // 10:04d}.block_{i % 10}.weight" for i in range(N)]


def _open_and_list(path: Path) -> list[tuple[str, str, tuple[int, ...]]]:
    tf = registry.open_file(path)
    try:
        assert tf.readable and not tf.has_errors
        return [(t.name, t.dtype, t.shape) for t in tf.tensors]
    finally:
        tf.close()


def _zt_file(path: Path, objects: bool) -> Path:
    blobs, entries, offset = bytearray(b"ZTEN1000"), {}, 8
    for i, name in enumerate(_names()):
        long, _, short, width = DTYPES[i % len(DTYPES)]
        shape = [i % 7 + 1, 3]
        offset += -offset % 64
        length = width * shape[0] * shape[1]
        if objects:
            entries[name] = {"shape": shape, "format": "dense",
                             "components": {"data": {"dtype": short, "offset": offset, "length": length}}}
        else:
            entries[name] = {"dtype": long, "shape": shape, "format": "dense",
                             "components": {"data": {"offset": offset, "length": length}}}
        offset += length
    blobs += bytes(offset - len(blobs))
    root = {"version": "1.2.0", "objects": entries} if objects else {"version": "1.0", "tensors": entries}
    manifest = cbor2.dumps(root)
    path.write_bytes(bytes(blobs) + manifest + struct.pack("<Q", len(manifest)) + (b"ZTEN1000" if objects else b""))
    return path


def _names_listed_without_building_tensors(path: Path) -> list[str]:
    """Open and list names; the listing builds no tensor (work counted, not timed: the figures against the
    reference readers are in benchmarks/bench_open.py)."""
    tf = registry.open_file(path)
    try:
        assert tf.readable and not tf.has_errors
        names = tf.tensor_names()
        assert isinstance(tf.tensors, TensorTable) and not list(tf.tensors.built())
        return names
    finally:
        tf.close()


@pytest.mark.parametrize("objects", [False, True], ids=["v1.0", "v1.x-objects"])
def test_zt_listing_builds_no_tensor(tmp_path, objects):
    path = _zt_file(tmp_path / "many.zt", objects)
    assert _names_listed_without_building_tensors(path) == _names()
    assert [(name, shape) for name, _, shape in _open_and_list(path)] == [(n, (i % 7 + 1, 3)) for i, n in
                                                                           enumerate(_names())]


@pytest.mark.interop
def test_safetensors_listing_builds_no_tensor(tmp_path):
    from safetensors import safe_open
    from safetensors.numpy import save_file

    path = tmp_path / "many.safetensors"
    save_file({name: np.zeros((i % 7 + 1, 3), np.dtype(DTYPES[i % len(DTYPES)][0]))
               for i, name in enumerate(_names())}, str(path), metadata={"format": "np"})
    with safe_open(str(path), "np") as f:
        reference = list(f.keys())
    assert sorted(_names_listed_without_building_tensors(path)) == sorted(reference)
    assert sorted(name for name, _, _ in _open_and_list(path)) == sorted(reference)


# ------------------------------------------------------------------------- safetensors: plain vs checked

def _st_source(header_text: str, buffer_len: int) -> tuple[Source, int]:
    raw = header_text.encode()
    raw += b" " * (-len(raw) % 8)
    data = struct.pack("<Q", len(raw)) + raw + bytes(buffer_len)
    return InMemorySource(data, path="h.safetensors"), len(raw)


def _plain_agrees(header_text: str, buffer_len: int) -> bool:
    """The plain path either declines or builds exactly what the checked path builds, with no problem."""
    source, n = _st_source(header_text, buffer_len)
    plain = st_reader._read_plain(source, n)
    if plain is None:
        return False
    checked = st_reader._read_checked(source, n)
    assert not list(checked.all_problems()), header_text
    assert plain == checked, header_text
    return True


def _entry(dtype: str, shape: list, begin: int, end: int) -> str:
    return json.dumps({"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}, separators=(",", ":"))


def test_plain_path_takes_reference_files_with_colons_in_metadata(tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "m.safetensors"
    save_file({"a:b": np.zeros((2, 3), np.float32), "c": np.ones(4, np.int64)}, str(path),
              metadata={"date": "2024-01-01T00:00:00", "note": 'a: b "quoted"'})
    source = LocalFile(path)
    (n,) = struct.unpack("<Q", source.read(0, 8))
    plain = st_reader._read_plain(source, n)
    assert plain is not None and plain == st_reader._read_checked(source, n)
    assert plain.attributes["date"] == "2024-01-01T00:00:00"
    source.close()


@pytest.mark.parametrize("header, buffer_len", [
    # a duplicate tensor whose first value has no keys: key counts alone would not see it
    ('{"a":5,"a":' + _entry("F32", [2], 0, 8) + '}', 8),
    ('{"a":' + _entry("F32", [2], 0, 8) + ',"a":' + _entry("F32", [2], 0, 8) + '}', 8),
    ('{"a" :' + _entry("F32", [2], 0, 8) + ',"a" :' + _entry("F32", [2], 0, 8) + ', "b":' + _entry("U8", [0], 8, 8)
     + '}', 8),
    ('{"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}', 8),
    ('{"__metadata__":{"k":"v","k":"w"},"a":' + _entry("F32", [2], 0, 8) + '}', 8),
    ('{"__metadata__":{"k":"v"},"__metadata__":{"k":"v"},"a":' + _entry("F32", [2], 0, 8) + '}', 8),
    ('{"__metadata__":null,"a":' + _entry("F32", [2], 0, 8) + '}', 8),
    ('{"__metadata__":{"n":1},"a":' + _entry("F32", [2], 0, 8) + '}', 8),
    ('{"a":' + _entry("F32", [0, 2 ** 70], 0, 0) + '}', 0),          # a dimension past u64 in an empty tensor
    ('{"a":' + _entry("F32", [2 ** 70], 0, 8) + '}', 8),
    ('{"a":' + _entry("F32", [-2, -1], 0, 8) + '}', 8),
    ('{"a":' + _entry("F32", [2.0], 0, 8) + '}', 8),
    ('{"a":' + _entry("F32", [2], 0, 8) + '}\n', 8),                # padded with a newline: a warning
    (' {"a":' + _entry("F32", [2], 0, 8) + '}', 8),                 # leading space: an error
    ('{"a":' + _entry("F32", [2], 8, 16) + ',"b":' + _entry("F32", [2], 0, 8) + '}', 16),   # out of order
    ('{"a":' + _entry("F32", [2], 0, 8) + '}', 9),                  # a trailing byte
    ('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}}', 8),
    ('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8,9]}}', 8),
    ('{"a":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}}', 8),
])
@pytest.mark.parametrize("loader", ["default", "json"])
def test_plain_path_declines_whatever_the_checked_path_reports(header, buffer_len, loader, monkeypatch):
    if loader == "json":
        monkeypatch.setattr(st_reader, "_loads", st_reader._json_loads)
    assert not _plain_agrees(header, buffer_len)


def test_plain_path_accepts_any_key_order_and_spacing_it_can_prove():
    entry = '{"shape":[2],"data_offsets":[0,8],"dtype":"F32"}'
    assert _plain_agrees('{"a":' + entry + '}', 8)
    assert _plain_agrees('{"a":' + entry + ',"__metadata__":{"x":"y"}}', 8)
    assert _plain_agrees('{ "a": ' + entry + ' }', 8)  # spaces after colons only
    assert _plain_agrees("{}", 0)


_NAME = st.text(st.sampled_from('ab:"\\ é'), min_size=1, max_size=4)
_TEXT = st.text(st.sampled_from('x:" '), max_size=3)
_VALUE = st.sampled_from([1, None, {"k": "v"}])


def _rarely(draw: Any, noisy: bool, usual: Any, *odd: Any) -> Any:
    return usual if not noisy or draw(st.integers(0, 9)) else draw(st.sampled_from(odd))


@st.composite
def _headers(draw: Any) -> tuple[str, int]:
    """Valid headers, and (noisy) headers with duplicates, odd spacing, odd values and odd keys mixed in."""
    noisy = draw(st.booleans())
    parts, covered = [], 0
    for i in range(draw(st.integers(0, 4))):
        dtype, size = _rarely(draw, noisy, draw(st.sampled_from([("F32", 4), ("U8", 1), ("I64", 8)])), ("f32", 4))
        shape = draw(st.lists(st.integers(0, 3), max_size=3))
        if noisy and not draw(st.integers(0, 9)):
            shape.append(draw(st.sampled_from([-1, 2 ** 64, 2 ** 70])))
        begin = _rarely(draw, noisy, covered, covered + 1, max(0, covered - 1))
        end = begin + max(0, math.prod(shape) * size) + _rarely(draw, noisy, 0, 1)
        covered = max(covered, end)
        keys = [("dtype", json.dumps(dtype)), ("shape", json.dumps(shape)), ("data_offsets", json.dumps([begin, end]))]
        keys = draw(st.permutations(keys))
        if noisy and not draw(st.integers(0, 9)):
            keys.append(draw(st.sampled_from(keys + [("x", "1")])))
        colon = _rarely(draw, noisy, ":", " :", ": ", "\t:")
        body = ",".join(f'"{k}"{colon}{v}' for k, v in keys)
        parts.append((draw(_NAME) + ("" if noisy else str(i)), "{" + body + "}"))
    if draw(st.booleans()):
        meta = dict(draw(st.lists(st.tuples(_NAME, st.one_of(_TEXT, _VALUE) if noisy else _TEXT), max_size=3)))
        parts.insert(draw(st.integers(0, len(parts))), ("__metadata__", json.dumps(meta, separators=(",", ":"))))
    if noisy and parts and not draw(st.integers(0, 5)):
        parts.append(draw(st.sampled_from(parts)))
    text = "{" + ",".join(f"{json.dumps(name)}:{value}" for name, value in parts) + "}"
    return text, min(covered, 4096) + _rarely(draw, noisy, 0, 1)  # huge spans: past the end


@settings(max_examples=800, deadline=None)
@given(_headers(), st.booleans())
def test_plain_path_agrees_with_the_checked_path(case, with_json):
    if with_json:
        original, st_reader._loads = st_reader._loads, st_reader._json_loads
        try:
            _plain_agrees(*case)
        finally:
            st_reader._loads = original
    else:
        _plain_agrees(*case)


def test_plain_path_without_orjson_reads_the_same(monkeypatch):
    monkeypatch.setattr(st_reader, "_loads", st_reader._json_loads)
    assert _plain_agrees('{"__metadata__":{"k":"v:w"},"a":' + _entry("F32", [2], 0, 8) + '}', 8)
    assert not _plain_agrees('{"a":' + _entry("F32", [2], 0, 8) + ',"a":' + _entry("F32", [2], 0, 8) + '}', 8)
    _plain_agrees('{"a\\ud800":' + _entry("F32", [2], 0, 8) + '}', 8)  # a lone surrogate, as json reads it


# ------------------------------------------------------------------------------- zTensor batch fast paths

def _v10_entries(draw: Any) -> dict:
    entries = {}
    for i in range(draw(st.integers(0, 6))):
        entry: Any = {"dtype": "float32", "shape": [2], "format": "dense",
                      "components": {"data": {"offset": 64 * (i + 1), "length": 8}}}
        kind = draw(st.integers(0, 6))
        if kind == 1:
            entry["dtype"] = draw(st.sampled_from(["f32", 5, None, "complex64"]))
        elif kind == 2:
            entry["components"]["data"]["length"] = draw(st.sampled_from([7, -8, 2 ** 64, 8.0]))
        elif kind == 3:
            entry["components"]["data"]["digest"] = draw(st.sampled_from(["crc32c:0x0000ABCD", "crc32c:xyz", 5]))
        elif kind == 4:
            entry = draw(st.sampled_from([[], "x", 5, {"dtype": "float32"}]))
        elif kind == 5:
            entry["shape"] = draw(st.sampled_from([[0, 2 ** 65], [-1], [2.0], "2"]))
        name = draw(st.sampled_from([f"t{i}", i, f"t{i}"]))
        entries[name] = entry
    return entries


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_v10_batch_equals_the_full_reader_entry_by_entry(data):
    entries = _v10_entries(data.draw)
    fast = zt_fast.v10_tensors(entries, zt_v10._tensor)
    assert fast == [zt_v10._tensor(i, name, entry) for i, (name, entry) in enumerate(entries.items())]


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_objects_batch_equals_the_full_reader_entry_by_entry(data):
    entries = _v10_entries(data.draw)
    for entry in entries.values():
        if isinstance(entry, dict) and "dtype" in entry:
            dtype = entry.pop("dtype")
            if isinstance(entry.get("components"), dict) and isinstance(entry["components"].get("data"), dict):
                entry["components"]["data"]["dtype"] = {"float32": "f32"}.get(dtype, dtype)
    fast = zt_fast.objects_tensors(entries, zt_objects._object)
    assert fast == [zt_objects._object(i, name, entry) for i, (name, entry) in enumerate(entries.items())]


# ------------------------------------------------------------------------------------ layout: fast = sweep

def _reference_check_layout(tf: TensorFile, file_size: int, alignment: int | None) -> None:
    """check_layout as it was before its in-order pass: every span sorted and swept."""
    regions = [r for r in tf.regions if r.length]
    spans = [(r.offset, r.end, k) for k, r in enumerate(regions)]
    k = len(spans)
    for tensor in tf.tensors:
        for role, c in tensor.components.items():
            offset, end = c.offset, c.offset + c.length
            if end > file_size:
                _out_of_bounds(tensor, role, offset, c.length, file_size)
            elif end != offset:
                if alignment and offset % alignment:
                    tensor.problems.append(warning(
                        f"starts at byte {offset}, which is not a multiple of {alignment}", tensor=tensor.name,
                        component=role, offset=offset, rule=f"components are {alignment}-byte aligned"))
                spans.append((offset, end, k))
            k += 1
    spans.sort()
    owners = [(None, r.label or r.kind) for r in regions] + [(t, role) for t in tf.tensors for role in t.components]
    reach, reach_owner, reach_start = -1, 0, 0
    for offset, end, owner in spans:
        if offset < reach:
            a, b = owners[owner], owners[reach_owner]
            if not (offset == reach_start and end == reach and _same_entry(a, b)):
                _overlap(a, (offset, end), b, (reach_start, reach))
        if end > reach:
            reach, reach_owner, reach_start = end, owner, offset


@st.composite
def _layouts(draw: Any) -> TensorFile:
    tensors, at = [], draw(st.integers(0, 80))
    for i in range(draw(st.integers(0, 6))):
        components = {}
        for role in draw(st.lists(st.sampled_from(["data", "values", "indices"]), max_size=2, unique=True)):
            at += draw(st.sampled_from([0, 0, 8, 64, -8, -64]))
            length = draw(st.sampled_from([0, 8, 16, 64, -4]))
            components[role] = Component(role, at, length)
            at += max(length, 0)
        tensors.append(Tensor(draw(st.sampled_from(["a", "b", f"t{i}"])), "uint8", (1,), "custom", components,
                              index=i))
    regions = [Region(kind, draw(st.integers(-8, 400)), draw(st.sampled_from([0, 8, 64])), kind)
               for kind in draw(st.lists(st.sampled_from(["magic", "manifest", "footer"]), max_size=3))]
    return TensorFile("x", "custom", tensors=tensors, regions=regions)


@settings(max_examples=800, deadline=None)
@given(_layouts(), st.sampled_from([None, 64]), st.integers(0, 500))
def test_layout_check_reports_what_the_full_sweep_reports(tf, alignment, size):
    import copy

    expected = copy.deepcopy(tf)
    check_layout(tf, size, alignment=alignment)
    _reference_check_layout(expected, size, alignment)
    assert [t.problems for t in tf.tensors] == [t.problems for t in expected.tensors]


@st.composite
def _table_layouts(draw: Any) -> tuple[list[int], list[int], list[Region]]:
    """Plain entries in any order: apart, touching, overlapping, identical, misaligned or past the end."""
    count = draw(st.integers(1, 7))
    offsets = [draw(st.sampled_from([64, 128, 192, 256, 320, 72, 0])) for _ in range(count)]
    lengths = [draw(st.sampled_from([8, 64, 128])) for _ in range(count)]
    regions = [Region(kind, draw(st.sampled_from([0, 8, 400, 448])), draw(st.sampled_from([8, 64])), kind)
               for kind in draw(st.lists(st.sampled_from(["magic", "manifest", "footer"]), max_size=3, unique=True))]
    return offsets, lengths, regions


@settings(max_examples=400, deadline=None)
@given(_table_layouts(), st.sampled_from([None, 64]), st.sampled_from([300, 512]))
def test_a_tables_layout_check_reports_what_the_full_sweep_reports(layout, alignment, size):
    """A table whose entries are listed out of file order (a manifest sorted by name) is proven sound over its
    sorted columns without building a tensor; any overlap is still found."""
    offsets, lengths, regions = layout

    def table() -> TensorTable:
        return TensorTable([f"t{i}" for i in range(len(offsets))], ["uint8"] * len(offsets),
                           [(n,) for n in lengths], list(offsets), list(lengths))

    tf = TensorFile("x", "zt", tensors=table(), regions=list(regions))
    expected = TensorFile("x", "zt", tensors=list(table()), regions=list(regions))
    check_layout(tf, size, alignment=alignment)
    _reference_check_layout(expected, size, alignment)
    found = [t.problems for t in tf.tensors]
    assert found == [t.problems for t in expected.tensors]
    ends = sorted(zip(offsets, (o + n for o, n in zip(offsets, lengths))))
    if not any(found) and max(e for _, e in ends) <= size:
        assert all(a[1] <= b[0] for a, b in pairwise(ends))


def test_a_zt_manifest_listed_by_name_opens_without_building_tensors(tmp_path):
    from ztviewer.codec.arrays import save_arrays

    path = tmp_path / "by-name.zt"
    save_arrays(path, {f"layers.{i}.w": np.zeros(2, np.float32) for i in range(12)}, "zt")  # layers.10 before .2
    tf = registry.open_file(path)
    try:
        assert isinstance(tf.tensors, TensorTable) and tf.tensors.positions() == {}
        offsets = [t.components["data"].offset for t in tf.tensors]
        assert offsets != sorted(offsets) and not list(tf.all_problems())
    finally:
        tf.close()


# ---------------------------------------------------------------------------------------- the collector

def test_building_many_restores_the_collector_and_leaves_frozen_objects_alone():
    assert gc.isenabled()
    with building_many():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), building_many():
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with building_many():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    frozen = [object()]
    gc.freeze()
    try:
        count = gc.get_freeze_count()
        with building_many():
            frozen.append([])
        assert gc.get_freeze_count() == count
    finally:
        gc.unfreeze()


def test_tuple_fast_path_leaves_a_dimension_past_u64_to_the_checked_path():
    from ztviewer.codec.formats.safetensors_tensors import fast_tensors

    entry = (("dtype", "F32"), ("shape", [0, 2 ** 70]), ("data_offsets", [0, 0]))
    assert fast_tensors((("a", entry),), 8, 0) is None
    entry = (("dtype", "F32"), ("shape", [0, 2]), ("data_offsets", [0, 0]))
    assert fast_tensors((("a", entry),), 8, 0) is not None


def test_the_positions_a_table_gives_stay_live_when_every_tensor_is_built_at_once(tmp_path):
    """A tree holds ``positions()`` from the start; building all tensors in one pass (iterating, sorting) must
    fill that mapping, not replace it, or the tree could not find a tensor built then."""
    path = _zt_file(tmp_path / "many.zt", False)
    tf = registry.open_file(path)
    try:
        table = tf.tensors
        assert isinstance(table, TensorTable)
        positions = table.positions()
        tensors = list(table)
        assert [positions[id(t)] for t in tensors] == list(range(len(tensors)))
    finally:
        tf.close()
