"""The safetensors header is compact UTF-8 JSON, byte for byte what ``json.dumps(ensure_ascii=False,
separators=(",", ":"))`` writes, whichever encoder writes it."""
from __future__ import annotations

import json

import pytest

from ztviewer.codec.errors import EditRefused
from ztviewer.codec.writers.safetensors import header_bytes

TEXT = "".join(chr(i) for i in range(0x2100)) + "\U0001F600 \"quoted\" back\\slash /"


def _reference(metadata: dict, entries: dict) -> bytes:
    header = ({"__metadata__": dict(sorted(metadata.items()))} if metadata else {}) | entries
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return text + b" " * (-len(text) % 8)


@pytest.mark.parametrize("dims", [[1], [], [2**63, 3], [2**64 - 1], [2**64, 1]])  # 2**64: past orjson's integers
def test_header_bytes_are_compact_json(dims):
    metadata = {TEXT: TEXT, "b": "2", "a": ""}
    entries = {TEXT + "x": {"dtype": "F32", "shape": dims, "data_offsets": [0, 4]},
               "é": {"dtype": "BF16", "shape": [1], "data_offsets": [4, 6]}}
    assert header_bytes(metadata, entries) == _reference(metadata, entries)


def test_a_lone_surrogate_is_refused():
    with pytest.raises(EditRefused, match="not valid Unicode"):
        header_bytes({}, {"a\udc80": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})


def test_without_orjson_the_header_is_the_same(monkeypatch):
    from ztviewer.codec.writers import safetensors as writer

    metadata = {TEXT: TEXT}
    entries = {"w": {"dtype": "F32", "shape": [2**63, 1], "data_offsets": [0, 4]}}   # orjson writes this one
    with_orjson = header_bytes(metadata, entries)
    monkeypatch.setattr(writer, "orjson", None)
    assert header_bytes(metadata, entries) == with_orjson == _reference(metadata, entries)
