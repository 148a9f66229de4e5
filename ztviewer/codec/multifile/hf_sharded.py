"""Sharded Hugging Face checkpoints: ``model.safetensors.index.json`` and the shards it maps.

The index is ``{"metadata": {"total_size": N, …}, "weight_map": {tensor: shard file, …}}``. The set lists
the tensors shard by shard; a mapped tensor its shard lacks is shown as a placeholder with an error.
Checks: every mapped shard exists and is readable; every mapped tensor is in its shard (error); a tensor in
a shard but not in the map (warning: loaders that follow the map skip it); ``total_size`` equals the sum of
the tensors' data bytes (warning: nothing loads by it, but it is what the Hub shows as the model size).
"""
from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from ..errors import CodecError, SchemaError
from ..gc_pause import building_many
from ..model import Tensor
from .set_table import SetTable
from .shard_source import SourcePool
from .shards import (
    CancelCheck,
    ProblemLog,
    Progress,
    Shard,
    TensorSet,
    load_shards,
    placeholder,
    read_json,
    report_outside,
    report_unusable,
    sample_names,
    unreadable_set,
)

FORMAT = "safetensors-sharded"
VARIANT = "hf-index"
RULE_MAP = "weight_map maps tensor names to shard file names"
RULE_IN_SHARD = "every tensor in weight_map is in the shard it is mapped to"
RULE_UNMAPPED = "every tensor in a shard is listed in weight_map"
RULE_TOTAL = "metadata.total_size is the sum of the tensors' data bytes"
_name = attrgetter("name")
_STR = {str}


def is_hf_index(doc: Any) -> bool:
    """Whether a parsed JSON document looks like a sharded-checkpoint index."""
    return isinstance(doc, dict) and "weight_map" in doc


def parse_index(doc: Any, issues: ProblemLog) -> tuple[dict[str, str], dict[str, Any]]:
    """``weight_map`` (valid entries only) and ``metadata``; raises :class:`SchemaError` when unusable."""
    if not isinstance(doc, dict):
        raise SchemaError(f"the index must be a JSON object, got {type(doc).__name__}", rule=RULE_MAP)
    raw_map = doc.get("weight_map")
    if not isinstance(raw_map, dict):
        what = "missing" if raw_map is None else f"a {type(raw_map).__name__}, not an object"
        raise SchemaError(f"'weight_map' is {what}", rule=RULE_MAP)
    weight_map: dict[str, str] = raw_map
    if not set(map(type, raw_map.values())) <= _STR or "" in raw_map.values():
        weight_map = {}
        for name, shard in raw_map.items():
            if isinstance(shard, str) and shard:
                weight_map[name] = shard
            else:
                issues.error(f"weight_map maps the tensor to {shard!r}, not to a shard file name; it is skipped",
                          RULE_MAP, tensor=name)
    if not weight_map:
        issues.warning("weight_map lists no tensors", RULE_MAP)
    metadata = doc.get("metadata", {})
    if not isinstance(metadata, dict):
        issues.warning(f"'metadata' should be an object, got {type(metadata).__name__}; it is ignored", RULE_TOTAL)
        metadata = {}
    for key in sorted(set(doc) - {"weight_map", "metadata"}):
        issues.warning(f"unknown top-level key {key!r} in the index is ignored", "index keys are metadata, weight_map")
    return weight_map, metadata


