"""``check`` reads a raw tensor's bytes once: its digest pass is also its decode pass."""
from __future__ import annotations

import numpy as np
from safetensors.numpy import save_file

import ztviewer.codec.check as check
from ztviewer.codec import open_file
from ztviewer.codec.convert import convert


def _decoded_names(monkeypatch, path):
    seen = []
    real = check.iter_decoded

    def counting(tf, tensor, component, **kw):
        seen.append(tensor.name)
        return real(tf, tensor, component, **kw)

    monkeypatch.setattr(check, "iter_decoded", counting)
    with open_file(path) as tf:
        return check.check_file(tf), seen


def test_a_digested_raw_tensor_is_read_once_by_its_digest(tmp_path, monkeypatch):
    st = tmp_path / "in.safetensors"
    save_file({"a": np.arange(1000, dtype=np.float32), "b": np.ones(10, np.int64)}, str(st))
    with_digest, without = tmp_path / "crc.zt", tmp_path / "plain.zt"
    convert(st, with_digest, to="zt", digest="crc32c")
    convert(st, without, to="zt", digest="none")

    report, decoded = _decoded_names(monkeypatch, with_digest)
    assert report.ok and report.digests_verified == 2 and report.tensors_decoded == 2
    assert decoded == []  # the digest pass read every byte: no second read

    report, decoded = _decoded_names(monkeypatch, without)
    assert report.ok and report.digests_verified == 0 and decoded == ["a", "b"]


def test_a_damaged_digested_raw_tensor_is_still_reported(tmp_path, monkeypatch):
    st = tmp_path / "in.safetensors"
    save_file({"a": np.arange(1000, dtype=np.float32)}, str(st))
    path = tmp_path / "crc.zt"
    convert(st, path, to="zt", digest="sha256")
    with open_file(path) as tf:
        offset = tf.tensor("a").components["data"].offset
    with open(path, "r+b") as f:
        f.seek(offset + 100)
        f.write(b"\xff")
    report, decoded = _decoded_names(monkeypatch, path)
    assert not report.ok and decoded == []
    assert [(p.tensor, p.component) for p in report.problems if p.is_error] == [("a", "data")]
