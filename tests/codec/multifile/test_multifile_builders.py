"""Builders for multi-file sets, written with the real ``safetensors`` library (no tests here).

``hf_checkpoint`` writes ``model-0000k-of-0000n.safetensors`` shards and ``model.safetensors.index.json``;
``spark_dataset`` writes batch-mode or KV-mode ``part-…`` shards and ``dataset_manifest.json``. Both take
overrides so a test can break exactly one thing.
"""
from __future__ import annotations

import json
import struct
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import save_file

SENTINEL: Any = object()


def hf_arrays(n_shards: int = 3) -> dict[str, dict[str, np.ndarray]]:
    """Shard file name → its tensors: two per shard, distinct values."""
    shards = {}
    for i in range(n_shards):
        shards[f"model-{i + 1:05d}-of-{n_shards:05d}.safetensors"] = {
            f"model.layers.{i}.weight": (np.arange(12, dtype=np.float32).reshape(3, 4) + 100 * i),
            f"model.layers.{i}.bias": np.full(4, i, dtype=np.float16),
        }
    return shards


def hf_checkpoint(folder: Path, shards: dict[str, dict[str, np.ndarray]] | None = None, *,
                  weight_map: dict[str, str] | None = None, total_size: Any = SENTINEL,
                  skip_write: tuple[str, ...] = (), index_name: str = "model.safetensors.index.json") -> Path:
    """Write the shards (except ``skip_write``) and the index; returns the index path."""
    folder.mkdir(parents=True, exist_ok=True)
    shards = hf_arrays() if shards is None else shards
    for name, tensors in shards.items():
        if name not in skip_write:
            save_file(tensors, str(folder / name), metadata={"format": "pt"})
    if weight_map is None:
        weight_map = {t: name for name, tensors in shards.items() for t in tensors}
    if total_size is SENTINEL:
        total_size = sum(a.nbytes for tensors in shards.values() for a in tensors.values())
    metadata = {} if total_size is None else {"total_size": total_size}
    index = folder / index_name
    index.write_text(json.dumps({"metadata": metadata, "weight_map": dict(sorted(weight_map.items()))}, indent=2))
    return index


def spark_name(task: int, shard: int = 0) -> str:
    return f"part-{task:05d}-{shard:04d}-{uuid.UUID(int=task * 1000 + shard + 1)}.safetensors"


def spark_dataset(folder: Path, n_shards: int = 3, rows: int = 4, *, mode: str = "batch",
                  names: list[str] | None = None, schema: Any = SENTINEL, shard_tensors: dict[int, dict] | None = None,
                  manifest: dict[str, Any] | None = None, entry_overrides: dict[int, dict] | None = None,
                  skip_write: tuple[int, ...] = ()) -> Path:
    """A safetensors-spark output folder: ``image`` F32 [3, 2] and ``label`` I64 [] per sample.

    Batch mode: each shard holds ``image`` [rows, 3, 2] and ``label`` [rows]; KV mode: ``key{r}/image`` and
    ``key{r}/label`` per row. ``shard_tensors[i]`` replaces shard ``i``'s tensors, ``entry_overrides[i]``
    patches its manifest entry, ``manifest`` patches the top level. Returns the manifest path.
    """
    folder.mkdir(parents=True, exist_ok=True)
    names = names or [spark_name(i) for i in range(n_shards)]
    entries = []
    for i, name in enumerate(names):
        if shard_tensors and i in shard_tensors:
            tensors = shard_tensors[i]
        elif mode == "batch":
            tensors = {"image": np.full((rows, 3, 2), i, np.float32), "label": np.arange(rows, dtype=np.int64)}
        else:
            tensors = {}
            for r in range(rows):
                tensors[f"row{i}-{r}/image"] = np.full((3, 2), r, np.float32)
                tensors[f"row{i}-{r}/label"] = np.array(r, dtype=np.int64)
        if i not in skip_write:
            save_file(tensors, str(folder / name))
        size = (folder / name).stat().st_size if i not in skip_write else 1000
        entry = {"shard_path": name, "samples_count": rows, "bytes": size}
        entry.update((entry_overrides or {}).get(i, {}))
        entries.append(entry)
    if schema is SENTINEL:
        schema = {"image": {"dtype": "F32", "shape": [rows, 3, 2]}, "label": {"dtype": "I64", "shape": [rows]}}
    doc: dict[str, Any] = {
        "format_version": "1.0", "safetensors_version": "1.0",
        "total_samples": sum(e["samples_count"] for e in entries if isinstance(e.get("samples_count"), int)),
        "total_bytes": sum(e["bytes"] for e in entries if isinstance(e.get("bytes"), int)),
        "shards": entries,
    }
    if schema is not None:
        doc["schema"] = schema
    doc.update(manifest or {})
    path = folder / "dataset_manifest.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


def raw_safetensors(path: Path, header: str | bytes, data: bytes = b"") -> Path:
    """A safetensors file with a hand-written header (for malformed or unusual headers)."""
    text = header.encode() if isinstance(header, str) else header
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path
