"""How each built-in format is recognised by its first (or last) bytes, without importing its reader.

The registry asks these of every file it opens and then imports only the reader of the format that claimed it
(importing all of them cost start-up time for a file that is one format).
"""
from __future__ import annotations

ZT_V2_FORMAT = "zt-v2"   # ``TensorFile.format`` of a zTensor v2 file (``"zt"``: 0.1 / 1.x)
BLZ_MAGIC = b"BLZ1"
ZT_MAGIC_V01 = b"ZTEN0001"
ZT_MAGIC_V1 = b"ZTEN1000"
ZT_V2_MAGIC = b"\x89ZT2\r\n\x1a\n"
JSON_SPACE = " \t\n\r"   # what JSON allows before a safetensors header's '{'
_JSON_SPACE_BYTES = JSON_SPACE.encode()


def sniff_blz(head: bytes, size: int) -> bool:
    """Any ``BLZ`` magic, so that other versions are reported as unsupported rather than unknown."""
    return head[:3] == b"BLZ"


def sniff_safetensors(head: bytes, size: int) -> bool:
    """A u64 header length, then a header whose first non-space byte is ``{``.

    The length itself is not checked, so a file with an absurd length is still reported as safetensors.
    """
    return size >= 9 and head[8:].lstrip(_JSON_SPACE_BYTES)[:1] == b"{"


def sniff_zt(head: bytes, size: int) -> bool:
    """``ZTEN0001`` / ``ZTEN1000``; any other ``ZTEN`` prefix is claimed too, to name the unknown version."""
    return head[:8] in (ZT_MAGIC_V01, ZT_MAGIC_V1) or head[:4] == b"ZTEN"


def sniff_zt_v2(head: bytes, size: int) -> bool:
    return head[:8] == ZT_V2_MAGIC


def sniff_zt_v2_tail(tail: bytes, size: int) -> bool:
    """A v2 footer magic at EOF: a v2 file whose first bytes are damaged, reported as such."""
    return tail[-8:] == ZT_V2_MAGIC
