"""The C fast paths (ztviewer/codec/_accel.c) build exactly what the Python paths they stand in for build, give
up in exactly the same cases, and neither leak nor crash on odd input.

Where the C code deliberately declines what Python would accept (values past u64, which no real file holds,
and containers JSON never yields), the tests say so: declining only sends the input to the Python path.

The direct reader of safetensors JSON text (safetensors_header, and plain_headers before it calls loads) is held
to the full pure-Python reader of the same bytes written as a file: whatever it accepts, that reader reads with no
problem and the same result. It may accept more than the Python fast path (it finds duplicate keys exactly, where
Python counts colons), but never less among texts without escapes or signs. Random and mutated texts check both,
and that it never crashes (the same tests also ran against an AddressSanitizer build).
"""
from __future__ import annotations

import gc
import importlib
import itertools
import json
import os
import random
import shutil
import struct
import sys
import sysconfig
import tempfile
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from _accel_support import assert_no_leak, pure_python
from hypothesis import given, settings
from hypothesis import strategies as st

from ztviewer.codec import accel
from ztviewer.codec.formats import safetensors as st_reader
from ztviewer.codec.formats import zt_fast, zt_objects, zt_v10
from ztviewer.codec.formats.safetensors import parse_json
from ztviewer.codec.formats.safetensors_tensors import DTYPE_INFO, python_dict_tensors
from ztviewer.codec.layout_check import _plain_hull
from ztviewer.codec.model import Tensor, TensorFile, dense_tensor
from ztviewer.codec.multifile import fast_headers
from ztviewer.codec.registry import open_file
from ztviewer.codec.source import Source

NATIVE = accel.native
needs_native = pytest.mark.skipif(NATIVE is None, reason="ztviewer.codec._accel is not built, or disabled")
U64 = 1 << 64
ST_DTYPES = sorted(DTYPE_INFO)


@contextmanager
def _json_parser(use_json: bool) -> Iterator[None]:
    saved = st_reader._loads
    if use_json:
        st_reader._loads = st_reader._json_loads
    try:
        yield
    finally:
        st_reader._loads = saved


def _raw(tensor: Any) -> str:
    """Every slot of a tensor, exactly (``True`` is not ``1``, a deferred component is not a built one)."""
    assert type(tensor) is Tensor
    return repr(tuple(getattr(tensor, slot, "<unset>") for slot in Tensor.__slots__))


def _same(native: list | None, python: list | None) -> None:
    if python is None or native is None:
        assert native is python is None, (native, python)
        return
    assert [_raw(t) for t in native] == [_raw(t) for t in python]
    assert native == python


def _past_u64(python: list | None, *limits: int) -> bool:
    """Whether the Python path built tensors that lie past u64, or took a limit past it: the C path declines
    those (no file is that large), and the Python path then reads them."""
    return python is not None and (max(limits, default=0) >= U64 or any(t._data[0] >= U64 for t in python))


def _rarely(draw: Any, noisy: bool, usual: Any, *odd: Any) -> Any:
    return usual if not noisy or draw(st.integers(0, 7)) else draw(st.sampled_from(odd))


# ------------------------------------------------------------------------------------ the build itself

@pytest.mark.skipif(bool(os.environ.get("ZTVIEWER_PURE_PYTHON")), reason="the C path is disabled on purpose")
def test_the_extension_is_built_wherever_it_can_be():
    include = sysconfig.get_paths()["include"]
    if not (shutil.which("cc") or shutil.which("gcc")) or not os.path.isfile(os.path.join(include, "Python.h")):
        pytest.skip("no C compiler or no Python.h: the pure-Python paths run")
    try:
        module = importlib.import_module("ztviewer.codec._accel")
    except ImportError as exc:
        pytest.fail(f"a C compiler and Python.h are present but ztviewer.codec._accel does not import ({exc}); "
                    "build it with `python setup.py build_ext --inplace`")
    assert accel.native is module


# ------------------------------------------------------------------------------ safetensors entries

_ODD_DTYPES = ("f32", "F33", 5, None, True, ["F32"])
_ODD_DIMS = (-1, U64, 2 ** 70, True, False, 2.0, "2", None)
_ODD_SHAPES = ([1] * 64, [1] * 65, "[2]", {"a": 1}, None, [0, U64 - 1], [0, U64], [2 ** 63, 4], [U64 - 1])


@st.composite
def _st_pairs(draw: Any, json_only: bool = False, noisy: bool | None = None) -> tuple[list[tuple[Any, Any]], int]:
    """``(name, value)`` entries of a decoded header, contiguous from 0 when not noisy, and the bytes they
    cover; noisy ones hold odd values, keys and spans."""
    noisy = draw(st.booleans()) if noisy is None else noisy
    pairs, covered = [], 0
    for i in range(draw(st.integers(0, 4))):
        raw_dtype = draw(st.sampled_from(ST_DTYPES))
        dtype: Any = _rarely(draw, noisy, raw_dtype, *_ODD_DTYPES)
        shape: Any = draw(st.lists(st.integers(0, 4), max_size=3))
        if noisy and not draw(st.integers(0, 5)):
            shape = draw(st.sampled_from(_ODD_SHAPES))
        elif noisy and not draw(st.integers(0, 5)):
            shape.insert(draw(st.integers(0, len(shape))), draw(st.sampled_from(_ODD_DIMS)))
        size = DTYPE_INFO[raw_dtype][1]
        nbytes = size
        for dim in shape if isinstance(shape, list) else []:
            nbytes *= dim if type(dim) is int else 1
        nbytes = 0 if isinstance(shape, list) and 0 in shape else max(nbytes, 0)
        begin = _rarely(draw, noisy, covered, covered + 1, covered - 1, True, float(covered))
        end = (begin if type(begin) is int else covered) + _rarely(draw, noisy, nbytes, nbytes + 1, nbytes - 1)
        offsets: Any = _rarely(draw, noisy, [begin, end], [begin, end, end], [begin], None, "ab", [begin, float(end)])
        value: Any = {"dtype": dtype, "shape": shape, "data_offsets": offsets}
        keys = draw(st.permutations(list(value)))
        value = {key: value[key] for key in keys}
        if noisy and not draw(st.integers(0, 7)):
            value[draw(st.sampled_from(["x", "dtype"]))] = 1
        if noisy and not draw(st.integers(0, 7)):
            del value[draw(st.sampled_from(keys))]
        if noisy and not draw(st.integers(0, 9)):
            value = draw(st.sampled_from([[], "x", 5, None, [1, 2, 3]]))
        name: Any = f"t{i}" if json_only else _rarely(draw, noisy, f"t{i}", i, None)
        pairs.append((name, value))
        if type(end) is int:
            covered = max(covered, end)
    return pairs, covered


@st.composite
def _st_args(draw: Any) -> tuple[dict, int, int, int, tuple[str, object] | None]:
    pairs, covered = draw(_st_pairs())
    buffer_len = covered + draw(st.sampled_from([0, 0, 0, 1, -1]))
    shard = draw(st.sampled_from([None, ("model-00001.safetensors", object())]))
    return dict(pairs), draw(st.integers(0, 2 ** 40)), buffer_len, draw(st.integers(0, 10 ** 6)), shard


def _st_native(header: dict, base: Any, buffer_len: Any, first: int = 0, shard: tuple | None = None,
               dtypes: dict = DTYPE_INFO) -> list | None:
    name, source = shard if shard is not None else (None, None)
    return NATIVE.safetensors_dense(header, base, buffer_len, first, dtypes, name, source)


@needs_native
@settings(max_examples=600, deadline=None)
@given(_st_args())
def test_safetensors_dense_equals_the_python_path(args):
    header, base, buffer_len, first, shard = args
    native, python = _st_native(header, base, buffer_len, first, shard), python_dict_tensors(header, base,
                                                                                             buffer_len, first, shard)
    if _past_u64(python, buffer_len):
        assert native is None
    else:
        _same(native, python)


def _entry(dtype: Any, shape: Any, begin: Any, end: Any) -> dict:
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


