"""Locating keys in a safetensors header for messages stays linear in the header (issue 16, item 5).

Erroring entries whose keys are written with JSON escapes used to send every lookup through two scans of the
whole header (10k/20k/40k entries: 6/22/88 s). The work is counted here, not timed: the characters the locator
scans with ``str.find`` and the passes it makes over every key.
"""
from __future__ import annotations

import json
import struct

import pytest

from ztviewer.codec.formats import safetensors as st_reader
from ztviewer.codec.formats.safetensors import HeaderLocator
from ztviewer.codec.source import InMemorySource


class _CountedText(str):
    """A header text that adds up how many characters each ``find`` scans (to the match, or to the end)."""

    scanned = 0

    def find(self, sub: str, start: int = 0, *args: int) -> int:  # type: ignore[override]
        found = str.find(self, sub, start, *args)
        _CountedText.scanned += (len(self) if found < 0 else found + len(sub)) - start
        return found


def _escaped(name: str) -> str:
    """``name`` as a JSON string with every character written as a \\u escape."""
    return '"' + "".join(f"\\u{ord(c):04x}" for c in name) + '"'


def _header(count: int, escaped: bool, prefix: str = "t") -> tuple[str, list[str]]:
    names = [f"{prefix}{i}" for i in range(count)]
    entry = '{"dtype":"X","shape":[1],"data_offsets":[0,0]}'  # unknown dtype: every entry has a problem
    keys = [_escaped(n) if escaped else json.dumps(n, ensure_ascii=False) for n in names]
    return "{" + ",".join(f"{k}:{entry}" for k in keys) + "}", names


def _expected_offsets(text: str, count: int, escaped: bool, prefix: str = "t") -> list[int]:
    offsets = []
    for i in range(count):
        key = (_escaped if escaped else json.dumps)(f"{prefix}{i}") + ":"
        offsets.append(8 + len(text[:text.index(key)].encode()))
    return offsets


@pytest.mark.parametrize("escaped", [False, True], ids=["verbatim", "escaped"])
@pytest.mark.parametrize("order", ["header", "reversed"])
def test_locating_every_key_scans_the_header_a_bounded_number_of_times(escaped, order):
    count = 2000
    text, names = _header(count, escaped)
    expected = dict(zip(names, _expected_offsets(text, count, escaped)))
    locate = HeaderLocator(_CountedText(text))
    passes = []
    index = locate.index
    locate.index = lambda: passes.append(1) or index()  # type: ignore[method-assign]
    _CountedText.scanned = 0
    for name in names if order == "header" else names[::-1]:
        assert locate(name) == expected[name]
    assert _CountedText.scanned <= 2 * len(text), f"scanned {_CountedText.scanned:,} chars of a {len(text):,}"
    assert len(passes) <= count  # ... and they all reuse one index, built at most once:
    assert (locate._index is None) == (order == "header" and not escaped)


def test_escaped_and_non_ascii_keys_are_located_at_their_byte_offsets():
    text, names = _header(50, escaped=True, prefix="名")
    locate = HeaderLocator(text)
    assert [locate(n) for n in names] == _expected_offsets(text, 50, escaped=True, prefix="名")
    assert locate("absent") is None
    assert locate.occurrences({"名3", "absent"}) == {"名3": [_expected_offsets(text, 4, True, "名")[3]],
                                                      "absent": []}


def test_a_file_of_erroring_escaped_entries_points_each_problem_at_its_key():
    text, names = _header(300, escaped=True)
    raw = text.encode()
    source = InMemorySource(struct.pack("<Q", len(raw)) + raw, path="escaped.safetensors")
    tf = st_reader.read(source)
    offsets = _expected_offsets(text, 300, escaped=True)
    assert [t.name for t in tf.tensors] == names
    for tensor, offset in zip(tf.tensors, offsets):
        dtype_problems = [p for p in tensor.problems if "unknown dtype" in p.message]
        assert [p.offset for p in dtype_problems] == [offset]
