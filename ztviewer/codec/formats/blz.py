"""BLZ1 reader: one tensor stored as tensor-train cores.

Layout (seed 003 as the corpus writes it, see real-world-writers §5)::

    0x00  "BLZ1"  u8 version=1  u8 dtype_tag (0 f64, 1 complex128)  u8 ndim (2..255)  8 reserved zero bytes
    0x0F  u64 shape[ndim]  u64 ranks[ndim+1] (ranks[0] = ranks[ndim] = 1)
    then  core_i: (ranks[i], shape[i], ranks[i+1]) elements, C order, no padding, nothing after the last core

Every u64 is little-endian and unaligned. Nothing records the file length, so truncation shows only when
the core sizes are summed.
"""
from __future__ import annotations

import os
import struct

from ..errors import HeaderError, TruncatedFile, UnknownDType, UnsupportedFormat
from ..model import Component, Problem, Region, Tensor, TensorFile, error, warning
from ..source import Source
from .magic import BLZ_MAGIC as MAGIC

FIXED_HEADER = 15
U64_MAX = (1 << 64) - 1
DTYPE_TAGS = {0: ("float64", 8), 1: ("complex128", 16)}
RULE_RANKS = "ranks[0] == ranks[ndim] == 1"
RULE_CORES = "the cores exactly fill the file after the header"


def read(source: Source) -> TensorFile:
    head = _fixed_header(source)
    version, dtype_tag, ndim = head[4], head[5], head[6]
    if version != 1:
        raise UnsupportedFormat(f"BLZ1 version {version} is not supported; ztviewer reads version 1", offset=4,
                                rule="version == 1")
    if dtype_tag not in DTYPE_TAGS:
        raise UnknownDType(f"dtype_tag {dtype_tag} is not defined (0 = f64, 1 = complex128)", offset=5,
                           rule="dtype_tag is 0 or 1")
    if ndim < 2:
        raise HeaderError(f"ndim is {ndim}; a BLZ1 tensor train has 2 to 255 dimensions", offset=6,
                          rule="2 <= ndim <= 255")
    problems: list[Problem] = []
    if any(head[7:15]):
        problems.append(warning(f"reserved bytes are {head[7:15].hex(' ')}, not zero; they are ignored",
                                rule="reserved bytes are zero in v1", offset=7))
    shape = _u64s(source, FIXED_HEADER, ndim, "shape")
    ranks_at = FIXED_HEADER + 8 * ndim
    ranks = _u64s(source, ranks_at, ndim + 1, "ranks")
    dtype, itemsize = DTYPE_TAGS[dtype_tag]
    tensor = Tensor(name=_stem(source.path), dtype=dtype, shape=shape, layout="tensor_train",
                    extra={"ranks": ranks})
    cores_at = ranks_at + 8 * (ndim + 1)
    _check_ranks(tensor, ranks, ranks_at)
    if 0 in shape:
        tensor.add_problem(warning(f"shape {list(shape)} has a zero dimension: the tensor has no elements",
                                   rule="shape", tensor=tensor.name, offset=FIXED_HEADER))
    end = _add_cores(tensor, shape, ranks, itemsize, cores_at, source.size)
    if end < source.size:
        problems.append(warning(f"{source.size - end} trailing bytes [{end}, {source.size}) follow the last core; "
                                "they are ignored", rule=RULE_CORES, offset=end))
    regions = [Region("magic", 0, 4, "BLZ1"), Region("header", 4, 11, "version, dtype_tag, ndim, reserved"),
               Region("shape", FIXED_HEADER, 8 * ndim, f"shape: {ndim} × u64"),
               Region("ranks", ranks_at, 8 * (ndim + 1), f"ranks: {ndim + 1} × u64")]
    return TensorFile(path=source.path, format="blz", variant="BLZ1", attributes={"version": version},
                      tensors=[tensor], problems=problems, regions=regions, source=source,
                      extra={"dtype_tag": dtype_tag})


def _fixed_header(source: Source) -> bytes:
    head = source.head(FIXED_HEADER)
    if head[:4] != MAGIC:
        if head[:3] == b"BLZ" and len(head) >= 4:
            raise UnsupportedFormat(f"{head[:4].decode('latin-1')} is not supported; ztviewer reads BLZ1",
                                    offset=0, rule="magic 'BLZ1'")
        raise HeaderError(f"the file does not start with 'BLZ1' (found {head[:4]!r})", offset=0,
                          rule="magic 'BLZ1'")
    if len(head) < FIXED_HEADER:
        raise TruncatedFile(f"the file ends at byte {source.size}, inside the {FIXED_HEADER}-byte fixed header "
                            "(magic, version, dtype_tag, ndim, 8 reserved bytes)", offset=source.size,
                            rule="the fixed header is 15 bytes")
    return head


def _u64s(source: Source, offset: int, count: int, what: str) -> tuple[int, ...]:
    end = offset + 8 * count
    if end > source.size:
        raise TruncatedFile(f"the file ends at byte {source.size}, inside the {what} field "
                            f"({count} × u64 at bytes [{offset}, {end}))", offset=offset,
                            rule=f"the header holds {what}")
    return struct.unpack_from(f"<{count}Q", source.read(offset, 8 * count, what))


def _check_ranks(tensor: Tensor, ranks: tuple[int, ...], offset: int) -> None:
    ndim = len(ranks) - 1
    for index in (0, ndim):
        if ranks[index] != 1:
            tensor.add_problem(error(f"ranks[{index}] is {ranks[index]}, must be 1", rule=RULE_RANKS,
                                     tensor=tensor.name, offset=offset + 8 * index))
    zero = [i for i in range(1, ndim) if ranks[i] == 0]
    if zero:
        tensor.add_problem(warning(f"ranks[{zero[0]}] is 0: every element of the tensor is zero", rule="ranks",
                                   tensor=tensor.name, offset=offset + 8 * zero[0]))


def _add_cores(tensor: Tensor, shape: tuple[int, ...], ranks: tuple[int, ...], itemsize: int, offset: int,
               size: int) -> int:
    """Add core_0..core_{n-1} (sizes in Python ints, so nothing overflows) and return where they end."""
    past_eof = False
    for i, dim in enumerate(shape):
        role = f"core_{i}"
        core_shape = (ranks[i], dim, ranks[i + 1])
        length = ranks[i] * dim * ranks[i + 1] * itemsize
        tensor.components[role] = Component(role, offset, length, dtype=tensor.dtype, shape=core_shape)
        if offset + length > size and not past_eof:
            past_eof = True
            later = "; the cores after it are missing too" if i < len(shape) - 1 else ""
            if length > U64_MAX:
                later = f" (the size overflows 64 bits){later}"
            tensor.add_problem(error(
                f"{role} {core_shape} needs {length} bytes [{offset}, {offset + length}) but the file ends at byte "
                f"{size} ({offset + length - size} bytes missing){later}", rule=RULE_CORES, tensor=tensor.name,
                component=role, offset=offset))
        offset += length
    return offset


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0] or path

