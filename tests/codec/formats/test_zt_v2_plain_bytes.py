"""The bytes path of the v2 reader (:mod:`ztviewer.codec.formats.zt_v2.plain_bytes`) takes only deterministic
CBOR: every non-canonical spelling of a plain manifest is left to cbor2 and the schema, which refuse it with
the rule it breaks, exactly as when the bytes path is off."""
from __future__ import annotations

import pytest

from tests.codec.formats.v2_builders import assemble, dense
from ztviewer.codec import open_file
from ztviewer.codec.formats.zt_v2 import reader
from ztviewer.codec.formats.zt_v2.cbor_check import encode_deterministic
from ztviewer.codec.formats.zt_v2.plain_bytes import read_plain

BLOBS = {4096: bytes(8), 8192: bytes(300)}
MANIFEST = {"objects": {"ab": dense("f32", [2], 4096, 8), "cd": dense("u8", [300], 8192, 300)},
            "attributes": {"k": 1.5}}
RAW = encode_deterministic(MANIFEST)


def _spelled(old: bytes, new: bytes) -> bytes:
    assert RAW.count(old) == 1, old
    return RAW.replace(old, new)


NON_CANONICAL = {
    "offset head too wide": _spelled(b"\x82\x19\x10\x00\x08", b"\x82\x1a\x00\x00\x10\x00\x08"),
    "length head too wide": _spelled(b"\x82\x19\x10\x00\x08", b"\x82\x19\x10\x00\x18\x08"),
    "name head too wide": _spelled(b"\x62ab", b"\x78\x02ab"),
    "shape count head too wide": _spelled(b"\x81\x19\x01\x2c", b"\x98\x01\x19\x01\x2c"),
    "objects map indefinite": _spelled(b"\xa2\x62ab", b"\xbf\x62ab") .replace(b"dense\x6aattributes",
                                                                               b"dense\xff\x6aattributes"),
    "names unsorted": RAW.replace(b"\x62ab", b"\x62zz"),
    "duplicate name": RAW.replace(b"\x62cd", b"\x62ab"),
    "tagged offset": _spelled(b"\x82\x19\x10\x00\x08", b"\x82\xc2\x42\x10\x00\x08"),
    "name shorter than its head": _spelled(b"\x62ab", b"\x63ab"),
    "shape shorter than its head": _spelled(b"\x81\x02", b"\x82\x02"),
    "part map head disagrees": RAW.replace(b"\xa1\x64data\xa2", b"\xa1\x64data\xa3", 1),
    "attribute float too wide": _spelled(b"\xf9\x3e\x00", b"\xfa\x3f\xc0\x00\x00"),
    "trailing byte": RAW + b"\x00",
}


def test_the_canonical_manifest_takes_the_bytes_path():
    plain = read_plain(RAW)
    assert plain is not None
    table, attributes = plain
    assert table.names == ["ab", "cd"] and table.offsets == [4096, 8192] and attributes == {"k": 1.5}


@pytest.mark.parametrize("name", NON_CANONICAL)
def test_a_non_canonical_spelling_is_left_to_the_strict_path(tmp_path, monkeypatch, name):
    raw = NON_CANONICAL[name]
    assert raw != RAW
    assert read_plain(raw) is None
    path = tmp_path / "m.zt"
    path.write_bytes(assemble(raw, BLOBS))
    ours = open_file(path)
    monkeypatch.setattr(reader, "read_plain", lambda data: None)
    theirs = open_file(path)
    assert [(p.message, p.rule) for p in ours.all_problems()] == [(p.message, p.rule) for p in theirs.all_problems()]
    assert any(p.is_error for p in ours.all_problems()), "the strict path refuses it"


def test_objects_it_does_not_take_cost_one_scan_not_a_search_from_every_byte():
    """200 objects of the usual shape whose layout is not dense: the bytes path declines after one scan of the
    map. Its expression used to search for an object from every byte, each try scanning the rest of the map for
    a name's end (25 such objects took 19 s, 200 would take hours)."""
    objects = {f"t{i:04d}": {**dense("f32", [1], 4096 * (i + 1), 4), "layout": "densx"} for i in range(200)}
    assert read_plain(encode_deterministic({"objects": objects})) is None