@needs_native
@pytest.mark.parametrize("header, buffer_len, accepted", [
    ({}, 0, True),
    ({}, 1, False),
    ({"a": _entry("F32", [0, U64 - 1], 0, 0)}, 0, True),      # empty, with the largest u64 dimension
    ({"a": _entry("F32", [0, U64], 0, 0)}, 0, False),         # empty, but a dimension past u64
    ({"a": _entry("F32", [U64, 0], 0, 0)}, 0, False),
    ({"a": _entry("F32", [0, -1], 0, 0)}, 0, False),
    ({"a": _entry("U8", [2 ** 32, 2 ** 32], 0, 0)}, 0, False),  # the product wraps to 0 in u64
    ({"a": _entry("F64", [2 ** 61], 0, 0)}, 0, False),        # so does itemsize * dim
    ({"a": _entry("U8", [1] * 64, 0, 1)}, 1, True),
    ({"a": _entry("U8", [1] * 65, 0, 1)}, 1, False),
    ({"a": _entry("U8", [True], 0, 1)}, 1, False),
    ({"a": _entry("U8", [1], False, 1)}, 1, False),
    ({"a": _entry("U8", [1], 0, True)}, 1, False),
    ({"a": _entry("U8", [2], 0, 2), "b": _entry("U8", [1], 1, 2)}, 2, False),   # overlap
    ({"a": _entry("U8", [1], 0, 1), "b": _entry("U8", [1], 2, 3)}, 3, False),   # a hole
    ({"a": _entry("U8", [1], 1, 2)}, 2, False),
    ({"a": _entry("U8", [1], 1, 2), "b": _entry("U8", [1], 0, 1)}, 2, False),   # out of order
    ({"a": _entry("U8", [2], 2, 0)}, 0, False),
    ({"a": _entry(["U8"], [2], 0, 2)}, 2, False),              # unhashable dtype
    ({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1], "x": 1}}, 1, False),
    ({1: _entry("U8", [1], 0, 1), None: _entry("I64", [], 1, 9)}, 9, True),     # names are not checked
])
def test_safetensors_dense_edges(header, buffer_len, accepted):
    for shard in (None, ("s", object())):
        native = _st_native(header, 8, buffer_len, 3, shard)
        _same(native, python_dict_tensors(header, 8, buffer_len, 3, shard))
        assert (native is not None) == accepted


@needs_native
def test_safetensors_dense_declines_what_no_json_header_or_real_file_holds():
    """The Python path takes these; the C one gives up (and the checked path then reads the file)."""
    huge = {"a": _entry("U8", [2 ** 62, 8], 0, 2 ** 65)}      # 2**65 bytes: the buffer is past u64
    assert python_dict_tensors(huge, 8, 2 ** 65) is not None and _st_native(huge, 8, 2 ** 65) is None
    plain = {"a": _entry("U8", [2], 0, 2)}
    assert python_dict_tensors(plain, U64, 2) is not None and _st_native(plain, U64, 2) is None
    assert _st_native(plain, U64 - 1, 2) is not None                         # its offset is still a u64
    two = {"a": _entry("U8", [2], 0, 2), "b": _entry("U8", [2], 2, 4)}
    assert python_dict_tensors(two, U64 - 2, 4) is not None and _st_native(two, U64 - 2, 4) is None
    pair = {"a": {"dtype": "U8", "shape": [2], "data_offsets": (0, 2)}}
    assert python_dict_tensors(pair, 8, 2) is not None and _st_native(pair, 8, 2) is None
    for bad in (-1, True, 2.0, None):
        assert _st_native(plain, bad, 2) is None and _st_native(plain, 8, bad) is None


@needs_native
def test_safetensors_dense_numbers_and_names_the_shard():
    source = object()
    header = {"a": _entry("F32", [2], 0, 8), "b": _entry("BF16", [3, 1], 8, 14)}
    tensors = _st_native(header, 100, 14, 7, ("s.safetensors", source))
    assert [(t.name, t.dtype, t.shape, t.index, t._data[:2]) for t in tensors] == [
        ("a", "float32", (2,), 7, (100, 8)), ("b", "bfloat16", (3, 1), 8, (108, 6))]
    assert [t._extra for t in tensors] == [{"shard": "s.safetensors", "source": source, "index_in_shard": i}
                                           for i in range(2)]
    assert tensors[0]._extra is not tensors[1]._extra
    assert all(t._extra is None for t in _st_native(header, 100, 14))


# ------------------------------------------------------------------------------------ zTensor entries

#: (v1.0 name, objects short name, itemsize)
_ZT_DTYPES = sorted((canonical, short, size) for short, (canonical, size) in zt_fast._SHORT_INFO.items())


@st.composite
def _zt_entries(draw: Any, objects: bool) -> dict:
    """Plain entries, with odd names, keys, values and optional component keys mixed in."""
    entries: dict = {}
    for i in range(draw(st.integers(0, 6))):
        noisy = draw(st.booleans())
        long, short, itemsize = draw(st.sampled_from(_ZT_DTYPES))
        dtype: Any = short if objects else long
        dtype = _rarely(draw, noisy, dtype, long if objects else short, 5, None, True, ["f32"], "complex256")
        shape: Any = draw(st.lists(st.integers(0, 3), max_size=3))
        length: Any = itemsize
        for dim in shape:
            length *= dim
        shape = _rarely(draw, noisy, shape, [0, U64 - 1], [0, U64], [-1], [True], [2.0], "2", (2,), [2 ** 63, 4],
                        [1] * 70)
        offset: Any = _rarely(draw, noisy, 64 * (i + 1), 0, U64 - 1, U64, -64, True, 64.0)
        length = _rarely(draw, noisy, length, length + 1, -1, U64, True, float(length))
        data: Any = {"offset": offset, "length": length}
        if objects:
            data["dtype"] = dtype
        if noisy and not draw(st.integers(0, 3)):
            key, value = draw(st.sampled_from([("encoding", "raw"), ("encoding", "zstd"), ("digest", "crc32c:0x0"),
                                               ("uncompressed_length", length), ("x", 1)]))
            data[key] = value
        if noisy and not draw(st.integers(0, 7)):
            del data[draw(st.sampled_from(sorted(data)))]
        components: Any = _rarely(draw, noisy, {"data": data}, {"data": data, "x": data}, {"values": data}, [data],
                                  "d", None)
        entry: Any = {"shape": shape, "format": _rarely(draw, noisy, "dense", "sparse_csr", 5, b"dense", None),
                      "components": components}
        if not objects:
            entry["dtype"] = dtype
        entry = {key: entry[key] for key in draw(st.permutations(list(entry)))}
        if noisy and not draw(st.integers(0, 7)):
            entry[draw(st.sampled_from(["attributes", "format"]))] = {}
        if noisy and not draw(st.integers(0, 9)):
            entry = draw(st.sampled_from([[], "x", 5, None]))
        entries[_rarely(draw, noisy, f"t{i}", i, b"t", None)] = entry
    return entries


_FALLBACK = object()


def _fallback(index: int, name: Any, entry: Any) -> object:
    return _FALLBACK


@needs_native
@pytest.mark.parametrize("objects", [False, True], ids=["v1.0", "objects"])
@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_zt_dense_takes_exactly_the_plain_entries_the_python_loop_takes(objects, data):
    entries, start = data.draw(_zt_entries(objects)), data.draw(st.integers(0, 2 ** 40))
    loop, infos, required = ((zt_fast._objects_loop, zt_fast._SHORT_INFO, 3) if objects
                             else (zt_fast._v10_loop, zt_fast._V10_INFO, 2))
    tensors, unusual = NATIVE.zt_dense(entries, start, infos, objects)
    python = loop(entries.items(), _fallback, start)
    assert len(tensors) == len(python) == len(entries)
    assert unusual == sorted(set(unusual)) and all(type(at) is int for at in unusual)
    for at, ((name, entry), native, reference) in enumerate(zip(entries.items(), tensors, python)):
        plain = reference is not _FALLBACK and len(entry["components"]["data"]) == required
        assert (at not in unusual) == plain, (name, entry)
        if plain:
            assert _raw(native) == _raw(reference) and native == reference
        else:
            assert native is None


@needs_native
@pytest.mark.parametrize("objects", [False, True], ids=["v1.0", "objects"])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_zt_readers_list_the_same_tensors_with_and_without_c(objects, data):
    entries, start = data.draw(_zt_entries(objects)), data.draw(st.integers(0, 1000))
    batch, full = (zt_fast.objects_tensors, zt_objects._object) if objects else (zt_fast.v10_tensors, zt_v10._tensor)
    native = batch(entries, full, start)
    with pure_python():
        python = batch(entries, full, start)
    _same(native, python)


