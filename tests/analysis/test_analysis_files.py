"""Statistics of whole files: every layout and encoding, streamed, compared with the decoded arrays."""
from __future__ import annotations

import numpy as np
import pytest
import zstandard

from tests._corpus import CORPUS, corpus_manifest
from ztviewer.analysis.stats import compute_stats
from ztviewer.analysis.tensor_stats import file_statistics, tensor_stats
from ztviewer.codec import Component, Tensor, TensorFile
from ztviewer.codec.dense import to_dense
from ztviewer.codec.dtypes import to_float32
from ztviewer.codec.errors import Cancelled
from ztviewer.codec.model import error
from ztviewer.codec.source import InMemorySource


class Builder:
    """Tensors over one in-memory buffer, with the components a reader would produce."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.tensors: list[Tensor] = []

    def component(self, role: str, data: bytes, **kw) -> Component:
        offset = len(self.buffer)
        self.buffer += data
        return Component(role, offset, len(data), **kw)

    def add(self, name: str, dtype: str, shape, layout: str = "dense", **components: Component) -> Tensor:
        tensor = Tensor(name, dtype, tuple(shape), layout, dict(components), index=len(self.tensors))
        self.tensors.append(tensor)
        return tensor

    def file(self) -> TensorFile:
        return TensorFile("<test>", "zt", "v1.0", tensors=self.tensors,
                          source=InMemorySource(bytes(self.buffer)))


@pytest.fixture
def sample() -> tuple[TensorFile, dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    b, shown = Builder(), {}
    f32 = rng.standard_normal((30, 40)).astype(np.float32)
    f32[3, 4], f32[5, 6], f32[7, 8], f32[0, :10] = np.nan, np.inf, -np.inf, 0
    b.add("f32", "float32", f32.shape, data=b.component("data", f32.tobytes(), dtype="float32"))
    shown["f32"] = f32
    be = rng.standard_normal((9, 11))
    b.add("be", "float64", be.shape,
          data=b.component("data", be.astype(">f8").tobytes(), dtype="float64", byte_order="big"))
    shown["be"] = be
    ints = rng.integers(-30000, 30000, (50, 20)).astype(np.int16)
    packed = zstandard.ZstdCompressor().compress(ints.tobytes())
    b.add("zstd_i16", "int16", ints.shape, data=b.component("data", packed, encoding="zstd", dtype="int16"))
    shown["zstd_i16"] = ints
    bits = rng.integers(0, 2**16, 333).astype(np.uint16)
    b.add("bf16", "bfloat16", bits.shape, data=b.component("data", bits.tobytes(), dtype="bfloat16"))
    shown["bf16"] = to_float32(bits, "bfloat16")
    flags = rng.random(100) < 0.25
    b.add("flags", "bool", flags.shape, data=b.component("data", flags.astype(np.uint8).tobytes(), dtype="bool"))
    shown["flags"] = flags.astype(np.uint8)
    z = (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(np.complex64)
    b.add("c64", "complex64", z.shape, data=b.component("data", z.tobytes(), dtype="complex64"))
    shown["c64"] = np.abs(z)
    csr = np.where(rng.random((12, 15)) < 0.2, rng.standard_normal((12, 15)), 0).astype(np.float32)
    rows, cols = np.nonzero(csr)
    indptr = np.concatenate([[0], np.cumsum(np.count_nonzero(csr, axis=1))]).astype("<u8")
    b.add("csr", "float32", csr.shape, "sparse_csr",
          values=b.component("values", csr[rows, cols].tobytes(), dtype="float32"),
          indices=b.component("indices", cols.astype("<u8").tobytes(), dtype="uint64"),
          indptr=b.component("indptr", indptr.tobytes(), dtype="uint64"))
    shown["csr"] = csr
    coo = np.zeros((4, 5, 6))
    coords = np.array([[0, 1, 3], [4, 0, 2], [5, 5, 0]])
    coo[tuple(coords)] = [2.5, -1.0, 7.0]
    b.add("coo", "float64", coo.shape, "sparse_coo",
          values=b.component("values", np.array([2.5, -1.0, 7.0]).tobytes(), dtype="float64"),
          coords=b.component("coords", coords.astype("<u8").tobytes(), dtype="uint64"))
    shown["coo"] = coo
    cores = [rng.standard_normal(s) for s in [(1, 4, 2), (2, 5, 3), (3, 6, 1)]]
    b.add("tt", "float64", (4, 5, 6), "tensor_train",
          **{f"core_{k}": b.component(f"core_{k}", c.tobytes(), dtype="float64", shape=c.shape)
             for k, c in enumerate(cores)})
    shown["tt"] = np.einsum("aib,bjc,ckd->ijk", *cores)
    b.add("short", "float32", (100,), data=b.component("data", b"\0" * 12, dtype="float32"))
    b.add("odd", "float32", (3,), "quantized_group", data=b.component("data", b"\0" * 12))
    flagged = b.add("flagged", "float32", (3,), data=b.component("data", b"\0" * 12, dtype="float32"))
    flagged.add_problem(error("offsets overlap", tensor="flagged"))
    return b.file(), shown


def test_each_layout_matches_numpy(sample) -> None:
    tf, shown = sample
    rows = dict(file_statistics(tf, bins=16))
    assert list(rows) == [t.name for t in tf.tensors]
    for name, values in shown.items():
        got, expected = rows[name], compute_stats(np.ascontiguousarray(values), bins=16)
        assert not isinstance(got, str), got
        for field in ("count", "finite", "zeros", "nan", "pos_inf", "neg_inf"):
            assert getattr(got, field) == getattr(expected, field), (name, field)
        assert got.mean == pytest.approx(expected.mean, rel=1e-9) and got.std == pytest.approx(expected.std, rel=1e-9)
        if name == "tt":  # reconstructed in another contraction order: equal to rounding
            assert got.min == pytest.approx(expected.min, rel=1e-12) and got.max == pytest.approx(expected.max)
            assert got.histogram.sum() == expected.histogram.sum()
            continue
        assert (got.min, got.max) == (expected.min, expected.max), name
        np.testing.assert_array_equal(got.histogram, expected.histogram)
    assert rows["csr"].sparsity == pytest.approx(np.mean(shown["csr"] == 0))
    assert "100" in rows["short"] or "elements" in rows["short"]
    assert "quantized_group" in rows["odd"]
    assert rows["flagged"].startswith("not read:") and "offsets overlap" in rows["flagged"]


def test_progress_and_cancel(sample) -> None:
    tf, _ = sample
    seen = []
    list(file_statistics(tf, progress=lambda d, t: seen.append((d, t))))
    assert seen[-1] == (len(tf.tensors), len(tf.tensors))
    with pytest.raises(Cancelled):
        list(file_statistics(tf, cancelled=lambda: True))
    steps = []
    tensor_stats(tf, tf.tensors[0], progress=lambda d, t: steps.append((d, t)))
    assert steps[-1] == (2 * 1200, 2 * 1200)


def corpus_files() -> list[str]:
    return [entry["path"] for entry in corpus_manifest()
            if entry["path"].endswith((".zt", ".safetensors", ".blz")) and "zt_v2" not in entry["path"]]


@pytest.mark.parametrize("relpath", corpus_files())
def test_corpus_statistics_match_decoded_arrays(relpath) -> None:
    from ztviewer.analysis.slicing import to_display
    from ztviewer.codec import open_file

    with open_file(CORPUS / relpath) as tf:
        for tensor, (name, got) in zip(tf.tensors, file_statistics(tf, bins=8), strict=True):
            assert name == tensor.name
            if tensor.layout not in ("dense", "sparse_csr", "sparse_coo", "tensor_train") or tensor.has_errors:
                continue
            assert not isinstance(got, str), f"{relpath}:{name}: {got}"
            values = np.asarray(to_dense(tf, tensor))
            if values.dtype.kind == "b":
                values = values.astype(np.uint8)
            elif values.dtype.kind in "fc":
                values = to_display(values).astype(np.float64)
            expected = compute_stats(np.ascontiguousarray(values), bins=8)
            assert (got.count, got.finite, got.zeros, got.nan) == (expected.count, expected.finite,
                                                                   expected.zeros, expected.nan), name
            if expected.finite:
                assert float(got.min) == pytest.approx(float(expected.min), rel=1e-6)
                assert float(got.max) == pytest.approx(float(expected.max), rel=1e-6)
                assert got.mean == pytest.approx(expected.mean, rel=1e-6, abs=1e-9)
