"""Copy as code: every generated snippet runs in a fresh interpreter and loads exactly what the codec decodes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ztviewer.codec import CodecError, open_file
from ztviewer.codec.dense import to_dense
from ztviewer.codec.model import Tensor, TensorFile
from ztviewer.session.code_snippet import CODEC, SAFETENSORS, ZTENSOR, snippets

RUNNER = """
import json, sys
import numpy as np
jobs = json.loads(sys.stdin.read())
for code, out in jobs:
    namespace = {}
    exec(compile(code, "<snippet>", "exec"), namespace)
    np.save(out, np.asarray(namespace["array"]), allow_pickle=False)
"""


def run_snippets(jobs: list[tuple[str, str]]) -> None:
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(jobs), capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).resolve().parents[2], check=False)
    assert proc.returncode == 0, proc.stderr


def check_file(path: Path, tmp_path: Path, limit: int = 12) -> set[str]:
    """Run every snippet of (up to ``limit``) tensors of one file; return the libraries exercised."""
    tf = open_file(path)
    jobs, expected = [], []
    for tensor in list(tf.tensors)[:limit]:
        try:
            reference = to_dense(tf, tensor)
        except CodecError:
            assert tensor.layout not in ("dense",) or tensor.problems or tf.problems, tensor.name
            continue  # damaged or structural-only: the codec snippet would raise the same
        for snippet in snippets(tf, tensor):
            out = tmp_path / f"{len(jobs)}.npy"
            jobs.append((snippet.code, str(out)))
            expected.append((snippet, tensor, reference, out))
    if not jobs:
        return set()
    run_snippets(jobs)
    for snippet, tensor, reference, out in expected:
        loaded = np.load(out)
        assert loaded.shape == reference.shape, (snippet.library, tensor.name)
        assert loaded.dtype == reference.dtype, (snippet.library, tensor.name, loaded.dtype, reference.dtype)
        assert np.array_equal(loaded, reference, equal_nan=loaded.dtype.kind in "fc"), (snippet.library, tensor.name)
    return {snippet.library for snippet, *_ in expected}


CORPUS_FILES = ["safetensors/safetensors-0.8.0/dtypes_2d.safetensors",
                "safetensors/safetensors-0.8.0/dtypes_extra.safetensors",
                "zt_v2/ztensor-2.1.2/dtypes_2d.zt", "zt_v2/ztensor-2.1.2/sparse_attrs.zt",
                "zt_v2/ztensor-2.1.2/special_floats.zt", "zt_v1.x/ztensor-1.2.3/shapes.zt",
                "zt_v0.1/ztensor-0.1.4-rust/big_endian.zt"]


@pytest.mark.parametrize("relative", CORPUS_FILES)
def test_snippets_run_and_match_the_codec(corpus_dir: Path, tmp_path: Path, relative: str) -> None:
    libraries = check_file(corpus_dir / relative, tmp_path)
    assert CODEC in libraries
    if relative.endswith(".safetensors"):
        assert SAFETENSORS in libraries
    if relative.startswith("zt_v2") and "sparse" not in relative:
        assert ZTENSOR in libraries


def test_blz_snippet_runs(corpus_dir: Path, tmp_path: Path) -> None:
    path = next(iter(sorted((corpus_dir / "blz").rglob("*.blz"))))
    assert CODEC in check_file(path, tmp_path, limit=4)


def test_bfloat16_in_ztensor_snippet_is_widened_exactly(tmp_path: Path) -> None:
    ztensor = pytest.importorskip("ztensor")
    path = tmp_path / "bf16.zt"
    bits = np.array([[0x3F80, 0xC000, 0x7F80], [0x0001, 0x8000, 0x4049]], dtype=np.uint16)
    with ztensor.Writer(str(path)) as writer:
        writer.add("w", bits.view(np.uint8), [2, 3], "bf16")
    tf = open_file(path)
    found = {s.library: s for s in snippets(tf, tf.tensor("w"))}
    assert set(found) == {ZTENSOR, CODEC}
    run_snippets([(found[ZTENSOR].code, str(tmp_path / "z.npy")), (found[CODEC].code, str(tmp_path / "c.npy"))])
    expected = (bits.astype(np.uint32) << 16).view(np.float32)
    for name in ("z", "c"):
        assert np.array_equal(np.load(tmp_path / f"{name}.npy"), expected)


def test_names_and_paths_with_any_character_are_literals(tmp_path: Path) -> None:
    path = tmp_path / "we'ird \"dir\"" / "f.safetensors"
    path.parent.mkdir()
    from safetensors.numpy import save_file

    name = "layer\n'0'\\\"x\""
    save_file({name: np.arange(6, dtype=np.float32).reshape(2, 3)}, str(path))
    tf = open_file(path)
    found = snippets(tf, tf.tensor(name))
    assert [s.library for s in found] == [SAFETENSORS, CODEC]
    jobs = [(s.code, str(tmp_path / f"{i}.npy")) for i, s in enumerate(found)]
    run_snippets(jobs)
    for _, out in jobs:
        assert np.array_equal(np.load(out), np.arange(6, dtype=np.float32).reshape(2, 3))


def test_duplicate_names_are_addressed_by_position_and_library_snippets_left_out() -> None:
    first = Tensor("x", "float32", (2,), index=0)
    second = Tensor("x", "float32", (2,), index=1)
    tf = TensorFile(path="/tmp/d.safetensors", format="safetensors", variant="safetensors", tensors=[first, second])
    assert [s.library for s in snippets(tf, first)] == [CODEC]
    assert "tf.tensor('x')" in snippets(tf, first)[0].code
    assert "tf.tensors[1]" in snippets(tf, second)[0].code


def test_structural_layouts_get_no_snippet() -> None:
    tensor = Tensor("q", "int8", (4,), layout="quantized_mystery")
    tf = TensorFile(path="/tmp/q.zt", format="zt", variant="v2", tensors=[tensor])
    assert snippets(tf, tensor) == []
