"""zTensor v2 (ztensor 2.x): recognised by its PNG-style magic and reported as not supported yet."""
from __future__ import annotations

from .. import registry
from ..errors import UnsupportedFormat
from ..model import TensorFile
from ..source import Source

MAGIC_V2 = b"\x89ZT2\r\n\x1a\n"


def sniff(head: bytes, size: int) -> bool:
    return head[:8] == MAGIC_V2


def read(source: Source) -> TensorFile:
    raise UnsupportedFormat("zTensor v2 (ztensor 2.x), not supported yet", offset=0,
                            rule="zTensor v2 magic 89 5A 54 32 0D 0A 1A 0A")


HANDLER = registry.register(registry.FormatHandler(
    name="zt-v2", description="zTensor v2 (ztensor 2.x)", extensions=(".zt",), sniff=sniff, read=read))
