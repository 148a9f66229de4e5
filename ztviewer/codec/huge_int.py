"""Integers too long to write in decimal, as the readers hand them on.

A CBOR bignum (tags 2 / 3) or a JSON number can hold thousands of digits. Python refuses to turn an int of
more than 4,300 digits into decimal text (``sys.get_int_max_str_digits``), and converting one is quadratic,
so every message, ``repr`` or JSON document that met such a value would fail. The readers turn any integer
longer than :data:`~ztviewer.codec.text.DECIMAL_BITS` bits into a :class:`HugeInt` instead: not an ``int``,
so no structural check mistakes it for an offset, shape or size (it reads as "an integer outside the
64-bit range"), but it keeps the exact value and prints by its size (writers refuse it, as any integer past 64 bits).
"""
from __future__ import annotations

import math

from .text import DECIMAL_BITS


class HugeInt:
    """An exact integer of more than :data:`DECIMAL_BITS` bits: ``value`` from CBOR (binary, exact), or the
    decimal ``digits`` of a JSON number (never converted: a 100 MB number would take hours)."""

    __slots__ = ("digits", "value")

    def __init__(self, value: int | None = None, digits: str | None = None) -> None:
        if (value is None) == (digits is None):
            raise TypeError("HugeInt takes exactly one of value, digits")
        self.value = value
        self.digits = digits

    @property
    def bits(self) -> int:
        """Bits of the magnitude (estimated from the digit count for JSON digits)."""
        if self.value is not None:
            return abs(self.value).bit_length()
        digits = self.digits.lstrip("-")  # type: ignore[union-attr]
        return max(1, math.ceil(len(digits) * math.log2(10)))

    @property
    def negative(self) -> bool:
        return self.value < 0 if self.value is not None else self.digits.startswith("-")  # type: ignore[union-attr]

    def describe(self) -> str:
        approx = "" if self.value is not None else "about "
        return f"<{'-' if self.negative else ''}{approx}{self.bits:,}-bit integer>"

    def as_json(self) -> dict[str, str]:
        """A lossless JSON stand-in: hexadecimal for a binary value, the decimal digits as written for JSON."""
        if self.value is not None:
            return {"integer_hex": hex(self.value)}
        return {"integer_decimal": self.digits}  # type: ignore[dict-item]

    def __repr__(self) -> str:
        return self.describe()

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(self.describe(), spec if spec and spec[-1:] not in "dnxXobeEfFgG%," else "")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HugeInt):
            return NotImplemented
        return (self.value, self.digits) == (other.value, other.digits)

    def __hash__(self) -> int:
        return hash((self.value, self.digits))


def from_bignum(magnitude: bytes, negative: bool) -> int | HugeInt:
    """The integer of a CBOR bignum's bytes (tag 2, or tag 3 when ``negative``)."""
    n = int.from_bytes(magnitude, "big")
    value = -1 - n if negative else n
    return value if n.bit_length() <= DECIMAL_BITS else HugeInt(value=value)


_MAX_DIGITS = math.floor(DECIMAL_BITS * math.log10(2))


def from_digits(text: str) -> int | HugeInt:
    """A JSON integer's text (``json`` ``parse_int`` hook): an ``int`` when short, else a :class:`HugeInt`."""
    if len(text) - text.startswith("-") <= _MAX_DIGITS:
        return int(text)
    return HugeInt(digits=text)
