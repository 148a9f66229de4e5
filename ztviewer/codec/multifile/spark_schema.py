"""A safetensors-spark shard's tensors against the manifest schema, and the samples the shard holds.

Batch mode (``batch_size``): each shard holds one tensor per column, named as the column, of shape
``[rows, *per_sample_shape]``; the shard's sample count is that shared leading dimension. KV mode
(``name_col``): one tensor per row and column, named ``{key}{separator}{column}``, of the per-sample shape;
the sample count is the number of distinct keys. The schema's ``shape`` may include the batch dimension
(``[1000, 3, 224, 224]`` as in the spec's example) or not; both are accepted, only per-sample dimensions
are compared, since the last batch of a task may be shorter.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..dtypes import SAFETENSORS_TO_CANONICAL
from ..model import Tensor
from .shard_view import layout_of
from .shards import ProblemLog, Shard, sample_names

SCHEMA_DTYPES = ("F16", "F32", "F64", "BF16", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64")
RULE_SCHEMA = "each shard's tensors have the schema's dtype and per-sample shape"
RULE_SAMPLES = "samples_count is the number of samples the shard holds"
_UNSEEN = object()
_SPELLING = {canonical: st for st, canonical in SAFETENSORS_TO_CANONICAL.items()}


def st_dtype(canonical: str) -> str:
    """The safetensors spelling of a canonical dtype (``float32`` → ``F32``)."""
    return _SPELLING.get(canonical, canonical)


def parse_schema(raw: Any, issues: ProblemLog) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The manifest's ``schema`` as ``{name: (dtype, shape)}``; invalid entries are reported and dropped."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        issues.error(f"'schema' must be an object, got {type(raw).__name__}; it is ignored", RULE_SCHEMA)
        return {}
    schema: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, entry in raw.items():
        dtype = entry.get("dtype") if isinstance(entry, dict) else None
        shape = entry.get("shape") if isinstance(entry, dict) else None
        if dtype not in SCHEMA_DTYPES:
            issues.error(f"schema entry {name!r} has dtype {dtype!r}; expected one of {', '.join(SCHEMA_DTYPES)}",
                      "schema dtype pattern", tensor=name)
        elif not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
            issues.error(f"schema entry {name!r} has shape {shape!r}; expected a list of non-negative integers",
                      "schema shape is a list of integers", tensor=name)
        else:
            schema[name] = (dtype, tuple(shape))
    return schema


class SchemaChecker:
    """Checks shards against one schema, remembering the verdict for shard layouts already found clean.

    The shards of a dataset nearly all hold the same names, dtypes and shapes; a layout seen clean once
    needs no second look.
    """

    def __init__(self, schema: dict[str, tuple[str, tuple[int, ...]]]) -> None:
        self.schema = schema
        self._clean: dict[tuple[Any, ...], int | None] = {}

    def check(self, shard: Shard, issues: ProblemLog) -> int | None:
        """The shard's sample count (``None`` if unknown), logging every disagreement with the schema."""
        layout = layout_of(shard.tensors)
        known = self._clean.get(layout, _UNSEEN)
        if known is not _UNSEEN:
            return known  # type: ignore[return-value]
        before = shard.problems
        samples = check_shard(shard, self.schema, issues)
        if shard.problems == before:
            self._clean[layout] = samples
        return samples


def check_shard(shard: Shard, schema: dict[str, tuple[str, tuple[int, ...]]], issues: ProblemLog) -> int | None:
    """Check the shard's tensors against ``schema``; return the samples it holds (``None`` if unknown)."""
    tensors = shard.tensors
    if not tensors:
        return 0
    if not schema:
        return _batch_rows(shard, tensors, issues, quiet=True)
    if any(t.name in schema for t in tensors):
        return _check_batch(shard, tensors, schema, issues)
    return _check_kv(shard, tensors, schema, issues)


def _check_batch(shard: Shard, tensors: Sequence[Tensor], schema: dict[str, tuple[str, tuple[int, ...]]],
                 issues: ProblemLog) -> int | None:
    for t in tensors:
        if t.name not in schema:
            issues.error("the tensor is not in the manifest schema", RULE_SCHEMA, shard=shard, tensor=t.name, target=t)
        elif not t.shape:
            issues.error("a batch-mode tensor needs a leading sample dimension, but it is a scalar", RULE_SCHEMA,
                      shard=shard, tensor=t.name, target=t)
        else:
            dtype, shape = schema[t.name]
            want = shape[1:] if len(shape) == len(t.shape) else shape if len(shape) == len(t.shape) - 1 else None
            _compare(shard, t, dtype, shape, want, t.shape[1:], issues)
    held = {t.name for t in tensors}
    absent = [name for name in schema if name not in held]
    if absent:
        issues.error(f"the shard lacks schema tensor(s) {sample_names(absent)}", RULE_SCHEMA, shard=shard)
    return _batch_rows(shard, [t for t in tensors if t.name in schema], issues, quiet=False)


def _batch_rows(shard: Shard, tensors: Sequence[Tensor], issues: ProblemLog, quiet: bool) -> int | None:
    rows = {t.name: t.shape[0] for t in tensors if t.shape}
    counts = set(rows.values())
    if len(counts) == 1 and len(rows) == len(tensors):
        return counts.pop()
    if len(counts) > 1 and not quiet:
        shown = ", ".join(f"{name!r} has {n}" for name, n in list(rows.items())[:4])
        issues.error(f"the tensors disagree on the number of samples (leading dimension): {shown}", RULE_SAMPLES,
                  shard=shard)
    return None


def _check_kv(shard: Shard, tensors: Sequence[Tensor], schema: dict[str, tuple[str, tuple[int, ...]]],
              issues: ProblemLog) -> int | None:
    columns = sorted(schema, key=len, reverse=True)
    keys: set[str] = set()
    for t in tensors:
        column = next((c for c in columns if len(t.name) > len(c) and t.name.endswith(c)), None)
        if column is None:
            issues.error("the tensor matches no manifest schema entry (neither a column name nor "
                      "'{key}{separator}{column}')", RULE_SCHEMA, shard=shard, tensor=t.name, target=t)
            continue
        keys.add(t.name[:-len(column)])
        dtype, shape = schema[column]
        want = shape if len(shape) == len(t.shape) else shape[1:] if len(shape) == len(t.shape) + 1 else None
        _compare(shard, t, dtype, shape, want, t.shape, issues, column)
    return len(keys)


def _compare(shard: Shard, t: Tensor, dtype: str, shape: tuple[int, ...], want: tuple[int, ...] | None,
             per_sample: tuple[int, ...], issues: ProblemLog, column: str | None = None) -> None:
    entry = f"schema entry {column!r}" if column else "the manifest schema"
    if SAFETENSORS_TO_CANONICAL.get(dtype) != t.dtype:
        issues.error(f"dtype is {st_dtype(t.dtype)} but {entry} says {dtype}", RULE_SCHEMA, shard=shard,
                  tensor=t.name, target=t)
    if want is None or tuple(want) != tuple(per_sample):
        issues.error(f"per-sample shape {list(per_sample)} (tensor shape {list(t.shape)}) does not match {entry}'s "
                  f"shape {list(shape)}", RULE_SCHEMA, shard=shard, tensor=t.name, target=t)