@needs_native
def test_zt_dense_edges():
    def v10(shape: Any, offset: Any, length: Any, **data: Any) -> dict:
        return {"dtype": "float32", "shape": shape, "format": "dense",
                "components": {"data": {"offset": offset, "length": length, **data}}}

    entries = {"empty": v10([0, U64 - 1], U64 - 1, 0), "past": v10([0, U64], 64, 0), "wraps": v10([2 ** 62, 4], 64, 0),
               "last": v10([1], U64 - 1, 4), "bool": v10([1], 64, 4.0), "opt": v10([1], 64, 4, encoding="raw"),
               3: v10([1], 64, 4), "ok": v10([], 64, 4)}
    tensors, unusual = NATIVE.zt_dense(entries, 10, zt_fast._V10_INFO, False)
    assert unusual == [1, 2, 4, 5, 6]
    assert [(t.name, t.index, t.shape, t._data) for t in tensors if t is not None] == [
        ("empty", 10, (0, U64 - 1), (U64 - 1, 0, "raw", None, None, "float32")),
        ("last", 13, (1,), (U64 - 1, 4, "raw", None, None, "float32")),
        ("ok", 17, (), (64, 4, "raw", None, None, "float32"))]
    assert all(t.layout_spelling == "dense" and t._extra is None for t in tensors if t is not None)
    assert NATIVE.zt_dense({}, 0, zt_fast._V10_INFO, False) == ([], [])


# ------------------------------------------------------------------------------------------- layout hull

@st.composite
def _hull_case(draw: Any) -> tuple[list[Tensor], int, int | None]:
    noisy = draw(st.booleans())
    tensors, at = [], draw(st.sampled_from([0, 64, 128, 8, 3]))
    for i in range(draw(st.integers(0, 5))):
        at += _rarely(draw, noisy, draw(st.sampled_from([0, 64])), 8, -8, -64, 1)
        length = _rarely(draw, noisy, draw(st.sampled_from([64, 128])), 8, 16, 0, -4)
        kind = draw(st.integers(0, 9)) if noisy else 2
        if kind == 0:
            t = Tensor(f"t{i}", "uint8", (1,), components={})
        else:
            t = dense_tensor(f"t{i}", "uint8", (max(length, 0),), i, at, length)
            if kind == 1:
                assert t.components  # builds the deferred component: no longer provably untouched
        tensors.append(t)
        at += max(length, 0)
    size = max(at, 0) + _rarely(draw, noisy, draw(st.sampled_from([0, 1, 64])), -1, -64)
    return tensors, _rarely(draw, noisy, size, -1, 0, 7), draw(st.sampled_from([None, 0, 1, 8, 64]))


@needs_native
@settings(max_examples=600, deadline=None)
@given(_hull_case())
def test_plain_hull_equals_the_python_column_checks(case):
    tensors, size, alignment = case
    native = NATIVE.plain_hull(tensors, size, alignment or 0)
    python = _plain_hull(tensors, size, alignment)
    assert native == python and repr(native) == repr(python)


@needs_native
def test_plain_hull_edges():
    def hull(*spans: tuple[Any, Any], size: Any = 1 << 40, alignment: Any = 0) -> Any:
        return NATIVE.plain_hull([dense_tensor("t", "uint8", (1,), 0, o, n) for o, n in spans], size, alignment)

    assert hull((0, 8), (8, 8), alignment=8) == (0, 16)
    assert hull((0, 8), (8, 8), alignment=16) is None
    assert hull((64, 8), size=72) == (64, 72) and hull((64, 8), size=71) is None
    assert hull((U64 - 8, 8), size=U64 - 1) is None          # ends past the file
    assert hull((U64 - 8, 16), size=U64 - 1) is None         # offset + length wraps u64
    assert hull((0, 0)) is None and hull((8, -1)) is None and hull((-8, 8)) is None
    assert hull((0, 8), (4, 8)) is None                       # overlap
    assert hull() is None
    # declined although Python would prove them: the general check then looks (the same answer, slower)
    assert hull((True, 8)) is None and hull((0, 8), size=U64) is None
    assert hull((64, 8), alignment=-64) is None
    assert hull((64, 8), alignment=U64 + 64) is None         # was truncated to 64 and accepted
    assert _plain_hull([dense_tensor("t", "uint8", (1,), 0, 64, 8)], 1 << 40, U64 + 64) is None
    assert hull((64, 8), alignment=True) is None


# --------------------------------------------------------------------- safetensors JSON text, read directly

@contextmanager
def _written(data: bytes) -> Iterator[str]:
    """The bytes as a file of their own."""
    fd, path = tempfile.mkstemp(suffix=".safetensors")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        yield path
    finally:
        os.unlink(path)


def _opened(path: str) -> TensorFile:
    tf = open_file(path)
    if tf.source is not None:
        tf.source.close()
    return tf


def _fields(tensor: Any) -> str:
    """What a tensor reads as: a deferred component the same as the one the checked path builds."""
    assert type(tensor) is Tensor
    return repr(tensor._fields())


def _equal_tensors(native: list, reference: list) -> None:
    assert type(native) is list and len(native) == len(reference)
    assert [_fields(t) for t in native] == [_fields(t) for t in reference]
    assert native == reference


def _same_file(native: TensorFile, python: TensorFile) -> None:
    assert (native.readable, native.format, native.variant) == (python.readable, python.format, python.variant)
    assert (native.extra, native.regions, native.problems) == (python.extra, python.regions, python.problems)
    assert type(native.attributes) is dict and repr(native.attributes) == repr(python.attributes)
    _equal_tensors(native.tensors, python.tensors)


def _c_subset(text: bytes) -> bool:
    """Whether a JSON text keeps to what the direct reader reads: no escape in any string, no sign on any number
    (``-0`` is 0 to a JSON parser). Whatever the Python fast path takes of such a text, C takes too."""
    if b"\\" in text:
        return False
    return b"-" not in b"".join(text.split(b'"')[0::2])  # without escapes, quotes delimit every string


def _file_bytes(text: bytes, buffer_len: int) -> bytes:
    return struct.pack("<Q", len(text)) + text + bytes(buffer_len)


def _check_header(text: bytes, buffer_len: int, use_json: bool = False) -> tuple | None:
    """safetensors_header's contract on one header text, its answer returned.

    When it accepts, the full pure-Python reader of the file finds no problem and the same metadata and tensors;
    when the Python fast path accepts a text in the C subset, so does C, with the same tensors exactly. Reading
    the file with and without C gives the same TensorFile either way.
    """
    direct = NATIVE.safetensors_header(text, 8 + len(text), buffer_len, DTYPE_INFO)
    assert direct is None or all(t._extra is None for t in direct[1])       # no shard named
    with _json_parser(use_json), _written(_file_bytes(text, buffer_len)) as path:
        with pure_python():
            reference = _opened(path)
            with Source(path) as source:
                fast = st_reader._read_plain(source, len(text))
        _same_file(_opened(path), reference)
    if fast is not None and _c_subset(text):
        assert direct is not None, "the Python fast path reads this header, the direct reader does not"
        assert repr(direct[0]) == repr(fast.attributes)
        _same(direct[1], fast.tensors)                       # slot for slot, before anything is built
    if direct is not None:
        assert type(direct) is tuple and len(direct) == 2
        metadata, tensors = direct
        assert reference.readable and not reference.problems and not any(t.problems for t in reference.tensors), (
            reference.problems, [t.problems for t in reference.tensors])
        assert type(metadata) is dict and repr(metadata) == repr(reference.attributes)
        _equal_tensors(tensors, reference.tensors)
    return direct


# JSON text is written here token by token by a _Writer, through ``pick`` (one of a sequence) and ``number`` (an
# int in a range): hypothesis's draws for the property tests, a seeded random.Random for the fuzz tests. A plain
# writer writes what the reference writer produces; an odd one adds whitespace anywhere and spells a token
# otherwise once in ``rare`` tokens (so that a header is often still plain, but no token is safe).

_NAMES = ("a", "t", "model.layers.0.self_attn.q_proj.weight", "", "x:y", 'a":b', "a :", "ä", "名前", "\U0001d518",
          "\x7f", "a b", "__metadata_", "__METADATA__", "a\\b", "dtype")
_TEXTS = ("", "v", "12:00", ":", '":', " :", "ä", "{}", "x\ty", "\\", "__metadata__")
_SPACE = (b"", b"", b"", b" ", b"\n", b"\t", b"\r", b"\r\n \t", b"   ")
_ODD_TEXT_DTYPES = ("f32", "F33", "", "F32 ", "bool", "F3", "U1", "BF1", "F8_E4M", "U16x")  # prefixes too


