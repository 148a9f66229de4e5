"""The safetensors reader over the shared corpus and over malformed files built here with struct.pack.

Real-writer files must read to what MANIFEST.json says, with the tensor bytes equal to what the reference
library returns; every hostile file gets the expected verdict with a message naming the tensor and offset.
"""
from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._corpus import CORPUS, corpus_available, corpus_manifest, hostile_entries
from tests._work import assert_linear, lines_run, total_lines
from ztviewer.codec import registry
from ztviewer.codec.dtypes import DTYPES, SAFETENSORS_TO_CANONICAL
from ztviewer.codec.errors import CodecError, HeaderError
from ztviewer.codec.formats import safetensors as st_reader
from ztviewer.codec.formats.magic import sniff_safetensors
from ztviewer.codec.formats.safetensors_tensors import checked_tensors, fast_tensors
from ztviewer.codec.model import Severity
from ztviewer.codec.source import InMemorySource, LocalFile

needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")
ENTRIES = [e for e in corpus_manifest() if e["format"] == "safetensors"]
HOSTILE = {e["file"]: e for e in hostile_entries()
           if e["file"].startswith("st_") or e["file"].endswith(".safetensors")}


def open_path(path: Path):
    return registry.read_source(LocalFile(path))


def open_bytes(data: bytes, name: str = "built.safetensors"):
    return registry.read_source(InMemorySource(data, path=name))


def build(header: dict | str, buffer: bytes = b"", pad: bool = True) -> bytes:
    """``[u64 N][header][buffer]``; a str header is used verbatim (duplicate keys, odd whitespace)."""
    text = header if isinstance(header, str) else json.dumps(header, separators=(",", ":"))
    raw = text.encode()
    if pad:
        raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + buffer


def errors(tf) -> list:
    return [p for p in tf.all_problems() if p.severity is Severity.ERROR]


def warnings(tf) -> list:
    return [p for p in tf.all_problems() if p.severity is Severity.WARNING]


