"""Python code that loads one tensor of an open file, for pasting into a notebook ("Copy as code").

Each snippet binds ``array`` to the tensor as a numpy array. One uses the format's own library when that library
can express the tensor (``safetensors.safe_open`` for .safetensors, ``ztensor.open`` from ztensor 2.x for zTensor
v2); one uses :mod:`ztviewer.codec`, which reads every format and generation ztviewer opens (v0.1, v1.x, v2,
.safetensors, .blz, multi-file sets) and every decodable layout (sparse tensors are densified, tensor trains
reconstructed). bfloat16 comes out as float32 in both (numpy has no bfloat16). Paths and names are written as
Python literals (``repr``), so any character in them is safe. No Qt here.
"""
from __future__ import annotations

from dataclasses import dataclass

from ztviewer.codec.dtypes import DTYPES
from ztviewer.codec.formats.magic import ZT_V2_FORMAT
from ztviewer.codec.model import Tensor, TensorFile

CODEC = "ztviewer.codec"
SAFETENSORS = "safetensors"
ZTENSOR = "ztensor"

#: dtypes numpy holds natively (what safetensors' numpy framework and DLPack export can give).
NUMPY_DTYPES = frozenset({"float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint64", "uint32",
                          "uint16", "uint8", "bool", "complex64", "complex128"})
DECODABLE_LAYOUTS = ("dense", "sparse_csr", "sparse_coo", "tensor_train")


@dataclass(frozen=True, slots=True)
class Snippet:
    """``code`` binds ``array``; ``library`` is what it imports; ``title`` labels the menu entry."""

    library: str
    title: str
    code: str


def tensor_ref(tf: TensorFile, tensor: Tensor) -> str:
    """How the codec snippet names the tensor: by name, or by manifest position when an earlier tensor has the
    same name (``TensorFile.tensor`` returns the first occurrence)."""
    names = tf.tensor_names()
    first = names.index(tensor.name) if tensor.name in names else -1
    if first == tensor.index:
        return f"tf.tensor({tensor.name!r})"
    return f"tf.tensors[{tensor.index}]"


def codec_snippet(tf: TensorFile, tensor: Tensor) -> Snippet | None:
    if tensor.layout not in DECODABLE_LAYOUTS:
        return None
    code = (f"from ztviewer.codec import open_file\n"
            f"from ztviewer.codec.dense import to_dense\n\n"
            f"tf = open_file({tf.path!r})\n"
            f"array = to_dense(tf, {tensor_ref(tf, tensor)})\n")
    what = "densified" if tensor.layout.startswith("sparse") else "reconstructed" \
        if tensor.layout == "tensor_train" else ""
    return Snippet(CODEC, f"ztviewer.codec ({what})" if what else "ztviewer.codec", code)


def _unique_name(tf: TensorFile, tensor: Tensor) -> bool:
    return tf.tensor_names().count(tensor.name) == 1


def safetensors_snippet(tf: TensorFile, tensor: Tensor) -> Snippet | None:
    """``safe_open(path, "numpy")`` for dtypes numpy holds (not bfloat16 / float8: the library refuses them)."""
    if tf.format != "safetensors" or tf.variant != "safetensors" or tensor.layout != "dense" \
            or tensor.dtype not in NUMPY_DTYPES or not _unique_name(tf, tensor):
        return None
    code = (f"from safetensors import safe_open\n\n"
            f"with safe_open({tf.path!r}, framework=\"numpy\") as f:\n"
            f"    array = f.get_tensor({tensor.name!r})\n")
    return Snippet(SAFETENSORS, "safetensors (safe_open)", code)


def ztensor_snippet(tf: TensorFile, tensor: Tensor) -> Snippet | None:
    """``ztensor.open`` (ztensor 2.x reads zTensor v2 only); numpy dtypes through DLPack, bfloat16 widened."""
    if tf.format != ZT_V2_FORMAT or tf.variant != "v2" or tensor.layout != "dense" or not _unique_name(tf, tensor):
        return None
    if tensor.dtype in NUMPY_DTYPES:
        body = "array = np.from_dlpack(t)"
    elif tensor.dtype == "bfloat16":
        body = ("bits = np.frombuffer(t.tobytes(), dtype=\"<u2\").reshape(t.shape)\n"
                "array = (bits.astype(np.uint32) << 16).view(np.float32)  # bfloat16 → float32, exact")
    else:
        return None
    code = (f"import numpy as np\nimport ztensor\n\n"
            f"t = ztensor.open({tf.path!r})[{tensor.name!r}]\n{body}\n")
    return Snippet(ZTENSOR, "ztensor 2.x (ztensor.open)", code)


def snippets(tf: TensorFile, tensor: Tensor) -> list[Snippet]:
    """Every snippet that loads ``tensor``: the format's own library first (when it can), then the codec."""
    found = (safetensors_snippet(tf, tensor), ztensor_snippet(tf, tensor), codec_snippet(tf, tensor))
    return [snippet for snippet in found if snippet is not None]


def dtype_note(tensor: Tensor) -> str:
    """What the loaded array's dtype is, in one line (for a tooltip)."""
    info = DTYPES.get(tensor.dtype)
    if info is not None and info.needs_conversion:
        return f"{tensor.dtype} is loaded as float32 (numpy has no {tensor.dtype})"
    return f"loaded as {tensor.dtype}"
