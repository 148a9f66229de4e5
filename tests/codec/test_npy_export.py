"""Export to .npy streams dense tensors chunk by chunk and writes the bytes np.save of the whole array writes."""
from __future__ import annotations

import io

import numpy as np
import pytest

from tests._corpus import CORPUS, corpus_available, corpus_manifest
from ztviewer.codec import npy_export, open_file
from ztviewer.codec.dense import to_dense
from ztviewer.codec.errors import CodecError
from ztviewer.codec.npy_export import write_npy


def _saved(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _corpus_files() -> list[str]:
    return sorted({e["path"] for e in corpus_manifest() if e["path"].endswith((".zt", ".safetensors"))})


@pytest.mark.skipif(not corpus_available(), reason="shared corpus not available")
@pytest.mark.parametrize("raw_bits", [False, True])
def test_every_corpus_tensor_exports_as_np_save_of_the_dense_array(raw_bits, monkeypatch):
    monkeypatch.setattr(npy_export, "CHUNK", 64)  # many chunks even for small tensors
    compared = set()
    for name in _corpus_files():
        tf = open_file(CORPUS / name)
        for tensor in tf.tensors:
            try:
                expected = _saved(to_dense(tf, tensor, raw_bits=raw_bits))
            except (CodecError, ValueError, MemoryError):
                continue
            out = io.BytesIO()
            write_npy(tf, tensor, out, raw_bits=raw_bits)
            assert out.getvalue() == expected, (name, tensor.name)
            compared.add((tensor.layout, tensor.dtype, tensor.components["data"].encoding
                          if "data" in tensor.components else None))
        tf.close()
    assert {("dense", "float32", "raw"), ("dense", "float32", "zstd"), ("dense", "bfloat16", "raw")} <= compared


def test_a_short_stream_is_an_error(tmp_path):
    import zstandard

    from benchmarks.files import ZtV10Writer

    path = tmp_path / "short.zt"
    writer = ZtV10Writer(path)
    writer.add("w", "float32", [1000], [zstandard.ZstdCompressor().compress(bytes(400))], encoding="zstd")
    writer.finish()
    tf = open_file(path)
    with pytest.raises(CodecError):
        write_npy(tf, tf.tensor("w"), io.BytesIO())