def oracle(path: Path) -> tuple[int, dict]:
    """Header length and header (plain json) straight from the file."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    return n, json.loads(data[8:8 + n])


# ------------------------------------------------------------------------------------------------ corpus

@needs_corpus
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: Path(e["path"]).name)
def test_corpus_file_reads_as_manifest_says(entry):
    path = CORPUS / entry["path"]
    n, header = oracle(path)
    with open_path(path) as tf:
        assert tf.readable and not list(tf.all_problems())
        assert (tf.format, tf.variant) == ("safetensors", "safetensors")
        assert [(r.kind, r.offset, r.length) for r in tf.regions] == [("header-length", 0, 8), ("header", 8, n)]
        assert tf.attributes == entry.get("metadata", {}) == header.get("__metadata__", {})
        assert [t.name for t in tf.tensors] == [k for k in header if k != "__metadata__"]  # header order
        want = {t["name"]: t for t in entry["tensors"]}
        assert {t.name for t in tf.tensors} == set(want)
        for index, tensor in enumerate(tf.tensors):
            w = want[tensor.name]
            assert (tensor.index, tensor.dtype, tensor.shape, tensor.layout) == (index, w["dtype"],
                                                                                  tuple(w["shape"]), "dense")
            comp = tensor.components["data"]
            begin, end = header[tensor.name]["data_offsets"]
            assert (comp.role, comp.offset, comp.length) == ("data", 8 + n + begin, end - begin)
            assert (comp.encoding, comp.byte_order, comp.dtype) == ("raw", "little", w["dtype"])
            assert comp.length == tensor.numel * DTYPES[tensor.dtype].itemsize
            data = bytes(tf.source.view(comp.offset, comp.length))
            assert hashlib.sha256(data).hexdigest() == w["sha256"]


@needs_corpus
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: Path(e["path"]).name)
def test_bytes_equal_the_reference_library(entry):
    from safetensors import safe_open

    path = CORPUS / entry["path"]
    compared = 0
    with open_path(path) as tf, safe_open(str(path), "np") as ref:
        assert sorted(ref.keys()) == sorted(t.name for t in tf.tensors)
        for tensor in tf.tensors:
            try:
                expected = ref.get_tensor(tensor.name)
            except (TypeError, AttributeError):  # numpy has no bfloat16 / float8: checked by sha256 above
                continue
            comp = tensor.components["data"]
            got = np.frombuffer(tf.source.view(comp.offset, comp.length), dtype=DTYPES[tensor.dtype].storage)
            assert got.tobytes() == np.ascontiguousarray(expected).tobytes()
            assert tuple(expected.shape) == tensor.shape
            compared += 1
    assert compared or entry["tensors"] == [] or "dtypes_extra" in entry["path"]


@needs_corpus
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: Path(e["path"]).name)
def test_fast_and_checked_paths_agree(entry):
    path = CORPUS / entry["path"]
    n, _ = oracle(path)
    data = path.read_bytes()
    pairs = json.loads(data[8:8 + n], object_pairs_hook=tuple)
    entries = [p for p in pairs if p[0] != "__metadata__"]
    base, buffer_len = 8 + n, len(data) - 8 - n
    fast = fast_tensors(entries, base, buffer_len)
    problems: list = []
    checked = checked_tensors(entries, base, buffer_len, problems, lambda name: None)
    assert fast is not None and not problems
    assert fast == checked


# ----------------------------------------------------------------------------------------------- hostile

#: file → (readable, [(tensor or None, substring of the message, expected offset or None)])
HOSTILE_EXPECT = {
    "empty.safetensors": (False, [(None, "not a tensor file", 0)]),
    "st_duplicate_keys.safetensors": (True, [("t_int8", "appears again with a different entry", None),
                                             ("t_int8", "overlaps tensor 't_float32'", None)]),
    "st_header_leading_space.safetensors": (True, [(None, "begins with 1 whitespace byte", 8)]),
    "st_header_len_100MB.safetensors": (False, [(None, "100000001", 0)]),
    "st_header_len_u64max.safetensors": (False, [(None, "2^64-1", 0)]),
    "st_header_len_zero.safetensors": (False, [(None, "header length N is 0", 0)]),
    "st_hole_at_start.safetensors": (True, [("t_uint64", "hole", "buffer")]),
    "st_invalid_utf8.safetensors": (False, [(None, "not valid UTF-8", "ff")]),
    "st_metadata_not_strings.safetensors": (True, [(None, "'n' is integer; 'nested' is object", None)]),
    "st_negative_dim.safetensors": (True, [("t_float32", "dimension 0 is -3", None)]),
    "st_offsets_past_eof.safetensors": (True, [("t_bool", "past the end of the file", None),
                                               (None, "1000 bytes missing", None)]),
    "st_offsets_reversed.safetensors": (True, [("t_float32", "reversed", None)]),
    "st_shape_product_overflow.safetensors": (True, [("t_float32", "overflows 64 bits", None)]),
    "st_shape_size_mismatch.safetensors": (True, [("t_float32", "needs 60 bytes", None)]),
    "st_truncated_buffer.safetensors": (True, [(None, "10 bytes missing", None),
                                               ("t_bool", "past the end of the file", None)]),
    "st_unknown_dtype.safetensors": (True, [("t_float32", "'F128'", None), ("t_int8", "did you mean 'F32'", None)]),
}


@needs_corpus
def test_every_hostile_safetensors_file_has_an_expectation():
    assert set(HOSTILE) == set(HOSTILE_EXPECT)


@needs_corpus
@pytest.mark.parametrize("name", sorted(HOSTILE_EXPECT))
def test_hostile_file_verdict(name):
    path = CORPUS / "hostile" / name
    readable, expected = HOSTILE_EXPECT[name]
    data = path.read_bytes()
    with open_path(path) as tf:
        assert tf.format == "safetensors"
        assert tf.readable is readable
        if HOSTILE[name]["expect"] == "reject":
            assert errors(tf), name
        else:
            assert warnings(tf) and not errors(tf)
        if readable and name != "st_invalid_utf8.safetensors":
            assert len(tf.tensors) == 13  # a damaged file still lists every tensor
        for tensor_name, text, offset in expected:
            match = [p for p in errors(tf) if p.tensor == tensor_name and text in p.message]
            assert match, (text, [str(p) for p in tf.all_problems()])
            problem = match[0]
            assert problem.rule
            assert problem.offset is not None
            if offset == "buffer":
                assert problem.offset == 8 + struct.unpack("<Q", data[:8])[0]
            elif offset == "ff":
                assert problem.offset == data.index(b"\xff")
            elif offset is not None:
                assert problem.offset == offset
            if tensor_name is not None and tf.readable:
                assert problem in tf.tensor(tensor_name).problems


@needs_corpus
def test_damaged_tensor_keeps_declared_shape_and_sound_neighbours():
    with open_path(CORPUS / "hostile" / "st_negative_dim.safetensors") as tf:
        bad = tf.tensor("t_float32")
        assert bad.has_errors and bad.shape == () and bad.extra["declared_shape"] == [-3, 4]
        assert not tf.tensor("t_int64").has_errors
    with open_path(CORPUS / "hostile" / "st_unknown_dtype.safetensors") as tf:
        assert tf.tensor("t_float32").dtype == "F128"
        assert tf.tensor("t_int8").dtype == "f32"


# ----------------------------------------------------------------------------------------------- sniffing

@pytest.mark.parametrize("size", range(8))
def test_sniff_rejects_files_shorter_than_nine_bytes(size):
    assert not sniff_safetensors(b"\x02" + b"\0" * 7 + b"{}"[: max(0, size - 8)], size)
    tf = open_bytes(b"\x02\0\0\0\0\0\0\0"[:size])
    assert not tf.readable and errors(tf)


def test_sniff_accepts_absurd_header_length_and_leading_space():
    assert sniff_safetensors(struct.pack("<Q", 2**64 - 1) + b'{"a":', 1000)
    assert sniff_safetensors(struct.pack("<Q", 10) + b'  {"a":1}', 1000)
    assert not sniff_safetensors(struct.pack("<Q", 2) + b"[]", 10)
    assert not sniff_safetensors(b"BLZ1\x01\x00\x03\x00" + b"\0" * 8, 100)


def test_header_longer_than_file_is_fatal_without_allocating():
    tf = open_bytes(struct.pack("<Q", 50_000_000) + b'{"a":1}')
    assert not tf.readable and "runs past the end of the file" in errors(tf)[0].message


# --------------------------------------------------------------------------------------- built files

def f32(name: str, begin: int, count: int) -> dict:
    return {name: {"dtype": "F32", "shape": [count], "data_offsets": [begin, begin + 4 * count]}}


def test_minimal_and_zero_tensor_files():
    tf = open_bytes(struct.pack("<Q", 8) + b"{}      ")
    assert tf.readable and tf.tensors == [] and not list(tf.all_problems())
    tf = open_bytes(build({**f32("a", 0, 2), "z": {"dtype": "U8", "shape": [0, 3], "data_offsets": [8, 8]},
                           **f32("b", 8, 1)}, b"\0" * 12))
    assert not list(tf.all_problems())
    assert [(t.name, t.shape, t.components["data"].length) for t in tf.tensors] == [
        ("a", (2,), 8), ("z", (0, 3), 0), ("b", (1,), 4)]


def test_entries_out_of_buffer_order_are_valid():
    data = build({**f32("second", 8, 1), **f32("first", 0, 2)}, bytes(range(12)))
    tf = open_bytes(data)
    assert not list(tf.all_problems())
    assert [t.name for t in tf.tensors] == ["second", "first"]
    assert tf.tensor("first").components["data"].offset == len(data) - 12


def test_every_safetensors_dtype():
    header, offset = {}, 0
    for spelling, canonical in SAFETENSORS_TO_CANONICAL.items():
        size = 3 * DTYPES[canonical].itemsize
        header[spelling.lower()] = {"dtype": spelling, "shape": [3], "data_offsets": [offset, offset + size]}
        offset += size
    tf = open_bytes(build(header, b"\0" * offset))
    assert not list(tf.all_problems())
    assert [t.dtype for t in tf.tensors] == list(SAFETENSORS_TO_CANONICAL.values())
    assert tf.tensor("bool").dtype == "bool" and tf.tensor("c64").dtype == "complex64"
    assert tf.tensor("f8_e4m3").dtype == "float8_e4m3fn" and tf.tensor("bf16").dtype == "bfloat16"


def test_overlap_and_trailing_bytes():
    tf = open_bytes(build({**f32("a", 0, 2), **f32("b", 4, 2)}, b"\0" * 16))
    overlap = [p for p in errors(tf) if "overlaps tensor 'a'" in p.message]
    assert overlap and overlap[0].tensor == "b" and overlap[0].rule.startswith("invalid offset")
    trailing = [p for p in errors(tf) if "trailing bytes" in p.message]
    assert trailing and trailing[0].tensor is None and trailing[0].rule.startswith("file not fully covered")
    assert len(tf.tensors) == 2


def test_identical_duplicate_is_an_error_but_the_file_opens():
    entry = '{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'
    tf = open_bytes(build('{"a":%s,"a":%s}' % (entry, entry), b"\0" * 4))
    assert tf.readable and [t.name for t in tf.tensors] == ["a"]
    (problem,) = errors(tf)
    assert problem.tensor == "a" and "reference reader accepts" in problem.message and problem.offset > 8


def test_differing_duplicate_keeps_the_last():
    tf = open_bytes(build('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                          '"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}', b"\0" * 4))
    assert [(t.name, t.dtype) for t in tf.tensors] == [("a", "uint8")]
    assert any("keeps the last one" in p.message for p in errors(tf))


@pytest.mark.parametrize("entry, text", [
    ('5', "must be a JSON object"),
    ('{"shape":[1],"data_offsets":[0,4]}', "missing required key 'dtype'"),
    ('{"dtype":"F32","data_offsets":[0,4]}', "missing required key 'shape'"),
    ('{"dtype":"F32","shape":[1]}', "missing required key 'data_offsets'"),
    ('{"dtype":4,"shape":[1],"data_offsets":[0,4]}', "'dtype' must be a string"),
    ('{"dtype":"F32","shape":"1","data_offsets":[0,4]}', "'shape' must be a list"),
    ('{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}', "dimension 0 is 1.0"),
    ('{"dtype":"F32","shape":[true],"data_offsets":[0,4]}', "dimension 0 is True"),
    ('{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}', "two integers"),
    ('{"dtype":"F32","shape":[1],"data_offsets":[0.0,4]}', "two integers"),
    ('{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}', "negative offset"),
    ('{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}', "repeats key(s) 'dtype'"),
    ('{"dtype":"F32","shape":["a",1000000000000],"data_offsets":[0,4]}', "dimension 0 is 'a'"),
])
def test_malformed_entry_is_an_error_on_that_tensor(entry, text):
    tf = open_bytes(build('{"bad":%s,"ok":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}}' % entry, b"\0" * 8))
    assert tf.readable and [t.name for t in tf.tensors] == ["bad", "ok"]
    assert any(p.tensor == "bad" and text in p.message for p in errors(tf)), [str(p) for p in errors(tf)]
    # at most the hole the bad entry leaves behind
    assert all(p.rule.startswith("invalid offset") for p in tf.tensor("ok").problems)


def test_unknown_entry_key_is_a_warning():
    tf = open_bytes(build('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"note":"x"}}', b"\0" * 4))
    assert not errors(tf) and "unknown key 'note'" in warnings(tf)[0].message


def _huge_dims(count: int) -> bytes:
    shape = ",".join(["9223372036854775807"] * count)
    return build('{"a":{"dtype":"F32","shape":[%s],"data_offsets":[0,4]}}' % shape, b"\0" * 4)


def test_shape_with_many_huge_dims_is_rejected_in_linear_work():
    tf, lines = lines_run(lambda: open_bytes(_huge_dims(20000)))
    assert any("overflows 64 bits" in p.message for p in errors(tf))
    # the size product stops at the first dimension past 64 bits (no 20,000-factor big integer)
    assert lines["ztviewer.codec.formats.safetensors_tensors._check_size"] <= 10
    assert_linear(lambda n: total_lines(lambda: open_bytes(_huge_dims(n))), 5000)


@pytest.mark.parametrize("header, fatal, text", [
    ('{"a":', True, "not valid JSON"),
    ('{"a":NaN}', True, "NaN is not valid JSON"),
    ('\n{}', False, "begins with 1 whitespace byte"),
    ('{"__metadata__":{"k":"v","k":"w"}}', False, "repeats key(s) 'k'"),
    ('{"__metadata__":["x"]}', False, "__metadata__ must be an object"),
])
def test_header_level_rules(header, fatal, text):
    tf = open_bytes(build(header))
    assert tf.readable is not fatal
    assert any(text in p.message for p in errors(tf)), [str(p) for p in tf.all_problems()]


def test_header_that_is_not_an_object_is_fatal():
    assert not sniff_safetensors(build("[1,2]"), 16)
    with pytest.raises(HeaderError, match="must be a JSON object"):
        st_reader.read(InMemorySource(build("[1,2]")))


def test_json_error_offset_is_absolute_and_in_bytes():
    tf = open_bytes(build('{"\u00e9\u00e9":{"dtype":"F32",,}}', pad=False))
    (problem,) = errors(tf)
    assert problem.offset == 8 + len('{"\u00e9\u00e9":{"dtype":"F32",'.encode())


def test_metadata_null_and_odd_padding_are_warnings():
    tf = open_bytes(build('{"__metadata__":null}\n\n\n'))
    assert tf.readable and not errors(tf)
    assert {"__metadata__ is null; read as no metadata",
            "the header is padded with whitespace other than spaces (0x20)"} <= {p.message for p in warnings(tf)}


def test_problem_offsets_locate_non_ascii_names():
    header = '{"\u540d\u524d":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},' \
             '"b\u00e9":{"dtype":"X","shape":[1],"data_offsets":[4,8]}}'
    tf = open_bytes(build(header, b"\0" * 8))
    (problem,) = errors(tf)
    assert problem.offset == 8 + header.encode().index('"b\u00e9"'.encode())


# ------------------------------------------------------------------------------------------ robustness

VALID = build({"__metadata__": {"k": "v"}, **f32("a", 0, 2), **f32("b", 8, 1)}, b"\1" * 12)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), min_size=1, max_size=6))
def test_mutated_files_never_crash(mutations):
    data = bytearray(VALID)
    for index, value in mutations:
        data[index] = value
    try:
        tf = st_reader.read(InMemorySource(bytes(data)))
    except CodecError:
        return
    for tensor in tf.tensors:
        for comp in tensor.components.values():
            assert comp.length >= 0 and comp.offset >= 8


# ------------------------------------------------------------------------------------------- benchmark

@pytest.mark.interop
def test_listing_matches_the_reference_in_linear_work(tmp_path):
    """Open + list n tensors gives ``safe_open(...).keys()``, with work linear in n (the time against the
    reference is the ``open + list N-tensor safetensors`` row of ``benchmarks/bench_open.py``)."""
    from safetensors import safe_open
    from safetensors.numpy import save_file

    def listed(count: int) -> tuple[list[str], int]:
        path = tmp_path / f"many{count}.safetensors"
        save_file({f"model.layers.{i}.weight": np.zeros((2, 3), np.float32) for i in range(count)}, str(path),
                  metadata={"format": "pt"})

        def ours() -> list[str]:
            with registry.open_file(path) as tf:
                return [t.name for t in tf.tensors]

        names, lines = lines_run(ours)
        with safe_open(str(path), "np") as f:
            assert sorted(names) == sorted(f.keys())
        return names, sum(lines.values())

    assert_linear(lambda n: listed(n)[1], 2500)


def test_duplicate_metadata_key_is_reported_on_the_file():
    tf = open_bytes(build('{"__metadata__":{"a":"1"},"__metadata__":{"a":"2"}}'))
    assert tf.attributes == {"a": "2"}
    assert any(p.tensor == "__metadata__" and "keeps the last one" in p.message for p in tf.problems)


def _duplicates(count: int, names: int) -> tuple[str, bytes]:
    entry = '{"dtype":"U8","shape":[0],"data_offsets":[0,0]}'
    header = "{" + ",".join(f'"t{i % names}":{entry}' for i in range(count)) + "}"
    return header, build(header)


def test_many_duplicates_are_located_in_one_pass():
    header, data = _duplicates(20000, 500)
    tf = open_bytes(data)
    assert len(tf.tensors) == 500
    dup = [p for p in errors(tf) if p.tensor == "t7"]
    assert len(dup) == 39 and dup[0].offset == 8 + header.index('"t7":', header.index('"t7":') + 1)
    assert_linear(lambda n: total_lines(lambda: open_bytes(_duplicates(n, n // 40)[1])), 5000)
