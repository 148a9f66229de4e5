"""A third-party format package written to a folder, as ``pip install`` would leave it: a module and a
``.dist-info`` whose ``entry_points.txt`` declares the format in the ``ztviewer.formats`` group."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

TOY_MODULE = '''
"""Toy tensors: b"TOY1", u32 count, then count float32 values (one tensor named "values")."""
import struct

from ztviewer.codec.errors import TruncatedFile
from ztviewer.codec.format_spec import FormatSpec
from ztviewer.codec.model import Region, TensorFile, dense_tensor


def sniff(probe):
    return probe.head(4) == b"TOY1"


def read(source):
    head = source.read(0, 8, "the toy header")
    (count,) = struct.unpack("<I", head[4:8])
    if 8 + 4 * count > source.size:
        raise TruncatedFile(f"{count} values need {8 + 4 * count} bytes; the file has {source.size}",
                            offset=8, rule="the values fit in the file")
    tensor = dense_tensor("values", "float32", (count,), 0, 8, 4 * count)
    return TensorFile(path=source.path, format="toy", variant="1", tensors=[tensor],
                      attributes={"made_by": "toyformat"}, regions=[Region("header", 0, 8, "TOY1 + count")])


SPEC = FormatSpec(name="toy", description="Toy tensors", extensions=(".toy",), mime="application/x-toy",
                  sniff=sniff, read="toyformat:read", signature="a toy file starts with TOY1")
'''


def install_toy_package(folder: Path, entry: str = "toyformat:SPEC", module: str = TOY_MODULE) -> Path:
    """Write the package into ``folder`` (to be put on ``sys.path`` / ``PYTHONPATH``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "toyformat.py").write_text(module, encoding="utf-8")
    info = folder / "toyformat-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyformat\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[ztviewer.formats]\ntoy = {entry}\n", encoding="utf-8")
    return folder


def toy_file(path: Path, values: np.ndarray) -> Path:
    data = np.asarray(values, dtype="<f4")
    path.write_bytes(b"TOY1" + struct.pack("<I", data.size) + data.tobytes())
    return path
