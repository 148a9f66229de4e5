"""Runs inside a venv holding one ztensor version; prints what that version reads from a file as JSON.

Usage: python zt_reader_script.py FILE…  →  {FILE: {"version", "tensors": [{name, dtype, shape, format,
components: {role: sha256 of the decoded bytes}, attributes, checksum}]} or {"error": message}}.
Kept dependency-free (numpy and ztensor only) and compatible with ztensor 0.1.4, 1.0.1 and 1.2.3, whose Python APIs
all differ.
"""
import hashlib
import json
import math
import sys

import numpy as np
import ztensor


def sha(buf) -> str:
    if isinstance(buf, np.ndarray):
        buf = np.ascontiguousarray(buf).tobytes()
    return hashlib.sha256(bytes(buf)).hexdigest()


def jsonable(value):
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def read_v1x(path):
    """ztensor >= 1.0.2: Reader with metadata(name).components and raw component reads."""
    reader = ztensor.Reader(path)
    out = []
    for name in reader.keys():  # noqa: SIM118  (a ztensor Reader, not a dict)
        meta = reader.metadata(name)
        comps = {}
        for role in meta.components:
            buf, _ = reader._inner._read_component_raw(name, role)
            comps[role] = sha(np.asarray(buf).view(np.uint8))
        entry = {"name": name, "dtype": meta.dtype, "type": meta.type, "shape": list(meta.shape),
                 "format": meta.format, "components": comps, "attributes": jsonable(meta.attributes or {}),
                 "component_meta": jsonable(meta.components)}
        if meta.format == "dense" and not (meta.type or "").startswith("complex"):  # 1.2.3 cannot read complex
            entry["public_read"] = sha(reader.read_numpy(name, copy=True))
        out.append(entry)
    return out


def read_v10(path):
    """ztensor 1.0.x: TensorMetadata objects, read_tensor for dense, _read_component for the rest."""
    reader = ztensor.Reader(path)
    out = []
    for meta in reader:
        name, layout = meta.name, meta.layout
        comps = {}
        if layout == "dense":
            comps["data"] = sha(reader.read_tensor(name))
        else:
            dtype = meta.dtype
            roles = {"sparse_csr": ["values", "indices", "indptr"], "sparse_coo": ["values", "coords"],
                     "tensor_train": [f"core_{k}" for k in range(len(meta.shape))]}.get(layout, [])
            for role in roles:
                arr, _ref = reader._read_component(name, role, (lambda d=dtype: d) if role in ("values",) or
                                                   role.startswith("core_") else (lambda: np.uint64))
                comps[role] = sha(arr)
        out.append({"name": name, "dtype": meta.dtype_str, "shape": list(meta.shape), "format": layout,
                    "components": comps, "encoding": meta.encoding, "checksum": meta.checksum})
    return out


def read_v01(path):
    """ztensor 0.1.x: TensorMetadata by index, read_tensor (checksums verified on read)."""
    reader = ztensor.Reader(path)
    out = []
    for meta in reader:
        entry = {"name": meta.name, "dtype": meta.dtype_str, "shape": list(meta.shape), "format": meta.layout,
                 "encoding": meta.encoding, "checksum": meta.checksum, "endianness": meta.endianness,
                 "components": {}}
        if meta.layout == "dense":
            entry["components"]["data"] = sha(reader.read_tensor(meta.name))
        out.append(entry)
    return out


def read(path):
    version = getattr(ztensor, "__version__", None)
    try:
        if hasattr(ztensor, "Tensor") and hasattr(ztensor.Reader, "keys"):
            tensors = read_v1x(path)
        elif hasattr(ztensor.Reader, "tensor_names"):
            tensors = read_v10(path)
        else:
            tensors = read_v01(path)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "version": version}
    return {"version": version, "tensors": tensors}


def main() -> None:
    print(json.dumps({path: read(path) for path in sys.argv[1:]}))


if __name__ == "__main__":
    main()