def read_hf_index(
    index_path: str | os.PathLike[str], progress: Progress | None = None, cancelled: CancelCheck | None = None,
    doc: Any = None,
) -> TensorSet:
    """Open a sharded checkpoint from its index file: one set across all shards, headers only.

    Tensors are listed shard by shard (shards sorted by name), each in its header's order. ``doc`` is the
    index already parsed, if the caller has it.
    """
    path = os.path.abspath(index_path)
    issues = ProblemLog()
    folder = os.path.dirname(path)
    pool = SourcePool()
    with building_many():
        try:
            weight_map, metadata = parse_index(read_json(path) if doc is None else doc, issues)
        except CodecError as exc:
            return unreadable_set(path, FORMAT, exc)
        shards, table = load_shards(folder, sorted(set(weight_map.values())), pool, progress, cancelled)
        tf = TensorSet(path=path, format=FORMAT, variant=VARIANT, attributes=dict(metadata),
                       problems=issues.problems, source=None, shards=shards, pool=pool)
        if table is not None and _as_mapped(table, weight_map, shards):
            tf.tensors = table
        elif _assemble(tf, weight_map, issues):
            tf.renumber()
        _check_total_size(metadata, weight_map, tf.tensors, shards, issues)
        tf.extra.update(folder=folder, shard_count=len(shards), shards=[s.describe() for s in shards])
    return tf


def _as_mapped(table: SetTable, weight_map: dict[str, str], shards: list[Shard]) -> bool:
    """Whether the table of every shard's tensors is exactly what ``weight_map`` maps (each tensor once, in the shard
    it is mapped to) and every shard lies in the set's folder: then it is the set's list, with nothing to report."""
    if len(table) != len(weight_map) or any(s.outside is not None or not s.readable for s in shards):
        return False
    return dict(zip(table.names, table.shards[0])) == weight_map


def _assemble(tf: TensorSet, weight_map: dict[str, str], issues: ProblemLog) -> bool:
    """Fill ``tf.tensors`` shard by shard and check them against the map; true if placeholders were added."""
    mapped: defaultdict[str, list[str]] = defaultdict(list)
    for name, shard_name in weight_map.items():
        mapped[shard_name].append(name)
    tensors = tf.tensors
    added = False
    for shard in tf.shards:
        names = mapped[shard.name]
        report_outside(shard, issues)
        if not shard.usable:
            report_unusable(shard, issues, f"{len(names)} mapped tensor(s) cannot be read: {sample_names(names)}")
            continue
        issues.adopt_shard_problems(shard)
        tensors.extend(shard.tensors)
        held = set(map(_name, shard.tensors))
        if len(held) == len(names) and held.issuperset(names):
            continue
        for name in names:
            if name not in held:
                tensor = placeholder(name, shard)
                issues.error("weight_map maps this tensor to the shard, which does not contain it", RULE_IN_SHARD,
                          shard=shard, tensor=name, target=tensor)
                tensors.append(tensor)
                added = True
        wanted = set(names)
        for tensor in shard.tensors:
            if tensor.name not in wanted:
                elsewhere = weight_map.get(tensor.name)
                where = (f"weight_map maps it to shard {elsewhere!r}" if elsewhere is not None
                         else "weight_map does not list it; loaders that follow the map ignore it")
                issues.warning(f"the shard holds this tensor but {where}", RULE_UNMAPPED, shard=shard,
                            tensor=tensor.name, target=tensor)
    return added


def _check_total_size(metadata: dict[str, Any], weight_map: dict[str, str], tensors: Sequence[Tensor],
                      shards: list[Shard], issues: ProblemLog) -> None:
    if "total_size" not in metadata:
        return
    declared = metadata["total_size"]
    if isinstance(declared, float) and declared.is_integer():
        declared = int(declared)
    if not isinstance(declared, int) or isinstance(declared, bool) or declared < 0:
        issues.warning(f"metadata.total_size is {declared!r}, not a byte count", RULE_TOTAL)
        return
    if not all(s.usable for s in shards):
        return  # the missing shard is the error; its bytes cannot be counted
    if declared == sum(s.data_bytes for s in shards) and not any(s.problems for s in shards):
        return
    nbytes = numel = count = 0
    for t in tensors:
        data = t.components.get("data")
        if data is not None and weight_map.get(t.name) == t.shard:
            nbytes += data.length
            numel += t.numel
            count += 1
    if declared == nbytes:
        return
    hint = " (that is the parameter count, not bytes)" if declared == numel and numel else ""
    issues.warning(f"metadata.total_size is {declared:,} but the {count} mapped tensors' data add up to "
                f"{nbytes:,} bytes{hint}", RULE_TOTAL)