class _Writer:
    def __init__(self, pick: Callable[[Any], Any], number: Callable[[int, int], int], odd: bool) -> None:
        self.pick, self.number, self.odd = pick, number, odd
        self.rare = pick([3, 10, 30, 100]) if odd else 0

    def now(self) -> bool:
        """Whether to write something odd here."""
        return self.odd and not self.pick(range(self.rare))

    def ws(self) -> bytes:
        return self.pick(_SPACE) if self.odd else b""

    def string(self, text: str) -> bytes:
        plain = json.dumps(text, ensure_ascii=False).encode()
        if not self.now():
            return plain
        first = b'"\\u%04x' % ord(text[0]) + json.dumps(text[1:], ensure_ascii=False).encode()[1:] if text else plain
        return self.pick([json.dumps(text).encode(), first, plain[:-1] + b'\\/"', plain[:-1] + b'\xff"',
                          plain[:-1] + b'\xed\xa0\x80"', plain[:-1] + b'\xc0\xaf"', plain[:-1] + b'\xe2\x82"',
                          plain[:-1] + b'\x01"', plain[:-1] + b'\x1f"', plain[:-1] + b'\x7f"', plain[:-1] + b'\\"',
                          plain[:-1] + b'\\u0000"', plain[:-1] + b'\\ud800"', plain[1:]])

    def uint(self, value: int) -> bytes:
        plain = b"%d" % value
        if not self.now():
            return plain
        return self.pick([b"0" + plain, b"-" + plain, b"-0" if value == 0 else plain, plain + b".0", plain + b"e0",
                          plain + b"E+0", b"%d" % (value + U64), b"%d" % (U64 - 1), b"+" + plain, b"0x%x" % value,
                          b"1" + b"0" * 20, b"Infinity", b"NaN", b"null", b"true", b'"%d"' % value, b""])

    def object(self, members: list[tuple[bytes, bytes]]) -> bytes:
        if not members:
            return b"{" + self.ws() + b"}"
        return b"{" + b",".join(self.ws() + key + self.ws() + b":" + self.ws() + value + self.ws()
                                for key, value in members) + b"}"

    def array(self, items: list[bytes]) -> bytes:
        if not items:
            return b"[" + self.ws() + b"]"
        return b"[" + b",".join(self.ws() + item + self.ws() for item in items) + b"]"

    def entry(self, dtype: str, shape: list[int], begin: int, end: int) -> bytes:
        pick = self.pick
        members = [(self.string("dtype"), self.string(dtype)),
                   (self.string("shape"), self.array([self.uint(d) for d in shape])),
                   (self.string("data_offsets"), self.array([self.uint(begin), self.uint(end)]))]
        members = [members[i] for i in pick(list(itertools.permutations(range(3))))]
        if self.now():
            kind, at = pick(range(5)), pick(range(3))
            if kind == 0:
                members.insert(pick(range(4)), members[at])                          # a key twice, same value
            elif kind == 1:
                members.insert(pick(range(4)), (members[at][0], pick([b'"F32"', b"[1]", b"[0,4]", b"[]"])))
            elif kind == 2:
                del members[at]
            elif kind == 3:
                members.insert(pick(range(4)), (pick([b'"x"', b'""', b'"DTYPE"']), pick([b"1", b'"y"', b"null"])))
            else:
                members[at] = (members[at][0], pick([b"null", b"{}", b'"F32"', b"[[1]]", b"[0,1,2]", b"[0]", b"1"]))
        return self.object(members)

    def header(self) -> tuple[bytes, int]:
        """A header's JSON text and the length of the buffer its tensors cover (or nearly)."""
        pick, number, now = self.pick, self.number, self.now
        many = now()                                       # more dtypes than the direct reader remembers
        count = number(9, 17) if many else number(0, 4)
        first_dtype = number(0, len(ST_DTYPES) - 1)
        members, covered, names = [], 0, []
        for i in range(count):
            name = pick(names) if names and now() else f"{pick(_NAMES)}{i}"       # a name again, in buffer order
            names.append(name)
            raw_dtype = ST_DTYPES[(first_dtype + i) % len(ST_DTYPES)] if many else pick(ST_DTYPES)
            dtype = pick(_ODD_TEXT_DTYPES) if now() else raw_dtype
            shape = [number(0, 4) for _ in range(number(0, 3))]
            if now():
                shape = pick([[1] * 64, [1] * 65, [0, U64 - 1], [U64 - 1], [2 ** 32, 2 ** 32], [0, U64], [2 ** 63, 2]])
            nbytes = DTYPE_INFO[raw_dtype][1]
            for dim in shape:
                nbytes *= dim
            begin, end = covered, covered + (nbytes if nbytes <= 1 << 16 else 1)   # files stay small
            if now():
                begin, end = pick([(begin + 1, end + 1), (begin, end + 1), (begin, max(end - 1, 0)), (end, begin)])
            members.append((self.string(name), self.entry(dtype, shape, begin, end)))
            covered = max(covered, end)
        if members and now():                                                     # a tensor twice
            name, entry = pick(members)
            members.insert(number(0, len(members)), (name, pick([entry, members[0][1], b"{}"])))
        for _ in range(pick([0, 1, 1, 2]) if now() else pick([0, 1])):             # metadata, maybe twice
            pairs = [(self.string(f"{pick(_TEXTS)}{j}"), self.string(pick(_TEXTS))) for j in range(number(0, 3))]
            if pairs and now():
                pairs.append((pairs[0][0], pick([pairs[0][1], b'"w"'])))          # a key twice
            metadata = self.object(pairs)
            if now():
                metadata = pick([b"null", b"1", b"[]", b'"x"', b'{"k":1}', b'{"k":null}', b'{"k":{"a":"b"}}',
                                 b'{"k":["v"]}', b'{"k":"v",}'])
            members.insert(number(0, len(members)), (self.string("__metadata__"), metadata))
        text = self.object(members)
        if now():
            text = pick([b" " + text, text + b"\n", text + b" " * number(1, 70), text + b"x", text + b"}",
                         text + b",", text + b"\0", text + b" \t", text[:number(0, len(text))], b"", b"{}",
                         b"\t" + text, text[:-1] + b"\x0b}", b"\xef\xbb\xbf" + text, text + b"{}"])
        if now():
            covered = max(covered + pick([1, -1]), 0)
        return text, covered


def _drawn(draw: Any) -> tuple[Callable[[Any], Any], Callable[[int, int], int]]:
    return (lambda options: draw(st.sampled_from(options))), (lambda low, high: draw(st.integers(low, high)))


@st.composite
def _st_text(draw: Any) -> tuple[bytes, int]:
    return _Writer(*_drawn(draw), odd=draw(st.booleans())).header()


@needs_native
@settings(max_examples=400, deadline=None)
@given(_st_text(), st.booleans())
def test_safetensors_header_reads_what_the_full_python_reader_reads(case, use_json):
    _check_header(*case, use_json=use_json)


_A = b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
_AB = b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[],"data_offsets":[8,9]}}'
_HUGE = b'{"a":{"dtype":"U8","shape":[%d],"data_offsets":[0,%d]}}' % (U64 - 1, U64 - 1)


def _one(shape: bytes = b"[2]", offsets: bytes = b"[0,8]", dtype: bytes = b'"F32"', name: bytes = b'"a"',
         more: bytes = b"") -> bytes:
    return b'{%s:{"dtype":%s,"shape":%s,"data_offsets":%s%s}}' % (name, dtype, shape, offsets, more)


def _every_dtype(count: int) -> tuple[bytes, int]:
    """One tensor of each of ``count`` dtypes: past 8, the direct reader looks the others up each time."""
    parts, covered = [], 0
    for i, raw in enumerate(ST_DTYPES[:count] * 2):
        size = DTYPE_INFO[raw][1]
        parts.append(b'"t%d":{"dtype":"%s","shape":[1],"data_offsets":[%d,%d]}' % (i, raw.encode(), covered,
                                                                                    covered + size))
        covered += size
    return b"{" + b",".join(parts) + b"}", covered


