"""Tensor sets stored as several safetensors files, opened as one :class:`TensorFile`.

- sharded Hugging Face checkpoints (``*.safetensors.index.json`` + shards): :func:`read_hf_index`;
- safetensors-spark datasets (``dataset_manifest.json`` + ``part-*.safetensors``): :func:`read_spark_dataset`;
- :func:`open_path` takes whatever the user pointed at (folder, JSON, shard, plain file) and dispatches.

Only headers are read; each tensor keeps its shard's source in ``source``.
"""
from .detect import find_set, open_path
from .hf_sharded import read_hf_index
from .shard_source import ShardSource, SourcePool
from .shards import Shard, TensorSet
from .spark_dataset import read_spark_dataset

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
