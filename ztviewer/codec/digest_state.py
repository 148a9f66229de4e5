"""The verification state of one component's recorded digest (kept apart from :mod:`.digest`, which hashes,
so that listing a file's states costs no hashing imports)."""
from __future__ import annotations

from enum import Enum

from .model import Component


class DigestState(str, Enum):
    """Verification state of one component's recorded digest."""

    NONE = "none"            # the file records no digest
    UNCHECKED = "unchecked"  # a digest is recorded, not verified yet
    OK = "ok"
    MISMATCH = "mismatch"
    INVALID = "invalid"      # the recorded digest cannot be checked (malformed, unsupported, out of file)

    @classmethod
    def initial(cls, component: Component) -> DigestState:
        return cls.NONE if component.digest is None else cls.UNCHECKED
