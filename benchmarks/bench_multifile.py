"""Opening multi-file sets: a 1,000-shard Hugging Face checkpoint and a 1,000-shard safetensors-spark dataset.

Reference, in the same run: what any loader must do to list such a set with the reference library, i.e.
``json.load`` the index / manifest, then ``safe_open(shard, "np").keys()`` on every shard it names.
Ours: :func:`ztviewer.codec.multifile.open_path` on the folder (every check included), then the name of every
tensor (``TensorFile.tensor_names``, as the app's tree lists them): the same list of names the reference makes.
"""
from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ztviewer.codec.multifile import open_path

from .common import best_of, result

SHARDS = {False: 1000, True: 200}


def _hf_checkpoint(tmpdir: Path, quick: bool) -> tuple[Path, Path, list[Path]]:
    """``n`` shards of 4 float16 [16, 16] tensors each, with their index (written once per run)."""
    from safetensors.numpy import save_file

    n = SHARDS[quick]
    folder = tmpdir / f"multifile_hf_{n}"
    index = folder / "model.safetensors.index.json"
    paths = [folder / f"model-{i + 1:05d}-of-{n:05d}.safetensors" for i in range(n)]
    if not index.exists():
        folder.mkdir(parents=True, exist_ok=True)
        weight_map = {}
        for i, path in enumerate(paths):
            tensors = {f"model.layers.{i}.{k}.weight": np.full((16, 16), i, np.float16) for k in "qkvo"}
            save_file(tensors, str(path), metadata={"format": "pt"})
            weight_map.update(dict.fromkeys(tensors, path.name))
        index.write_text(json.dumps({"metadata": {"total_size": n * 4 * 512}, "weight_map": weight_map}))
    return folder, index, paths


def _spark_dataset(tmpdir: Path, quick: bool) -> tuple[Path, Path, list[Path]]:
    """``n`` batch-mode shards of 8 samples: ``image`` F32 [8, 3, 4, 4] and ``label`` I64 [8]."""
    from safetensors.numpy import save_file

    n = SHARDS[quick]
    folder = tmpdir / f"multifile_spark_{n}"
    manifest = folder / "dataset_manifest.json"
    paths = [folder / f"part-{i:05d}-0000-{uuid.UUID(int=i)}.safetensors" for i in range(n)]
    if not manifest.exists():
        folder.mkdir(parents=True, exist_ok=True)
        for path in paths:
            save_file({"image": np.zeros((8, 3, 4, 4), np.float32), "label": np.zeros(8, np.int64)}, str(path))
        shards = [{"shard_path": p.name, "samples_count": 8, "bytes": p.stat().st_size} for p in paths]
        manifest.write_text(json.dumps({
            "format_version": "1.0", "safetensors_version": "1.0", "total_samples": 8 * n,
            "total_bytes": sum(s["bytes"] for s in shards), "shards": shards,
            "schema": {"image": {"dtype": "F32", "shape": [8, 3, 4, 4]}, "label": {"dtype": "I64", "shape": [8]}}}))
    return folder, manifest, paths


def _ours(folder: Path) -> Callable[[], list[str]]:
    def run() -> list[str]:
        tf = open_path(folder)
        try:
            return tf.tensor_names()
        finally:
            tf.close()
    return run


def _reference(listing: Path, paths: list[Path]) -> Callable[[], list[str]]:
    """The shards are the ones the index / manifest names (the loader learns them from it, as ours does)."""
    from safetensors import safe_open

    folder = str(listing.parent)

    def shard_names(doc: dict) -> list[str]:
        if "weight_map" in doc:
            return sorted(set(doc["weight_map"].values()))
        return [entry["shard_path"] for entry in doc["shards"]]

    def run() -> list[str]:
        with open(listing, "rb") as f:
            doc = json.load(f)
        keys: list[str] = []
        for name in shard_names(doc):
            with safe_open(os.path.join(folder, name), "np") as st:
                keys.extend(st.keys())
        return keys
    assert sorted(os.path.join(folder, n) for n in shard_names(json.loads(listing.read_text()))) == \
        sorted(map(str, paths))
    return run


def _sanity(folder: Path, expected: int) -> str:
    tf = open_path(folder)
    try:
        problems = [str(p) for p in tf.all_problems()]
        if not tf.readable or problems or len(tf.tensors) != expected:
            return f"; NOT CLEAN: {len(tf.tensors)} tensors, {problems[:2]}"
        return ""
    finally:
        tf.close()


def _bench(name: str, folder: Path, listing: Path, paths: list[Path], per_shard: int, quick: bool) -> dict:
    import safetensors

    ours, reference = _ours(folder), _reference(listing, paths)
    if sorted(ours()) != sorted(reference()):
        return result(name, 1.0, 1.0, "<= 1.2", passed=False, note="NOT THE SAME NAMES on both sides")
    ours_s, ref_s = best_of(ours, reference, repeats=3 if quick else 9)
    note = (f"{len(paths):,} shards × {per_shard} tensors; reference: json.load({listing.name}) + safetensors "
            f"{safetensors.__version__} safe_open(shard, 'np').keys() per shard; ours: open_path (every set check "
            "included) + tensor_names()"
            + _sanity(folder, len(paths) * per_shard))
    return result(name, ours_s, ref_s, "<= 1.2", note=note, profile=ours)


def run(tmpdir: Path, quick: bool) -> list[dict]:
    hf_folder, index, hf_paths = _hf_checkpoint(tmpdir, quick)
    spark_folder, manifest, spark_paths = _spark_dataset(tmpdir, quick)
    n = SHARDS[quick]
    return [
        _bench(f"open {n:,}-shard HF checkpoint folder", hf_folder, index, hf_paths, 4, quick),
        _bench(f"open {n:,}-shard spark dataset folder", spark_folder, manifest, spark_paths, 2, quick),
    ]


if __name__ == "__main__":  # pragma: no cover - manual run
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for row in run(Path(tmp), quick=os.environ.get("QUICK") == "1"):
            print({k: v for k, v in row.items() if not k.startswith("_")})
