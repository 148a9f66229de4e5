"""A rank-0 ``zt.sparse_coo/1`` object (a scalar: §3.3's empty shape, one element) has no coordinates and at most
one value. ztensor 2.1.2 reads it; so does ztviewer, and what ztviewer writes from one (through zTensor v1.0 and
back, or v2 to v2) is read by both with the same value."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.codec.formats.v2_builders import assemble, part
from ztviewer.codec import open_file
from ztviewer.codec.check import check_file
from ztviewer.codec.convert import convert
from ztviewer.codec.dense import to_dense

ztensor = pytest.importorskip("ztensor")


def _scalar_coo(path: Path, values: bytes, coords: bytes = b"") -> Path:
    manifest = {"objects": {"s": {"shape": [], "layout": "zt.sparse_coo/1", "parts": {
        "values": part("f32", 4096, len(values)), "coords": part("u64", 8192, len(coords))}}}}
    path.write_bytes(assemble(manifest, {4096: values, 8192: coords}))
    return path


def _ours(path: Path) -> np.ndarray:
    with open_file(path) as tf:
        assert check_file(tf).ok, [str(p) for p in check_file(tf).problems]
        tensor = tf.tensor("s")
        assert tensor.layout == "sparse_coo" and tensor.shape == ()
        return np.asarray(to_dense(tf, tensor))


def _reference(path: Path) -> tuple[list[int], bytes, bytes]:
    with ztensor.open(str(path)) as source:
        tensor = source["s"]
        source.verify(deep=True)
        return list(tensor.shape), tensor["values"].tobytes(), tensor["coords"].tobytes()


@pytest.mark.parametrize("values", [np.float32(7.5).tobytes(), b""])
def test_a_scalar_coo_round_trips_through_v1_and_v2(values: bytes, tmp_path: Path) -> None:
    src = _scalar_coo(tmp_path / "in.zt", values)
    expected = np.frombuffer(values, "<f4")[0] if values else np.float32(0)
    assert _reference(src) == ([], values, b"") and _ours(src) == expected
    convert(src, tmp_path / "v1.zt", to="zt")
    convert(tmp_path / "v1.zt", tmp_path / "back.zt", to="zt-v2")
    convert(src, tmp_path / "v2.zt", to="zt-v2")
    for written in ("back.zt", "v2.zt"):
        assert _reference(tmp_path / written) == ([], values, b"")
        assert _ours(tmp_path / written) == expected


@pytest.mark.parametrize(("values", "coords", "words"), [
    (np.ones(2, "<f4").tobytes(), b"", ("component 'values'", "at most one value")),
    (np.ones(1, "<f4").tobytes(), bytes(8), ("component 'coords'", "has no coordinates")),
])
def test_a_scalar_coo_with_two_values_or_coordinates_is_refused(values, coords, words, tmp_path: Path) -> None:
    with open_file(_scalar_coo(tmp_path / "bad.zt", values, coords)) as tf:
        described = [p.describe() for p in tf.all_problems() if p.is_error]
    assert any(all(w in d for w in words) for d in described), described
