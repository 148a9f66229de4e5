"""Benchmark input files, written independently of ztviewer's own writers and cached per run.

Every maker takes the run's temporary directory and the ``quick`` flag, writes its file once and returns
the cached description on later calls, so several benchmark modules can share one large file.
The large files hold real (random) data, written in chunks, never sparse holes.
"""
from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cbor2
import crc32c
import numpy as np
import zstandard

MAGIC_V10 = b"ZTEN1000"
ALIGN = 64
CHUNK = 64 << 20

# Sizes of the full run and of --quick.
BIG_BYTES = {False: 2 << 30, True: 8 << 20}
ZSTD_BYTES = {False: 256 << 20, True: 4 << 20}
MANY_TENSORS = {False: 10_000, True: 500}
HUGE_TENSORS = {False: 1_000_000, True: 20_000}

_CACHE: dict[tuple[str, str], Any] = {}


class ZtV10Writer:
    """A minimal streaming zTensor v1.0 writer: magic, 64-aligned blobs, CBOR manifest, u64 footer."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = open(path, "wb")  # noqa: SIM115 -- closed by finish()
        self._file.write(MAGIC_V10)
        self._pos = len(MAGIC_V10)
        self.tensors: dict[str, dict[str, Any]] = {}

    def _align(self) -> None:
        pad = -self._pos % ALIGN
        if pad:
            self._file.write(bytes(pad))
            self._pos += pad

    def add(self, name: str, dtype: str, shape: list[int], chunks: Iterable[bytes | memoryview],
            encoding: str = "raw", digests: tuple[str, ...] = ()) -> dict[str, Any]:
        """Stream one dense tensor's stored bytes; returns its component dict with every digest requested
        under ``component["_digests"]`` (the first one is recorded in the manifest)."""
        self._align()
        offset = self._pos
        crc, sha = 0, hashlib.sha256() if "sha256" in digests else None
        for chunk in chunks:
            self._file.write(chunk)
            self._pos += len(chunk)
            if "crc32c" in digests:
                crc = crc32c.crc32c(chunk, crc)
            if sha is not None:
                sha.update(chunk)
        component: dict[str, Any] = {"offset": offset, "length": self._pos - offset}
        if encoding != "raw":
            component["encoding"] = encoding
        found = {}
        if "crc32c" in digests:
            found["crc32c"] = f"crc32c:0x{crc:08X}"
        if sha is not None:
            found["sha256"] = f"sha256:{sha.hexdigest()}"
        if digests:
            component["digest"] = found[digests[0]]
        self.tensors[name] = {"dtype": dtype, "shape": list(shape), "format": "dense",
                              "components": {"data": component}}
        return {**component, "_digests": found}

    def skip(self, nbytes: int) -> None:
        """Leave ``nbytes`` unwritten (a hole in the file, read as zeros) after what was written last."""
        self._file.seek(nbytes, os.SEEK_CUR)
        self._pos += nbytes

    def finish(self, objects: bool = False) -> int:
        """Write manifest and footer (with ``objects``, of the v1.x objects layout: short dtype names in the
        component, a trailing magic); returns where the manifest starts (the end of the blobs)."""
        data_end = self._pos
        self._file.write(objects_manifest_bytes(self.tensors) if objects else manifest_bytes(self.tensors))
        self._file.close()
        return data_end


def manifest_bytes(tensors: dict[str, dict[str, Any]]) -> bytes:
    manifest = {"version": "1.0", "generator": "ztviewer-benchmarks", "attributes": {},
                "tensors": dict(sorted(tensors.items()))}
    body = cbor2.dumps(manifest)
    return body + struct.pack("<Q", len(body))


_SHORT = {"float32": "f32", "float16": "f16", "float64": "f64", "int32": "i32", "int64": "i64", "uint8": "u8",
          "bool": "bool", "bfloat16": "bf16"}


def objects_manifest_bytes(tensors: dict[str, dict[str, Any]]) -> bytes:
    objects = {name: {"shape": t["shape"], "format": t["format"],
                      "components": {"data": {"dtype": _SHORT[t["dtype"]], **t["components"]["data"]}}}
               for name, t in sorted(tensors.items())}
    body = cbor2.dumps({"version": "1.2.0", "generator": "ztviewer-benchmarks", "attributes": {},
                        "objects": objects})
    return body + struct.pack("<Q", len(body)) + MAGIC_V10


def replace_manifest(path: Path, data_end: int, tensors: dict[str, dict[str, Any]]) -> None:
    """Cut the file after its blobs and append a new manifest (how one 2 GiB blob serves two digests)."""
    with open(path, "r+b") as f:
        f.truncate(data_end)
        f.seek(data_end)
        f.write(manifest_bytes(tensors))


def random_chunks(total: int, seed: int = 0) -> Iterable[memoryview]:
    rng = np.random.default_rng(seed)
    left = total
    while left:
        n = min(CHUNK, left)
        words = rng.integers(0, 1 << 63, size=(n + 7) // 8, dtype=np.uint64)
        yield memoryview(words.view(np.uint8))[:n]
        left -= n


@dataclass
class BigFile:
    """One dense float32 tensor ``big`` whose single component can carry a crc32c or a sha256 digest."""

    path: Path
    nbytes: int
    data_end: int
    tensors: dict[str, dict[str, Any]]
    digests: dict[str, str]
    current: str = "crc32c"

    def use_digest(self, algorithm: str) -> Path:
        if algorithm != self.current:
            self.tensors["big"]["components"]["data"]["digest"] = self.digests[algorithm]
            replace_manifest(self.path, self.data_end, self.tensors)
            self.current = algorithm
        return self.path


def big_zt(tmpdir: Path, quick: bool) -> BigFile:
    """A 2 GiB (8 MiB with ``quick``) one-tensor .zt v1.0 file of random float32 bits."""
    key = (str(tmpdir), "big")
    if key not in _CACHE:
        nbytes = BIG_BYTES[quick]
        path = tmpdir / "big_one_tensor.zt"
        writer = ZtV10Writer(path)
        cols = 4096
        comp = writer.add("big", "float32", [nbytes // 4 // cols, cols], random_chunks(nbytes),
                          digests=("crc32c", "sha256"))
        data_end = writer.finish()
        _CACHE[key] = BigFile(path, nbytes, data_end, writer.tensors, comp["_digests"])
    return _CACHE[key]


def tiny_zt(tmpdir: Path) -> Path:
    """The same structure as :func:`big_zt` with a 4×4 tensor."""
    key = (str(tmpdir), "tiny")
    if key not in _CACHE:
        path = tmpdir / "tiny_one_tensor.zt"
        writer = ZtV10Writer(path)
        writer.add("big", "float32", [4, 4], random_chunks(64), digests=("crc32c",))
        writer.finish()
        _CACHE[key] = path
    return _CACHE[key]


@dataclass
class ZstdFile:
    path: Path
    nbytes: int          # decoded size
    stored: int          # compressed size
    offset: int
    extra: dict[str, Any] = field(default_factory=dict)


def zstd_zt(tmpdir: Path, quick: bool) -> ZstdFile:
    """A .zt v1.0 file with one 256 MiB (4 MiB with ``quick``) float32 tensor stored as one zstd frame
    without a content size, as ztensor writes it. The values are normal samples rounded to float16
    precision, so the frame really compresses (about 0.6×) instead of degenerating to raw blocks."""
    key = (str(tmpdir), "zstd")
    if key not in _CACHE:
        nbytes = ZSTD_BYTES[quick]
        rng = np.random.default_rng(1)
        values = rng.standard_normal(nbytes // 4, dtype=np.float32).astype(np.float16).astype(np.float32)
        cctx = zstandard.ZstdCompressor(level=3, write_content_size=False, threads=-1)
        frame = cctx.compress(values.data)
        del values
        path = tmpdir / "zstd_one_tensor.zt"
        writer = ZtV10Writer(path)
        comp = writer.add("z", "float32", [nbytes // 4], [frame], encoding="zstd")
        writer.finish()
        _CACHE[key] = ZstdFile(path, nbytes, len(frame), comp["offset"])
    return _CACHE[key]


def many_safetensors(tmpdir: Path, quick: bool) -> tuple[Path, int]:
    """A safetensors file with 10,000 (500 with ``quick``) small tensors of mixed dtypes, written by HF."""
    key = (str(tmpdir), "many_st")
    if key not in _CACHE:
        from safetensors.numpy import save_file

        n = MANY_TENSORS[quick]
        dtypes = [np.float32, np.float16, np.float64, np.int32, np.int64, np.uint8, np.bool_]
        arrays = {f"model.layers.{i // 10:04d}.block_{i % 10}.weight":
                  np.zeros((i % 7 + 1, 3), dtype=dtypes[i % len(dtypes)]) for i in range(n)}
        path = tmpdir / "many.safetensors"
        save_file(arrays, str(path), metadata={"format": "np"})
        _CACHE[key] = (path, n)
    return _CACHE[key]


def million_safetensors(tmpdir: Path, quick: bool) -> tuple[Path, int]:
    """A safetensors file with 1,000,000 (20,000 with ``quick``) one-byte tensors, its JSON header written
    directly (as the reference writer lays it out: sorted by name, in buffer order)."""
    key = (str(tmpdir), "million_st")
    if key not in _CACHE:
        n = HUGE_TENSORS[quick]
        names = sorted(f"t{i}" for i in range(n))
        entries = ",".join(f'"{name}":{{"dtype":"U8","shape":[1],"data_offsets":[{i},{i + 1}]}}'
                           for i, name in enumerate(names))
        header = ('{"__metadata__":{"format":"np"},' + entries + "}").encode()
        header += b" " * (-len(header) % 8)
        path = tmpdir / "million.safetensors"
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(header)) + header)
            f.write(bytes(range(256)) * (n // 256) + bytes(n % 256))
        _CACHE[key] = (path, n)
    return _CACHE[key]


def many_zt(tmpdir: Path, quick: bool, objects: bool = False) -> tuple[Path, int, int, int]:
    """A .zt v1.0 file (or with ``objects``, of the v1.x objects layout) with 10,000 (500) small dense tensors.
    Returns (path, count, manifest offset, manifest length)."""
    key = (str(tmpdir), "many_zt_objects" if objects else "many_zt")
    if key not in _CACHE:
        n = MANY_TENSORS[quick]
        dtypes = [("float32", 4), ("float16", 2), ("float64", 8), ("int32", 4), ("int64", 8), ("uint8", 1),
                  ("bool", 1), ("bfloat16", 2)]
        path = tmpdir / ("many_objects.zt" if objects else "many.zt")
        writer = ZtV10Writer(path)
        for i in range(n):
            dtype, width = dtypes[i % len(dtypes)]
            shape = [i % 7 + 1, 3]
            writer.add(f"model.layers.{i // 10:04d}.block_{i % 10}.weight", dtype, shape,
                       [bytes(width * shape[0] * shape[1])])
        data_end = writer.finish(objects)
        size = os.path.getsize(path)
        _CACHE[key] = (path, n, data_end, size - data_end - (16 if objects else 8))
    return _CACHE[key]


def fmt_size(n: int) -> str:
    """``2 GiB``, ``256 MiB``, ``4 KiB``, ``17 B``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} B"


def drop_cache(tmpdir: Path) -> None:
    for key in [k for k in _CACHE if k[0] == str(tmpdir)]:
        del _CACHE[key]
