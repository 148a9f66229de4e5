"""``_tensor_index.parquet`` of a safetensors-spark dataset against the shards' headers.

Columns: ``tensor_key`` (string), ``file_name`` (shard file name), ``shape`` (list of int), ``dtype``
(string). Reading Parquet needs pyarrow (the optional extra ``ztviewer[parquet]``); without it the index is
reported as not checked, with a warning, and nothing fails.
"""
from __future__ import annotations

import os
from typing import Any

from ..model import Tensor
from .shards import ProblemLog, Shard, sample_names
from .spark_schema import st_dtype

INDEX_NAME = "_tensor_index.parquet"
COLUMNS = ("tensor_key", "file_name", "shape", "dtype")
RULE_INDEX = "_tensor_index.parquet lists every shard tensor with its file, shape and dtype"
MAX_ROW_PROBLEMS = 20


def read_index_rows(path: str, issues: ProblemLog) -> dict[str, list[Any]] | None:
    """The index's columns as lists, or ``None`` (with a problem logged) when it cannot be read."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        issues.warning(f"{INDEX_NAME} is present but was not checked: reading Parquet needs pyarrow "
                    "(pip install 'ztviewer[parquet]')", RULE_INDEX)
        return None
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError and others for a damaged file
        issues.error(f"{INDEX_NAME} cannot be read: {exc}", RULE_INDEX)
        return None
    absent = [c for c in COLUMNS if c not in table.column_names]
    if absent:
        issues.error(f"{INDEX_NAME} lacks column(s) {', '.join(absent)} (it has {', '.join(table.column_names)})",
                  RULE_INDEX)
        return None
    return {c: table.column(c).to_pylist() for c in COLUMNS}


def check_tensor_index(path: str, shards: list[Shard], issues: ProblemLog) -> dict[str, Any] | None:
    """Compare the index with the shards' tensors; return a summary for the set's ``extra``."""
    rows = read_index_rows(path, issues)
    if rows is None:
        return None
    held: dict[str, tuple[Shard, dict[str, Tensor]]] = {}
    for shard in shards:
        if shard.usable:
            tensors = {t.name: t for t in shard.tensors}
            held[shard.name] = held[os.path.basename(shard.name)] = (shard, tensors)
    listed: set[tuple[str, str]] = set()
    unknown: dict[str, int] = {}
    reported = 0
    for key, file_name, shape, dtype in zip(*(rows[c] for c in COLUMNS)):
        entry = held.get(file_name) or held.get(os.path.basename(str(file_name)))
        if entry is None:
            unknown[str(file_name)] = unknown.get(str(file_name), 0) + 1
            continue
        shard, tensors = entry
        listed.add((shard.name, key))
        problem = _row_problem(tensors.get(key), shape, dtype)
        if problem is not None:
            reported += 1
            if reported <= MAX_ROW_PROBLEMS:
                issues.error(f"{INDEX_NAME} row for this tensor: {problem}", RULE_INDEX, shard=shard, tensor=key)
    if reported > MAX_ROW_PROBLEMS:
        issues.error(f"{INDEX_NAME}: {reported - MAX_ROW_PROBLEMS} more rows disagree with the shards", RULE_INDEX)
    for file_name, count in unknown.items():
        issues.error(f"{INDEX_NAME} has {count} row(s) for file {file_name!r}, which is not a shard of the manifest "
                  "(or cannot be read)", RULE_INDEX)
    unlisted = [f"{name}:{t}" for name, (shard, tensors) in held.items() if name == shard.name
                for t in tensors if (name, t) not in listed]
    if unlisted:
        issues.warning(f"{INDEX_NAME} does not list {len(unlisted)} shard tensor(s): {sample_names(unlisted)}",
                    RULE_INDEX)
    return {"path": path, "rows": len(rows["tensor_key"]), "unlisted": len(unlisted)}


def _row_problem(tensor: Tensor | None, shape: Any, dtype: Any) -> str | None:
    if tensor is None:
        return "the shard has no such tensor"
    actual_dtype = st_dtype(tensor.dtype)
    if dtype != actual_dtype:
        return f"dtype {dtype!r}, but the shard header says {actual_dtype!r}"
    try:
        same = shape is not None and [int(d) for d in shape] == list(tensor.shape)
    except (TypeError, ValueError):
        same = False
    if not same:
        return f"shape {shape!r}, but the shard header says {list(tensor.shape)}"
    return None
