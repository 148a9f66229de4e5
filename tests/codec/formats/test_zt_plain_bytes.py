"""The zTensor 1.x bytes path (:mod:`ztviewer.codec.formats.zt_plain_bytes`) against the decoded path.

Manifests are written with cbor2 as the ztensor writers spell them, sometimes with one thing odd anywhere (a
key order, a dtype, a shape, a value type, a long or repeated name, a non-shortest integer, trailing bytes, more
root keys): whatever the bytes path reads, the decoded path (cbor2 + the layout's reader) reads the same, with
the same problems, attributes and extra; whatever it declines, the decoded path reads as before.
"""
from __future__ import annotations

from typing import Any

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.codec.formats.zt_builders import V1, open_bytes, zt_bytes
from ztviewer.codec.formats import zt, zt_plain_bytes
from ztviewer.codec.tensor_table import TensorTable

_LONG = ["float32", "float16", "bfloat16", "int64", "uint8", "bool", "float64"]
_SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int64": "i64", "uint8": "u8", "bool": "bool",
          "float64": "f64"}
_WIDTH = {"float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "uint8": 1, "bool": 1, "float64": 8}
_NAMES = ["w", "", "model.layers.0.weight", "ä", "x" * 30, "y" * 300, "\0", "名"]


@st.composite
def _manifest(draw: Any) -> tuple[bytes, bool]:
    """A manifest's bytes (as the file holds them) and whether it is of the objects layout."""
    objects = draw(st.booleans())
    odd = not draw(st.integers(0, 2))
    entries: dict[str, Any] = {}
    offset = 64
    for i in range(draw(st.integers(1, 6))):
        dtype = draw(st.sampled_from(_LONG))
        shape = draw(st.lists(st.integers(0, 300), max_size=3))
        length = _WIDTH[dtype]
        for dim in shape:
            length *= dim
        data: dict[str, Any] = {"offset": offset, "length": length}
        if objects:
            data = {"dtype": _SHORT[dtype], **data}
            entry: dict[str, Any] = {"shape": shape, "format": "dense", "components": {"data": data}}
        else:
            entry = {"dtype": dtype, "shape": shape, "format": "dense", "components": {"data": data}}
        if odd and not draw(st.integers(0, 3)):
            entry = _oddity(draw, entry, data)
        name = draw(st.sampled_from(_NAMES)) + str(i) if not odd or draw(st.integers(0, 5)) else "w0"
        entries[name] = entry
        offset += -(-max(length, 1) // 64) * 64
    key = "objects" if objects else "tensors"
    root: dict[str, Any] = ({"version": "1.2.0"} if objects else {"version": "1.0", "generator": "g",
                                                                      "attributes": {"a": [1, {"b": b"x"}]}})
    if odd and not draw(st.integers(0, 3)):
        root[draw(st.sampled_from(["extra", "version", "attributes"]))] = draw(st.sampled_from([1, "2.0", "1.9", {}]))
    root[key] = entries
    if odd and not draw(st.integers(0, 4)):
        root = {key: entries, **{k: v for k, v in root.items() if k != key}}
    body = cbor2.dumps(root)
    if odd and not draw(st.integers(0, 4)):
        body = draw(st.sampled_from([body + b"\0", body[:-1], body.replace(b"\x66offset\x18", b"\x66offset\x19\x00")]))
    return body, objects


def _oddity(draw: Any, entry: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    what = draw(st.integers(0, 7))
    if what == 0:
        return dict(reversed(entry.items()))
    if what == 1:
        entry["format"] = draw(st.sampled_from(["sparse_csr", "Dense", 1]))
    elif what == 2:
        entry["shape"] = draw(st.sampled_from([[True], [-1], [1.0], [2 ** 64], [[1]], "2", [1] * 65]))
    elif what == 3:
        data["length"] = draw(st.sampled_from([data["length"] + 1, -1, 2 ** 64, "8"]))
    elif what == 4:
        data["digest"] = "crc32c:0x00000000"
    elif what == 5:
        data["offset"] = draw(st.sampled_from([2 ** 70, 1.5, None]))
    elif what == 6:
        entry["components"] = {"values": data}
    else:
        entry["attributes"] = {}
    return entry


def _file(body: bytes, objects: bool) -> bytes:
    return zt_bytes(V1, body, objects=objects)


def _decoded(data: bytes) -> Any:
    """What the file reads as through cbor2 and the layout's reader only."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(zt, "read_plain", lambda manifest, layout: None)
        return _outcome(data)


def _outcome(data: bytes) -> Any:
    try:
        tf = open_bytes(data)
    except Exception as exc:  # a fatal CodecError: both paths must raise the same
        return type(exc).__name__, str(exc)
    tensors = [(repr(t._fields()), t.index, t.layout_spelling) for t in tf.tensors]
    return (tensors, [str(p) for p in tf.all_problems()], repr(tf.attributes), repr(tf.extra), tf.variant)


@settings(max_examples=300, deadline=None)
@given(_manifest())
def test_the_bytes_path_reads_what_the_decoded_path_reads(case):
    body, objects = case
    data = _file(body, objects)
    assert _outcome(data) == _decoded(data)


def test_the_writers_spelling_takes_the_bytes_path():
    for objects in (False, True):
        entry: dict[str, Any] = {"shape": [2, 3], "format": "dense",
                                 "components": {"data": {"dtype": "f32", "offset": 64, "length": 24}}}
        if not objects:
            entry = {"dtype": "float32", "shape": [2, 3], "format": "dense",
                     "components": {"data": {"offset": 64, "length": 24}}}
        key, version = ("objects", "1.2.0") if objects else ("tensors", "1.0")
        body = cbor2.dumps({"version": version, "attributes": {"k": "v"}, key: {"a": entry, "b": entry}})
        root, table = zt_plain_bytes.read_plain(body, "v1.x-objects" if objects else "v1.0")
        assert root == {"version": version, "attributes": {"k": "v"}, key: {}}
        assert isinstance(table, TensorTable) and table.tensor_names() == ["a", "b"]
        data = _file(body, objects)
        assert isinstance(open_bytes(data).tensors, TensorTable)
        assert _outcome(data) == _decoded(data)


@pytest.mark.parametrize("layout", ["v1.0", "v1.x-objects"])
def test_entries_it_does_not_take_cost_one_scan_not_a_search_from_every_byte(layout):
    """200 entries of the usual shape that all differ in their last key: the path declines after one scan of
    the map (an expression that searched for a match from every byte took minutes at 50 entries)."""
    data = {"offset": 64, "length": 4, "encoding": "raw"}
    entry = ({"shape": [1], "format": "dense", "components": {"data": {"dtype": "f32", **data}}}
             if layout != "v1.0" else {"dtype": "float32", "shape": [1], "format": "dense",
                                       "components": {"data": data}})
    key = "tensors" if layout == "v1.0" else "objects"
    body = cbor2.dumps({"version": "1.0", key: {f"t{i:04d}": entry for i in range(200)}})
    assert zt_plain_bytes.read_plain(body, layout) is None
