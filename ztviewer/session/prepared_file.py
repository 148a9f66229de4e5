"""What the open worker prepares for a file's tab besides parsing it, so the GUI thread does not: the byte layout
(:func:`~.file_layout.build_layout`) and the tensors' natural name order (the tree's default order: sorting
100,000 names by :func:`~.formatting.natural_key` takes about a second)."""
from __future__ import annotations

from dataclasses import dataclass

from ztviewer.codec import TensorFile
from ztviewer.codec.tensor_queries import tensor_names

from .file_layout import FileLayout, build_layout
from .tree_columns import natural_order


@dataclass(frozen=True, slots=True)
class PreparedFile:
    layout: FileLayout
    name_order: list[int]      # row -> tensor position, by name in natural order


def prepare_file(tf: TensorFile) -> PreparedFile:
    return PreparedFile(build_layout(tf), natural_order(tensor_names(tf.tensors)))
