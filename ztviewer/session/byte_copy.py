"""A byte range copied as text: hex, a C array or a Python bytes literal, with a size cap that says why. No Qt."""
from __future__ import annotations

#: most bytes one copy puts on the clipboard (a C array of 1 MiB is already ~6 MB of text)
COPY_LIMIT = 1 << 20
FORMATS = ("hex", "c", "python")
TITLES = {"hex": "Hex", "c": "C Array", "python": "Python Bytes"}


class CopyTooLarge(ValueError):
    """The range is larger than a copy may hold."""


def check_size(length: int, limit: int = COPY_LIMIT) -> None:
    if length > limit:
        raise CopyTooLarge(f"{length:,} bytes selected; a copy holds at most {limit:,} bytes "
                           f"({limit >> 10:,} KiB) — select less, or use Save As / export for whole tensors")


def as_hex(data: bytes) -> str:
    """``DE AD BE EF …``, 16 bytes a line."""
    return "\n".join(data[i:i + 16].hex(" ").upper() for i in range(0, len(data), 16))


def as_c_array(data: bytes, name: str = "data") -> str:
    lines = [", ".join(f"0x{b:02X}" for b in data[i:i + 12]) for i in range(0, len(data), 12)]
    body = ",\n    ".join(lines)
    return f"const unsigned char {name}[{len(data)}] = {{\n    {body}\n}};\n" if data else \
        f"const unsigned char {name}[1] = {{0}};  /* empty selection */\n"


def as_python_bytes(data: bytes) -> str:
    """A ``bytes`` literal that evaluates to exactly ``data`` (every byte as ``\\xNN``, 32 a line)."""
    parts = ["b'" + "".join(f"\\x{b:02x}" for b in data[i:i + 32]) + "'" for i in range(0, len(data), 32)]
    if not parts:
        return "b''"
    return parts[0] if len(parts) == 1 else "(" + "\n ".join(parts) + ")"


def render(kind: str, data: bytes) -> str:
    if kind == "hex":
        return as_hex(data)
    if kind == "c":
        return as_c_array(data)
    if kind == "python":
        return as_python_bytes(data)
    raise ValueError(f"unknown copy format {kind!r}")