@needs_native
@pytest.mark.parametrize("text, buffer_len, accepted", [
    (b"", 0, False),
    (b"{}", 0, True),
    (b"{}", 1, False),                                             # a byte nobody owns
    (b" {}", 0, False),                                            # the full reader reports the leading space
    (b"\t{}", 0, False),
    (b"{}\n", 0, False),                                           # ... and warns of padding other than spaces
    (b"{} \r", 0, False),
    (b"{}" + b" " * 100, 0, True),                                 # space padding, however long
    (b"{ \t\n\r}", 0, True),
    (b"{", 0, False), (b"}", 0, False), (b"[]", 0, False), (b"{}}", 0, False), (b"{},", 0, False),
    (b"{}x", 0, False), (b"{}\0", 0, False), (b"{}{}", 0, False), (b"\xef\xbb\xbf{}", 0, False),
    (b'{"__metadata__":{}}', 0, True),
    (b'{"__metadata__":{"":":"}}', 0, True),                       # the colon count of the Python path declines
    (b'{"__metadata__":{"t":"a :"}}', 0, True),
    (b'{"__metadata__":{"t":"a\\":"}}', 0, False),                 # an escape: the JSON parser reads it
    (b'{"__metadata__":{"t":"\\u0041"}}', 0, False),
    (b'{"__metadata__":null}', 0, False),
    (b'{"__metadata__":{"k":1}}', 0, False),
    (b'{"__metadata__":{"k":null}}', 0, False),
    (b'{"__metadata__":[]}', 0, False),
    (b'{"__metadata__":"x"}', 0, False),
    (b'{"__metadata__":{"k":"v","k":"v"}}', 0, False),
    (b'{"__metadata__":{"k":"v","k":"w"}}', 0, False),
    (b'{"__metadata__":{},"__metadata__":{}}', 0, False),
    (b'{"__metadata__":{"k":"v",}}', 0, False),
    (b'{"__metadata__":{"\xff":"v"}}', 0, False),
    (b'{"__metadata__":{"k":"\xed\xa0\x80"}}', 0, False),
    (b'{"__metadata__":{"k":"\x01"}}', 0, False),
    (_A, 8, True),
    (_A, 7, False), (_A, 9, False),
    (_AB, 9, True),
    (b'{"a":{"data_offsets":[0,8],"shape":[2],"dtype":"F32"}}', 8, True),                 # keys in any order
    (b'{"a" : { "shape" :\t[ 2 ] ,\n"dtype":"F32","data_offsets":[0 ,8]}\r}', 8, True),      # spaces anywhere
    (b'{"b":{"dtype":"U8","shape":[],"data_offsets":[8,9]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
     9, False),                                                    # not in buffer order
    ('{"ä名\U0001d518\x7f":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'.encode(), 8, True),
    (_one(name=b'"\\u0061"'), 8, False),                           # an escaped name
    (_one(name=b'"\\""'), 8, False),
    (_one(name=b'"\xff"'), 8, False),                              # not UTF-8
    (_one(name=b'"\xed\xa0\x80"'), 8, False),                      # a surrogate
    (_one(name=b'"\xc0\xaf"'), 8, False),                          # overlong
    (_one(name=b'"\xe2\x82"'), 8, False),                          # cut short
    (_one(name=b'"a\x1f"'), 8, False),                             # a control byte
    (_one(name=b'""'), 8, True),
    (_one(name=b'"__metadata__"'), 8, False),
    (_one(dtype=b'"f32"'), 8, False), (_one(dtype=b'"F32 "'), 8, False),
    (_one(dtype=b'"\\u0046\\u0033\\u0032"'), 8, False),
    (_one(shape=b"[02]"), 8, False), (_one(shape=b"[-2]"), 8, False), (_one(shape=b"[2.0]"), 8, False),
    (_one(shape=b"[2e0]"), 8, False), (_one(shape=b"[+2]"), 8, False), (_one(shape=b"[2,]"), 8, False),
    (_one(shape=b"[,2]"), 8, False), (_one(shape=b"[2"), 8, False), (_one(shape=b"2"), 8, False),
    (_one(shape=b"[true]"), 8, False), (_one(shape=b"[null]"), 8, False), (_one(shape=b'["2"]'), 8, False),
    (_one(shape=b"[-0]", offsets=b"[0,0]"), 0, False),             # 0 to the JSON parser
    (_one(shape=b"[0,%d]" % (U64 - 1), offsets=b"[0,0]"), 0, True),
    (_one(shape=b"[0,%d]" % U64, offsets=b"[0,0]"), 0, False),     # past u64 although empty
    (_one(shape=b"[%d,0]" % (10 * U64), offsets=b"[0,0]"), 0, False),
    (_one(shape=b"[2,%d]" % (2 ** 63), offsets=b"[0,0]"), 0, False),   # the size wraps to 0 in u64
    (_one(shape=b"[%s]" % b",".join([b"1"] * 64), offsets=b"[0,4]"), 4, True),
    (_one(shape=b"[%s]" % b",".join([b"1"] * 65), offsets=b"[0,4]"), 4, False),
    (_one(shape=b"[]", offsets=b"[0,4]"), 4, True),
    (_one(shape=b"[ ]", offsets=b"[0,4]"), 4, True),
    (_one(offsets=b"[0,08]"), 8, False), (_one(offsets=b"[00,8]"), 8, False), (_one(offsets=b"[0,8.0]"), 8, False),
    (_one(offsets=b"[0,8,8]"), 8, False), (_one(offsets=b"[0]"), 8, False), (_one(offsets=b"[1,9]"), 9, False),
    (_one(offsets=b"[8,0]"), 0, False), (_one(offsets=b"[-0,8]"), 8, False),
    (_one(shape=b"[%d]" % (U64 - 1), offsets=b"[0,%d]" % (U64 - 1), dtype=b'"U8"'), U64 - 1, True),
    (_one(shape=b"[%d]" % U64, offsets=b"[0,%d]" % U64, dtype=b'"U8"'), U64, False),
    (_one(more=b',"x":1'), 8, False), (_one(more=b',"dtype":"F32"'), 8, False), (_one(more=b","), 8, False),
    (b'{"a":{"dtype":"F32","shape":[2]}}', 0, False),
    (b'{"a":{}}', 0, False), (b'{"a":null}', 0, False), (b'{"a":[]}', 0, False),
    (_A[:-1] + b',"a":' + _A[5:], 16, False),                     # a tensor twice
    (_A[:-1] + b',"a":' + _A[5:].replace(b"[0,8]", b"[8,16]"), 16, False),   # ... in buffer order
    (_AB[:-1] + b',"c":{"dtype":"F3","shape":[],"data_offsets":[9,13]}}', 13, False),  # F32 is remembered
    (_AB[:-1] + b',"c":{"dtype":"U","shape":[],"data_offsets":[9,10]}}', 10, False),    # U8 is remembered
    (_A[:-1] + b',"__metadata__":{}}', 8, True),                   # metadata anywhere
    (_A[:-1] + b',}', 8, False), (_A[:-1], 8, False), (_A + b"}", 8, False), (_A[:-2] + b" }}", 8, True),
    (_A[:20], 8, False),
    (*_every_dtype(8), True),
    (*_every_dtype(9), True),
    (*_every_dtype(len(ST_DTYPES)), True),
])
def test_safetensors_header_edges(text, buffer_len, accepted):
    assert (NATIVE.safetensors_header(text, 8 + len(text), buffer_len, DTYPE_INFO) is not None) == accepted
    if buffer_len < 1 << 20:  # a file, and the Python readers
        _check_header(text, buffer_len)


@needs_native
def test_safetensors_header_arguments():
    header = NATIVE.safetensors_header
    assert header(_A, 100, 8, DTYPE_INFO)[1][0]._data[:2] == (100, 8)
    assert header(_A, U64 - 1, 8, DTYPE_INFO) is not None
    assert header(_A, U64 - 8, 8, DTYPE_INFO) is not None
    assert header(_AB, U64 - 8, 9, DTYPE_INFO) is None                # the second tensor's offset is past u64
    assert header(_HUGE, 8, U64 - 1, DTYPE_INFO) is not None
    for bad in (-1, U64, True, 8.0, None):
        assert header(_A, bad, 8, DTYPE_INFO) is None and header(_A, 8, bad, DTYPE_INFO) is None
    assert header(_A, 8, 8, {}) is None and header(_A, 8, 8, {"F32": ("float32", -4)}) is None
    assert header(_A, 8, 8, {"F32": ["float32", 4]}) is None
    assert header(_A, 8, 8, {"F32": ("f", 4)})[1][0].dtype == "f"
    for odd in (bytearray(_A), memoryview(_A), _A.decode()):
        with pytest.raises(TypeError):
            header(odd, 8, 8, DTYPE_INFO)
    with pytest.raises(TypeError):
        header(_A, 8, 8, list(DTYPE_INFO.items()))
    assert sys.exc_info() == (None, None, None)


@needs_native
def test_the_single_file_reader_uses_the_direct_reader(monkeypatch):
    calls = []
    real = NATIVE.safetensors_header

    def spy(*args: Any) -> Any:
        calls.append(args[0])
        return real(*args)

    functions = {name: getattr(NATIVE, name) for name in dir(NATIVE) if not name.startswith("_")}
    monkeypatch.setattr(accel, "native", types.SimpleNamespace(**{**functions, "safetensors_header": spy}))
    with _written(_file_bytes(_A, 8)) as path:
        tf = _opened(path)
    assert calls == [_A] and [t.name for t in tf.tensors] == ["a"] and not tf.problems


# ------------------------------------------------------------------------------------- multi-file headers

_META = st.dictionaries(st.text(st.sampled_from('ab:" '), max_size=3), st.text(st.sampled_from('x:" '), max_size=3),
                        max_size=2)


