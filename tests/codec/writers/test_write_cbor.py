"""The writers' CBOR encoder: the exact bytes serde_cbor / ciborium produce."""
from __future__ import annotations

import math

import cbor2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ztviewer.codec.errors import EditRefused
from ztviewer.codec.writers.cbor import Encoded, IndefiniteMap, dumps, dumps_plain


@pytest.mark.parametrize("value, expected", [
    (0, "00"), (23, "17"), (24, "1818"), (255, "18ff"), (256, "190100"), (65536, "1a00010000"),
    (2**32, "1b0000000100000000"), (-1, "20"), (-25, "3818"),
    ("", "60"), ("name", "646e616d65"), (b"\x01", "4101"),
    (True, "f5"), (False, "f4"), (None, "f6"),
    ([], "80"), ([1, 2], "820102"), ({}, "a0"), ({"a": 1}, "a1616101"),
])
def test_heads_and_scalars(value, expected):
    assert dumps(value).hex() == expected


@pytest.mark.parametrize("value, expected", [
    (0.5, "f93800"), (1.0, "f93c00"), (-2.0, "f9c000"), (65504.0, "f97bff"),
    (0.1, "fb3fb999999999999a"), (3.4028234663852886e38, "fa7f7fffff"), (1e300, "fb7e37e43c8800759c"),
    (math.inf, "f97c00"), (-math.inf, "f9fc00"), (math.nan, "f97e00"), (2.0 ** -24, "f90001"),
    (2.0 ** -149, "fa00000001"),
])
def test_floats_use_the_shortest_lossless_width(value, expected):
    """serde_cbor writes f16 when lossless, then f32, else f64 (0.5 in types_attrs.zt is f9 3800)."""
    assert dumps(value).hex() == expected


def test_indefinite_map_as_ztensor_014_writes_tensor_maps():
    data = dumps([IndefiniteMap({"name": "a", "size": 3})])
    assert data.hex() == "81" + "bf" + "646e616d65" + "6161" + "6473697a65" + "03" + "ff"
    assert cbor2.loads(data) == [{"name": "a", "size": 3}]


def test_key_order_is_kept():
    assert list(cbor2.loads(dumps({"z": 1, "a": 2, "m": 3}))) == ["z", "a", "m"]


@pytest.mark.parametrize("value", [2**64, -(2**64) - 1, object(), {1.5j: 1}])
def test_unencodable_values_are_refused(value):
    with pytest.raises(EditRefused) as info:
        dumps({"attr": value})
    assert "attr" in str(info.value) or "cannot be stored" in str(info.value)


json_like = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20)


@given(json_like)
def test_round_trips_through_cbor2(value):
    assert cbor2.loads(dumps(value)) == value


plain = st.recursive(
    st.integers(0, 2**64 - 1) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=30), children, max_size=4),
    max_leaves=20)


@given(plain)
def test_plain_values_encode_as_dumps_does(value):
    assert dumps_plain(value) == dumps(value)


def test_plain_edges_encode_as_dumps_does():
    for value in (23, 24, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1, "x" * 23, "x" * 24, "é" * 12,
                  {"tensors": {"a": {"shape": [1, 2**40], "components": {"data": {"offset": 64, "length": 4}}}}}):
        assert dumps_plain(value) == dumps(value)


def test_plain_text_that_is_no_unicode_is_refused_with_its_place():
    with pytest.raises(EditRefused, match=r"manifest\.tensors: text .* not valid Unicode"):
        dumps_plain({"a\ud800": {"dtype": "float32"}}, "manifest.tensors")


def test_an_encoded_part_is_written_as_it_is():
    part = dumps_plain({"b": [1, 2]})
    assert dumps({"a": Encoded(part), "c": 1.5}) == dumps({"a": {"b": [1, 2]}, "c": 1.5})
