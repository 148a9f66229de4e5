"""Any decodable tensor as one dense array, whatever its layout: the dispatcher above :mod:`.decode` (dense
components), :mod:`.sparse`, :mod:`.tt` and the zTensor v2 block formats."""
from __future__ import annotations

from typing import Any

import numpy as np

from .decode import dense_array
from .decode_rules import decode_limit
from .dtypes import DTYPES
from .errors import UnsupportedLayout
from .model import Tensor, TensorFile
from .sparse import load_sparse
from .tt import reconstruct, tt_cores


def to_dense(tf: TensorFile, tensor: Tensor, *, raw_bits: bool = False, **kw: Any) -> np.ndarray:
    """Any decodable layout as a dense array: dense, sparse_csr / sparse_coo (densified), tensor_train
    (reconstructed). Structural-only layouts raise :class:`UnsupportedLayout`.

    The array is memory of its own, valid whatever happens to the file later. ``mapped=True`` makes raw dense
    data a zero-copy view of the file's map instead, only as good as the file (see
    :func:`.decode.component_bytes`)."""
    if tensor.layout == "dense":
        return dense_array(tf, tensor, raw_bits=raw_bits, **kw)
    if tensor.layout in ("sparse_csr", "sparse_coo"):
        return load_sparse(tf, tensor, **kw).to_dense(raw_bits=raw_bits)
    if tensor.layout == "tensor_train":
        return reconstruct(tt_cores(tf, tensor), limit=decode_limit() // DTYPES[tensor.dtype].itemsize)
    if tensor.layout == "zt.mx/1":
        from .formats.zt_v2.mx import mx_dense  # the zTensor v2 reader's own, loaded with it

        return mx_dense(tf, tensor, **kw)
    reason = tensor.extra_value("structural")
    if reason:
        raise UnsupportedLayout(reason, rule="layouts ztviewer decodes: dense, sparse, tensor train, zt.mx/1",
                                tensor=tensor.name)
    raise UnsupportedLayout(f"layout {tensor.layout!r} can be shown structurally but not decoded",
                            rule="supported layouts: dense, sparse_csr, sparse_coo, tensor_train",
                            tensor=tensor.name)