@st.composite
def _shard(draw: Any) -> tuple[bytes, int]:
    """The head (first bytes) and size of one shard: mostly plain, sometimes odd at any level."""
    noisy = not draw(st.integers(0, 3))
    if draw(st.booleans()):
        text, covered = _Writer(*_drawn(draw), odd=noisy or draw(st.booleans())).header()
    else:
        pairs, covered = draw(_st_pairs(json_only=True, noisy=noisy and draw(st.booleans())))
        parts = [(json.dumps(name), json.dumps(value, separators=(",", _rarely(draw, noisy, ":", ": ", " :"))))
                 for name, value in pairs]
        if draw(st.booleans()):
            meta: Any = draw(_META)
            meta = _rarely(draw, noisy, meta, {"n": 1}, None, [], {"k": None})
            parts.insert(draw(st.integers(0, len(parts))), ('"__metadata__"', json.dumps(meta, separators=(",", ":"))))
        if noisy and parts and not draw(st.integers(0, 4)):
            parts.append(draw(st.sampled_from(parts)))                     # a duplicate key
        text = ("{" + ",".join(f"{k}:{v}" for k, v in parts) + "}").encode()
        text = _rarely(draw, noisy, text, text[:-1], b" " + text, text + b"\n", b"{", b"}", b"[]", b"{}", b"")
    text += b" " * draw(st.sampled_from([0, 0, 3]))
    n = _rarely(draw, noisy, len(text), 0, len(text) + 1, len(text) - 1, U64 - 1, 2 ** 63)
    head = struct.pack("<Q", n) + text + draw(st.sampled_from([b"", b"", b"\0" * 5, b"}"]))
    head = _rarely(draw, noisy, head, head[:7], head[:8], b"")
    size = 8 + len(text) + covered
    return head, _rarely(draw, noisy, size, size + 1, size - 1, 8 + len(text), 7, 0, -1)


@st.composite
def _batch(draw: Any) -> tuple[list, list, list, list, int]:
    shards = draw(st.lists(_shard(), max_size=4))
    names = [draw(st.sampled_from([f"model-{i:05d}.safetensors", None])) for i in range(len(shards))]
    return ([h for h, _ in shards], [s for _, s in shards], names, [object() for _ in shards],
            draw(st.integers(0, 10 ** 6)))


def _in_order(heads: list, sizes: list, shards: list, sources: list, first: int) -> list | None:
    """What plain_headers stands in for: parse_header for every head, then _read_in_order, in Python."""
    with pure_python():
        parsed = [fast_headers.parse_header(head, size) for head, size in zip(heads, sizes)]
        if None in parsed:
            return None
        return fast_headers._read_in_order(parsed, sizes, shards, sources, first)


def _same_batch(native: list | None, python: list | None) -> None:
    """The same batch, every tensor slot for slot."""
    if native is None or python is None:
        assert native is python is None, (native, python)
        return
    assert len(native) == len(python)
    for (n, metadata, tensors, data_bytes), (pn, pmetadata, ptensors, pdata_bytes) in zip(native, python):
        assert (type(n), n, type(data_bytes), data_bytes) == (int, pn, int, pdata_bytes)
        assert type(metadata) is dict and metadata == pmetadata
        _same(tensors, ptensors)


def _shard_file(head: bytes, size: int) -> bytes:
    """A shard of ``size`` bytes that begins with ``head`` (zeros after it)."""
    return (head + bytes(max(size - len(head), 0)))[:size]


def _single_file_batch(heads: list, sizes: list, shards: list, sources: list, first: int) -> list:
    """What a multi-file set makes of each shard through the single-file reader (``_read_slow`` of shards.py),
    in pure Python, when it has no problem at all: per shard ``(header length, metadata, tensors, data bytes)``.
    """
    batch, index = [], first
    with pure_python():
        for head, size, shard, source in zip(heads, sizes, shards, sources):
            with _written(_shard_file(head, size)) as path, Source(path) as file_source:
                tf = st_reader.read(file_source)
            assert not tf.problems and not any(t.problems for t in tf.tensors), (
                head, tf.problems, [t.problems for t in tf.tensors])
            for i, tensor in enumerate(tf.tensors):
                assert tensor.index == i
                tensor.extra.update(shard=shard, source=source, index_in_shard=i)
                tensor.index = index + i
            data_bytes = sum(t.components["data"].length for t in tf.tensors)
            batch.append((tf.extra["header_length"], tf.attributes, tf.tensors, data_bytes))
            index += len(tf.tensors)
    return batch


def _equal_batch(native: list, reference: list) -> None:
    """The same batch, tensors compared as they read (a deferred component is the one the checked path built)."""
    assert type(native) is list and len(native) == len(reference)
    for (n, metadata, tensors, data_bytes), (rn, rmetadata, rtensors, rdata_bytes) in zip(native, reference):
        assert (type(n), n, type(data_bytes), data_bytes) == (int, rn, int, rdata_bytes)
        assert type(metadata) is dict and repr(metadata) == repr(rmetadata)
        _equal_tensors(tensors, rtensors)


def _check_batch(native: list | None, batch: tuple) -> None:
    """plain_headers' contract: whatever the Python in-order path reads it reads, slot for slot (except buffers
    past u64, which it declines); whatever it reads has no problem and is what the single-file reader finds."""
    python = _in_order(*batch)
    if python is not None and any(_past_u64(tensors, size) for (_, _, tensors, _), size in zip(python, batch[1])):
        assert native is None
    elif python is not None:
        _same_batch(native, python)
    if native is not None:
        _equal_batch(native, _single_file_batch(*batch))


@needs_native
@settings(max_examples=400, deadline=None)
@given(_batch(), st.booleans())
def test_plain_headers_reads_what_the_python_readers_read(batch, use_json):
    with _json_parser(use_json):
        _check_batch(NATIVE.plain_headers(*batch, parse_json, DTYPE_INFO), batch)


@needs_native
@settings(max_examples=150, deadline=None)
@given(_batch())
def test_read_batch_is_the_same_with_and_without_c(batch):
    native = fast_headers.read_batch(*batch)
    with pure_python():
        python = fast_headers.read_batch(*batch)
    if python is not None:
        _same_batch(native, python)
    elif native is not None:  # the direct reader took a header the Python paths leave to the single-file reader
        _equal_batch(native, _single_file_batch(*batch))


def _head(text: bytes, n: int | None = None, tail: bytes = b"") -> bytes:
    return struct.pack("<Q", len(text) if n is None else n) + text + tail


_ESCAPED = b'{"\\u0061":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'  # the direct reader leaves it to loads


@needs_native
@pytest.mark.parametrize("head, size, accepted", [
    (_head(b"{}"), 10, True),
    (_head(b"{}"), 11, False),                                   # a byte nobody owns
    (_head(b"{}   "), 13, True),                                 # space padding
    (_head(b"{}\n"), 11, False),                                 # other padding: the single-file reader warns
    (_head(b" {}"), 11, False),
    (_head(b'{"__metadata__":{"k":"v"}}'), 34, True),
    (_head(b'{"__metadata__":{"k":1}}'), 32, False),
    (_head(b'{"__metadata__":[]}'), 27, False),
    (_head(b'{"__metadata__":{"t":"12:00"}}'), 38, True),        # a colon in a value: counted as '":'
    (_head(b'{"__metadata__":{"t":"a :"}}'), 36, True),          # read directly (the colon count cannot tell)
    (_head(b'{"__metadata__":{"":":"}}'), 33, True),
    (_head(b'{"__metadata__":{"t":"a\\":"}}'), 36, False),       # an escape, and '":' in a string: neither tells
    (_head(b'{"__metadata__":{"t":"\\u0041"}}'), 39, True),      # an escape: loads reads it
    (_head(_A), 8 + len(_A) + 8, True),
    (_head(_ESCAPED), 8 + len(_ESCAPED) + 8, True),
    (_head(_A[:-1] + b',"a":' + _A[5:]), 8 + 2 * len(_A) - 5 + 8, False),   # a duplicate tensor
    (_head(_A, tail=b"\0" * 64), 8 + len(_A) + 8, True),       # the head holds more than the header
    (_head(_A, n=len(_A) + 1), 8 + len(_A) + 8, False),          # the header runs past the head
    (_head(_A), 8 + len(_A) + 7, False),                         # ... or the tensor past the file
    (_head(_HUGE), 8 + len(_HUGE) - 1, False),                   # size - 8 - n would wrap to this tensor's end
    (_head(_A, n=0), 100, False),
    (_head(b"{", n=1), 9, False),
    (_head(b"{}")[:7], 10, False),                               # shorter than the length field
    (b"\x02" + b"\0" * 6, 10, False),
    (_head(b""), 8, False),
    (_head(b"{}"), 7, False),
    (_head(b"{}"), -1, False),
    (_head(b"{}"), 10.0, False),
    (_head(b"{} "), 10, False),                                  # the padding runs past the file
    (_head(b"{} ", n=2 ** 63), 2 ** 64, False),
    (bytearray(_head(b"{}")), 10, False),                        # not bytes: declined, Python decides
])
def test_plain_headers_edges(head, size, accepted):
    source = object()
    native = NATIVE.plain_headers([head], [size], ["s"], [source], 5, parse_json, DTYPE_INFO)
    assert (native is not None) == accepted
    if type(head) is bytes and type(size) is int:
        _check_batch(native, ([head], [size], ["s"], [source], 5))


