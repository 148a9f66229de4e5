"""The one model every format reads into: TensorFile → Tensor → Component, plus Problems.

The model is plain data. Readers fill it, views and writers consume it; nothing here touches bytes.
"""
from __future__ import annotations

import gc
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Iterator

from .dtypes import dtype_info

if TYPE_CHECKING:
    from .source import Source


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


@dataclass(slots=True)
class Component:
    """One physical byte range of a tensor.

    ``dtype`` is the canonical name of the stored elements (``uint64`` for sparse indices); ``encoding`` is
    ``raw``, ``zstd`` or whatever unknown string the file holds; ``digest`` is the file's own spelling
    (``crc32c:0x1A2B3C4D`` / ``sha256:…``).
    """

    role: str
    offset: int
    length: int
    encoding: str = "raw"
    digest: str | None = None
    dtype: str | None = None
    byte_order: str = "little"
    uncompressed_length: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def end(self) -> int:
        return self.offset + self.length

    @property
    def is_compressed(self) -> bool:
        return self.encoding != "raw"


@dataclass(slots=True)
class Tensor:
    """A logical tensor: its dtype and shape, and the components that store it.

    ``layout`` is canonical (``dense``, ``sparse_csr``, ``sparse_coo``, ``tensor_train``, or the file's own
    string for layouts ztviewer shows structurally only); ``layout_spelling`` is what the file wrote.
    ``index`` is the position in the file's manifest, which keeps duplicate names apart.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    layout: str = "dense"
    components: dict[str, Component] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)
    layout_spelling: str | None = None
    problems: list[Problem] = field(default_factory=list)
    index: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int | None:
        info = dtype_info(self.dtype)
        return info.itemsize if info else None

    @property
    def dense_nbytes(self) -> int | None:
        """Bytes of the dense logical tensor (``None`` for an unknown dtype)."""
        size = self.itemsize
        return None if size is None else self.numel * size

    @property
    def stored_nbytes(self) -> int:
        return sum(c.length for c in self.components.values())

    @property
    def has_errors(self) -> bool:
        return any(p.is_error for p in self.problems)

    def add_problem(self, problem: Problem) -> None:
        self.problems.append(problem)


@dataclass(slots=True)
class Region:
    """A structural byte range of the container (magic, header, manifest, footer) for the file map."""

    kind: str
    offset: int
    length: int
    label: str = ""

    @property
    def end(self) -> int:
        return self.offset + self.length


@dataclass(slots=True)
class TensorFile:
    """An opened tensor file.

    ``tensors`` keeps every manifest entry in file order, duplicates included; :meth:`tensor` looks a name up
    (the first occurrence wins, as the v0.1 reference reader does).
    ``readable`` is false when the container itself could not be parsed: then ``tensors`` is empty and
    ``problems`` says why, yet the bytes can still be inspected through ``source``.
    """

    path: str
    format: str
    variant: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    tensors: list[Tensor] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    source: "Source | None" = None
    readable: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    _by_name: dict[str, Tensor] | None = field(default=None, repr=False)

    def tensor(self, name: str) -> Tensor:
        if self._by_name is None:
            by_name: dict[str, Tensor] = {}
            for t in self.tensors:
                by_name.setdefault(t.name, t)
            self._by_name = by_name
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no tensor named {name!r} in {self.path}") from None

    def source_for(self, tensor: Tensor) -> "Source":
        """The source holding a tensor's bytes: the file's own, or its shard's in a multi-file set."""
        source = tensor.extra.get("source") or self.source
        if source is None:
            raise ValueError(f"{self.path} has no open source")
        return source

    def invalidate_index(self) -> None:
        self._by_name = None

    @property
    def size(self) -> int:
        return self.source.size if self.source is not None else 0

    def all_problems(self) -> Iterator[Problem]:
        yield from self.problems
        for t in self.tensors:
            yield from t.problems

    @property
    def has_errors(self) -> bool:
        return any(p.is_error for p in self.all_problems())

    def close(self) -> None:
        if self.source is not None:
            self.source.close()

    def __enter__(self) -> "TensorFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def building_many() -> Iterator[None]:
    """Pause the cyclic garbage collector while a reader builds the model of a large file.

    A 10,000-tensor manifest allocates some 100,000 small acyclic containers. With the collector running,
    they trigger collection after collection that rescan the growing object graph; resumed afterwards, its
    first young collection would still walk all of them once. They all live as long as the open file, so
    on success they are filed straight with the oldest generation (``gc.freeze`` then ``gc.unfreeze``: two
    list splices, no traversal), as the collector itself would after two young collections. Skipped when
    the collector was already off or the program keeps objects frozen (``gc.freeze``) for itself.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
    finally:
        gc.enable()


def direct_construction_allowed() -> bool:
    """Whether fast readers may build Tensor / Component objects by setting their slots directly (skipping
    the dataclass ``__init__``): only while the model has exactly the fields those builders set."""
    from dataclasses import fields

    tensor = tuple(f.name for f in fields(Tensor))
    component = tuple(f.name for f in fields(Component))
    return (tensor == ("name", "dtype", "shape", "layout", "components", "attributes", "layout_spelling",
                       "problems", "index", "extra")
            and component == ("role", "offset", "length", "encoding", "digest", "dtype", "byte_order",
                              "uncompressed_length", "extra")
            and not hasattr(Tensor, "__post_init__") and not hasattr(Component, "__post_init__"))
