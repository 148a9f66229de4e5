"""Tensor sets stored as several safetensors files, opened as one :class:`TensorFile`.

- sharded Hugging Face checkpoints (``*.safetensors.index.json`` + shards): :func:`read_hf_index`;
- safetensors-spark datasets (``dataset_manifest.json`` + ``part-*.safetensors``): :func:`read_spark_dataset`;
- :func:`open_path` takes whatever the user pointed at (folder, JSON, shard, plain file) and dispatches.

Only headers are read; each tensor keeps its shard's source in ``source``. Importing this package loads
:mod:`.detect` alone; the set readers load when a set is opened (or one of their names is taken from here).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .detect import find_set, open_path

if TYPE_CHECKING:    # the names below load on first use (see __getattr__)
    from .hf_sharded import read_hf_index
    from .shard_source import ShardSource, SourcePool
    from .shards import Shard, TensorSet
    from .spark_dataset import read_spark_dataset

_LAZY = {"read_hf_index": "hf_sharded", "ShardSource": "shard_source", "SourcePool": "shard_source",
         "Shard": "shards", "TensorSet": "shards", "read_spark_dataset": "spark_dataset"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


__all__ = [
           "Shard",
           "ShardSource",
           "SourcePool",
           "TensorSet",
           "find_set",
           "open_path",
           "read_hf_index",
           "read_spark_dataset",
]