@needs_native
def test_plain_headers_numbers_across_shards_and_names_unnamed_ones():
    sources = [object(), object(), object()]
    heads = [_head(_A), _head(_A), _head(_ESCAPED)]
    batch = NATIVE.plain_headers(heads, [len(head) + 8 for head in heads], [None, "b", "c"], sources, 3, parse_json,
                                 DTYPE_INFO)
    assert [[(t.index, t._extra) for t in tensors] for _, _, tensors, _ in batch] == [
        [(3, {"shard": None, "source": sources[0], "index_in_shard": 0})],
        [(4, {"shard": "b", "source": sources[1], "index_in_shard": 0})],
        [(5, {"shard": "c", "source": sources[2], "index_in_shard": 0})]]
    assert NATIVE.plain_headers([], [], [], [], 0, parse_json, DTYPE_INFO) == []
    with pytest.raises(ValueError):
        NATIVE.plain_headers([_head(b"{}")], [], [None], [None], 0, parse_json, DTYPE_INFO)


@needs_native
def test_plain_headers_and_an_odd_parser():
    def raising(exc: BaseException) -> Callable[[bytes], Any]:
        def loads(raw: bytes) -> Any:
            raise exc
        return loads

    args = ([_head(b'{"\\u0061":{}}')], [21], ["s"], [None], 0)   # an escape: the direct reader calls on loads
    for exc in (ValueError("not JSON"), TypeError("x"), RecursionError()):
        assert NATIVE.plain_headers(*args, raising(exc), DTYPE_INFO) is None
        assert sys.exc_info() == (None, None, None)
    with pytest.raises(LookupError):
        NATIVE.plain_headers(*args, raising(LookupError("x")), DTYPE_INFO)
    assert NATIVE.plain_headers(*args, lambda raw: [], DTYPE_INFO) is None
    assert NATIVE.plain_headers(*args, lambda raw: {"a": 1}, DTYPE_INFO) is None
    assert NATIVE.plain_headers(*args, lambda raw: {}, DTYPE_INFO) is None           # 0 keys, but one written
    # a plain header never reaches loads
    assert NATIVE.plain_headers([_head(b"{}")], [10], ["s"], [None], 0, raising(LookupError()), DTYPE_INFO)


@needs_native
def test_plain_headers_survives_a_parser_that_empties_the_lists():
    """The parser is Python code: it used to be able to free the head being read and shorten the lists."""
    heads = [_head(b'{"\\u0074%d":' % i + _A[5:] + b" " * 50_000) for i in range(3)]   # escaped: loads reads them
    sizes = [len(head) + 8 for head in heads]
    lists: list[list] = [heads, sizes, ["s"] * 3, [None] * 3]
    calls = []

    def loads(raw: bytes) -> Any:
        calls.append(len(raw))
        for column in lists:
            column.clear()
        return parse_json(raw)

    batch = NATIVE.plain_headers(*lists, 0, loads, DTYPE_INFO)
    assert [tensors[0].name for _, _, tensors, _ in batch] == ["t0", "t1", "t2"] and len(calls) == 3


# ------------------------------------------------------------------------------- fuzzing the direct reader

_FUZZ_BYTES = b'{}[],:" \t\n\r\\0123456789-+.eEu\xff\x80\xc3\xa4\x00\x1f\x7f\x0ba_'


def _mutate(rng: random.Random, text: bytes, others: list[bytes]) -> bytes:
    """One to three random byte edits: replace, delete, insert, truncate, splice from another text, repeat, or
    a letter changed (which often keeps the header plain)."""
    data = bytearray(text)
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        kind, at = rng.randrange(8), rng.randint(0, len(data))
        if kind >= 6:
            letters = [i for i, byte in enumerate(data) if 0x61 <= byte <= 0x7a]
            if letters:
                data[rng.choice(letters)] = rng.choice(b"abcxyz09_.:\\" + "ä".encode())
        elif kind == 0 and data:
            data[min(at, len(data) - 1)] = rng.choice(_FUZZ_BYTES)
        elif kind == 1:
            del data[at:at + rng.randint(1, 8)]
        elif kind == 2:
            data[at:at] = bytes(rng.choice(_FUZZ_BYTES) for _ in range(rng.randint(1, 4)))
        elif kind == 3:
            del data[at:]
        elif kind == 4:
            other = rng.choice(others)
            start = rng.randint(0, len(other))
            data[at:at] = other[start:start + rng.randint(1, 40)]
        else:
            start = rng.randint(0, len(data))
            data[at:at] = data[start:rng.randint(start, len(data))]
    return bytes(data)


def _seeds(rng: random.Random, count: int) -> list[tuple[bytes, int]]:
    return [_Writer(rng.choice, rng.randint, odd=rng.random() < 0.7).header() for _ in range(count)]


@contextmanager
def _case(what: Any) -> Iterator[None]:
    try:
        yield
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n  for {what!r}") from exc


@needs_native
@pytest.mark.parametrize("seed", [1, 2])
def test_safetensors_header_survives_mutated_headers(seed):
    """Never a crash, and the contract of _check_header in every case."""
    rng = random.Random(seed)
    seeds = _seeds(rng, 150)
    others = [text for text, _ in seeds]
    accepted = 0
    for _ in range(4000):
        text, buffer_len = rng.choice(seeds)
        mutated = _mutate(rng, text, others)
        buffer_len = max(buffer_len + rng.choice((0, 0, 0, 0, 1, -1)), 0)
        with _case((mutated, buffer_len)):
            accepted += _check_header(mutated, buffer_len) is not None
    assert accepted > 40  # some mutations keep the header plain


@needs_native
@pytest.mark.parametrize("seed", [3, 4])
def test_plain_headers_survives_mutated_headers(seed):
    rng = random.Random(seed)
    seeds = _seeds(rng, 150)
    others = [text for text, _ in seeds]
    accepted = 0
    for _ in range(4000):
        heads, sizes = [], []
        for _ in range(rng.randint(1, 3)):
            text, buffer_len = rng.choice(seeds)
            if rng.random() < 0.7:
                text = _mutate(rng, text, others)
            n = len(text) if rng.random() < 0.9 else rng.choice([len(text) + 1, len(text) - 1, 0, rng.getrandbits(64)])
            head = struct.pack("<Q", max(n, 0)) + text + rng.choice([b"", b"", b" " * 3, b"\0" * 9])
            if rng.random() < 0.05:
                head = _mutate(rng, head, others)
            heads.append(head)
            sizes.append(8 + len(text) + max(buffer_len + rng.choice((0, 0, 0, 0, 0, 1, -1)), 0))
        batch = (heads, sizes, [rng.choice(["s", None]) for _ in heads], [object() for _ in heads],
                 rng.randint(0, 1000))
        native = NATIVE.plain_headers(*batch, parse_json, DTYPE_INFO)
        with _case(batch[:2]):
            _check_batch(native, batch)
        accepted += native is not None
    assert accepted > 50


# ------------------------------------------------------------------------------ the collector mid-build

@needs_native
def test_a_finalizer_that_rewrites_the_manifest_mid_build_changes_nothing():
    """Building a tensor allocates, which may run the collector and so any finalizer; one that replaces the
    manifest's values with equal fresh ones must not free what the C code checked (this crashed)."""
    infos = dict(zt_fast._V10_INFO)
    dtypes = dict(DTYPE_INFO)
    entries = {f"t{i}": {"dtype": "float32", "shape": [2, i + 1], "format": "dense",
                         "components": {"data": {"offset": 10 ** 12 + 64 * i, "length": 8 * (i + 1)}}}
               for i in range(100)}
    header = {f"t{i}": _entry("F32", [2, 1], 8 * i, 8 * i + 8) for i in range(100)}
    expected = NATIVE.zt_dense(entries, 0, infos, False), NATIVE.safetensors_dense(header, 8, 800, 0, dtypes, "s", 1)
    churning = True

    class Churn:
        def __init__(self) -> None:
            self.cycle = self

        def __del__(self) -> None:
            for entry in entries.values():
                entry["shape"] = list(entry["shape"])
                data = entry["components"]["data"]
                data["offset"], data["length"] = int(str(data["offset"])), int(str(data["length"]))
            for table in (infos, dtypes):
                for key, (canonical, size) in table.items():
                    table[key] = (_fresh(canonical), size)
            for value in header.values():
                value["shape"], value["data_offsets"] = list(value["shape"]), list(value["data_offsets"])
            if churning:
                Churn()

    threshold = gc.get_threshold()
    Churn()
    gc.set_threshold(1)
    try:
        for _ in range(4):
            got = NATIVE.zt_dense(entries, 0, infos, False), NATIVE.safetensors_dense(header, 8, 800, 0, dtypes, "s", 1)
            assert got == expected
    finally:
        gc.set_threshold(*threshold)
        churning = False
        gc.collect()


