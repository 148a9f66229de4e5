"""Error types of the codec core.

Every failure the codec raises is a :class:`CodecError` (a ``ValueError``), carrying where it happened
(tensor, component, byte offset) and which rule was broken, so a caller can turn it into a :class:`Problem`
(what the model records: a damaged file still opens, with its problems listed) without parsing the message.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong or odd in a file: what, where and which rule."""

    severity: Severity
    message: str
    rule: str = ""
    tensor: str | None = None
    component: str | None = None
    offset: int | None = None

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def where(self) -> str:
        parts = []
        if self.tensor is not None:
            parts.append(f"tensor {self.tensor!r}")
        if self.component is not None:
            parts.append(f"component {self.component!r}")
        if self.offset is not None:
            parts.append(f"at byte {self.offset} (0x{self.offset:X})")
        return ", ".join(parts)

    def describe(self) -> str:
        where = self.where()
        text = f"{where}: {self.message}" if where else self.message
        return f"{text} [{self.rule}]" if self.rule else text

    def __str__(self) -> str:
        return f"{self.severity.value}: {self.describe()}"


def error(message: str, **where: Any) -> Problem:
    return Problem(Severity.ERROR, message, **where)


def warning(message: str, **where: Any) -> Problem:
    return Problem(Severity.WARNING, message, **where)



class CodecError(ValueError):
    """Base of every error the codec raises for bad input."""

    def __init__(
        self,
        message: str,
        *,
        offset: int | None = None,
        rule: str = "",
        tensor: str | None = None,
        component: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.rule = rule
        self.tensor = tensor
        self.component = component

    def located(self, *, tensor: str | None = None, component: str | None = None) -> CodecError:
        """Fill in the tensor/component where the caller knows them and the raiser did not."""
        if self.tensor is None:
            self.tensor = tensor
        if self.component is None:
            self.component = component
        return self

    def to_problem(self, severity: str = "error") -> Problem:
        return Problem(
            Severity(severity), self.message, rule=self.rule, tensor=self.tensor,
            component=self.component, offset=self.offset,
        )

    def __str__(self) -> str:
        return self.to_problem().describe()


class UnknownFormat(CodecError):
    """The first bytes match no format ztviewer knows."""


class UnsupportedFormat(CodecError):
    """A recognised format or version that ztviewer cannot read (yet)."""


class SourceChanged(CodecError):
    """The file changed on disk since it was opened (another program truncated, resized or rewrote it): its
    bytes are no longer the ones the model describes, and mapped pages past its new end would kill the
    process (SIGBUS) if touched."""


class TruncatedFile(CodecError):
    """The file ends before a structure it declares."""


class OutOfBounds(CodecError):
    """A byte range points outside the file, or its end overflows."""


class HeaderError(CodecError):
    """The header / manifest / footer is malformed."""


class HeaderTooLarge(HeaderError):
    """The declared header or manifest size is larger than the file or than the configured cap."""


class ManifestDecodeError(HeaderError):
    """The manifest bytes are not valid CBOR / JSON / UTF-8."""


class SchemaError(HeaderError):
    """A manifest entry has a missing key, a wrong type or an invalid value."""


class InvalidOffset(CodecError):
    """Offsets overlap, leave holes, are reversed or are not aligned as the format requires."""


class UnknownDType(SchemaError):
    """A dtype name the format does not define."""


class DecodeError(CodecError):
    """Tensor data cannot be decoded (corrupt compressed stream, wrong size, bad sparse structure)."""


class DecodeLimitExceeded(DecodeError):
    """Decoding would produce more bytes than the configured limit (decompression-bomb guard)."""


class FileDecodeBudgetSpent(DecodeLimitExceeded):
    """One pass over a whole file (check, hashing every tensor) has decoded as many bytes as it may."""


class SparseStructureError(DecodeError):
    """Sparse index components are inconsistent (indptr not monotonic, indices outside the shape…)."""


class DigestError(CodecError):
    """A digest string is malformed or names an unsupported algorithm."""


class DigestMismatch(CodecError):
    """The stored bytes do not match the recorded digest."""


class UnsupportedLayout(CodecError):
    """The tensor's layout can be shown structurally but not decoded to a dense array."""


class Cancelled(Exception):
    """Long-running work was cancelled by the caller (not an input error)."""


class EditRefused(CodecError):
    """An edit the target format cannot hold (non-string metadata in safetensors, a name collision, …)."""


class UnsupportedConversion(CodecError):
    """A tensor or file property the output format cannot represent (sparse in safetensors, complex in v1.0…)."""


class DamagedTensor(UnsupportedConversion):
    """A tensor a save or convert reads is damaged (a recorded digest does not match, a bool byte is not 0 or 1, a
    part does not decode): it is refused, never written as if it were sound."""


class WriterStateError(CodecError):
    """A writer method was called in the wrong phase (e.g. adding a tensor after the manifest was written)."""