# ------------------------------------------------------------------------------------------------ leaks

def _fresh(text: str) -> str:
    return (text + "!")[:-1]  # an equal string that no one else holds


def _no_leak(calls: list[Callable[[], Any]], watched: list[Any]) -> None:
    assert_no_leak(calls, watched, rounds=3000, warmup=50)


def _quiet(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    def call() -> Any:
        try:
            return fn(*args)
        except LookupError:
            return None
    return call


@needs_native
def test_safetensors_dense_and_plain_headers_do_not_leak():
    dtypes = {key: (_fresh(canonical), size) for key, (canonical, size) in DTYPE_INFO.items()}
    names = [_fresh(f"tensor.{i}") for i in range(3)]
    shapes = [[2], [3, 1], [0, U64 - 1]]
    good = dict(zip(names, [_entry("F32", shapes[0], 0, 8), _entry("U8", shapes[1], 8, 11),
                            _entry("I64", shapes[2], 11, 11)]))
    bad_last = {**good, "x": _entry("F32", [2], 12, 20)}
    bad_first = {"y": _entry("F32", [-1], 0, 8), **good}
    shard, source = _fresh("shard.safetensors"), object()
    heads = [_head(json.dumps(h, separators=(",", ":")).encode()) for h in (good, bad_last, bad_first)]
    heads.append(_head(b'{"__metadata__":{"k":"v"},' + heads[0][9:]))
    sizes = [len(head) + 11 for head in heads]

    def lookup_error(raw: bytes) -> Any:
        raise LookupError

    calls = [
        _quiet(NATIVE.safetensors_dense, good, 100, 11, 0, dtypes, shard, source),
        _quiet(NATIVE.safetensors_dense, good, 100, 11, 0, dtypes, None, None),
        _quiet(NATIVE.safetensors_dense, good, 100, 12, 0, dtypes, shard, source),     # all built, then dropped
        _quiet(NATIVE.safetensors_dense, bad_last, 100, 20, 0, dtypes, shard, source),
        _quiet(NATIVE.safetensors_dense, bad_first, 100, 19, 0, dtypes, shard, source),
        _quiet(NATIVE.plain_headers, heads, sizes, [shard] * 4, [source] * 4, 0, parse_json, dtypes),
        _quiet(NATIVE.plain_headers, [heads[0], heads[3]], [sizes[0], sizes[3]], [shard] * 2, [source] * 2, 0,
               parse_json, dtypes),
        _quiet(NATIVE.plain_headers, [heads[0], heads[0]], [sizes[0], 9], [shard] * 2, [source] * 2, 0, parse_json,
               dtypes),
        _quiet(NATIVE.plain_headers, [heads[0]], [sizes[0]], [shard], [source], 0, lookup_error, dtypes),
        _quiet(NATIVE.plain_headers, [heads[0]], [sizes[0]], [shard], [source], 0, json.loads, dtypes),
    ]
    assert calls[0]() is not None and calls[5]() is None and calls[6]() is not None
    _no_leak(calls, [*dtypes.values(), *(c for c, _ in dtypes.values()), *names, *shapes, good, shard, source,
                     *heads])


@needs_native
def test_zt_dense_and_plain_hull_do_not_leak():
    infos = {key: (_fresh(canonical), size) for key, (canonical, size) in zt_fast._V10_INFO.items()}
    names = [_fresh(f"t{i}") for i in range(4)]
    offsets = [10 ** 12 + 64 * i for i in range(4)]
    shape = [2, 2]
    entries = {name: {"dtype": "float32", "shape": shape, "format": "dense",
                      "components": {"data": {"offset": offset, "length": 16}}}
               for name, offset in zip(names, offsets)}
    entries[names[1]]["components"]["data"]["length"] = 15                     # unusual
    entries[names[2]]["components"]["data"]["encoding"] = "raw"               # unusual: an optional key
    tensors = [dense_tensor(name, "uint8", (8,), i, offset, 8)
               for i, (name, offset) in enumerate(zip(names, offsets))]
    touched = tensors[:2] + [dense_tensor("x", "uint8", (8,), 2, 2 * 10 ** 12, 8)]
    assert touched[-1].components
    calls = [
        _quiet(NATIVE.zt_dense, entries, 0, infos, False),
        _quiet(NATIVE.zt_dense, {"x": [], **entries}, 0, infos, False),
        _quiet(NATIVE.zt_dense, {i: {} for i in range(300)}, 0, infos, False),   # positions past the small ints
        _quiet(NATIVE.plain_hull, tensors, 2 * 10 ** 12, 0),
        _quiet(NATIVE.plain_hull, tensors, 10, 0),
        _quiet(NATIVE.plain_hull, touched, 3 * 10 ** 12, 0),
    ]
    assert calls[0]()[1] == [1, 2] and calls[2]() is not None and calls[4]() is None
    _no_leak(calls, [*infos.values(), *(c for c, _ in infos.values()), *names, *offsets, shape, entries, *tensors])


@needs_native
def test_safetensors_header_does_not_leak():
    dtypes = {key: (_fresh(canonical), size) for key, (canonical, size) in DTYPE_INFO.items()}
    many, many_len = _every_dtype(len(ST_DTYPES))                   # past the 8 dtypes the reader remembers
    good = b'{"__metadata__":{"format":"pt","k":"v"},' + _AB[1:]
    texts = [
        (good, 9), (many, many_len), (b"{}", 0), (_A[:-1] + b',"__metadata__":{}}', 8),
        (many, many_len + 1),                                        # every tensor built, then dropped
        (many + b"x", many_len),                                      # ... and at trailing bytes
        (many[:-1] + b',"t0":' + many[6:], many_len),                 # ... and at a repeated name
        (_AB[:-2] + b',"x":1}}', 9),                                  # the second entry is odd
        (b'{"__metadata__":{"k":"v","k":"v"},' + _AB[1:], 9),         # a repeated metadata key
        (b'{"__metadata__":{"k":"v"},"__metadata__":{}}', 0),
        (b'{"__metadata__":{"k":"\xff"}}', 0), (_one(name=b'"\xff"'), 8), (_one(name=b'"\\u0061"'), 8),
        (_AB[:-1] + b',"\xed\xa0\x80":' + _A[5:], 17),
        (_one(shape=b"[%s]" % b",".join([b"1"] * 65), offsets=b"[0,4]"), 4),
        (_one(shape=b"[0,%d]" % U64, offsets=b"[0,0]"), 0), (b"", 0), (b" {}", 0),
    ]
    texts = [(bytes(text), buffer_len) for text, buffer_len in texts]  # objects no one else holds
    heads = [_head(text) for text, _ in texts[:4]] + [_head(_ESCAPED), _head(texts[4][0])]
    sizes = [len(head) + buffer_len for head, (_, buffer_len) in zip(heads, texts[:4] + [(None, 8), texts[4]])]
    shard, source = _fresh("shard.safetensors"), object()

    def lookup_error(raw: bytes) -> Any:
        raise LookupError

    calls = [_quiet(NATIVE.safetensors_header, text, 1000, buffer_len, dtypes) for text, buffer_len in texts]
    calls += [
        _quiet(NATIVE.plain_headers, heads[:5], sizes[:5], [shard] * 5, [source] * 5, 0, parse_json, dtypes),
        _quiet(NATIVE.plain_headers, heads, sizes, [shard] * 6, [source] * 6, 0, parse_json, dtypes),
        _quiet(NATIVE.plain_headers, heads[4:5], sizes[4:5], [shard], [source], 0, lookup_error, dtypes),
    ]
    assert [call() is not None for call in calls[:5]] == [True, True, True, True, False]
    assert calls[-3]() is not None and calls[-2]() is None
    _no_leak(calls, [*dtypes.values(), *(c for c, _ in dtypes.values()), *(t for t, _ in texts), *heads, shard,
                     source, dtypes])
