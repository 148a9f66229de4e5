"""The one model every format reads into: TensorFile → Tensor → Component, plus Problems.

The model is plain data. Readers fill it, views and writers consume it; nothing here touches bytes.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, MutableSequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .dtypes import dtype_info
from .errors import Problem as Problem  # the model's problems; re-exported for the readers
from .errors import Severity as Severity
from .errors import error as error
from .errors import warning as warning

if TYPE_CHECKING:
    from .source import Source

#: numbers each TensorFile made (each open, reload, generation): what caches of its data key by, never the path
_OPENINGS = itertools.count(1)

#: ``Component.encoding`` of a zstd-seekable part (:mod:`.zstd_seekable` reads it frame by frame)
SEEKABLE_ENCODING = "zt.zstd-seekable/1"

@dataclass(slots=True)
class Component:
    """One physical byte range of a tensor.

    ``dtype`` is the canonical name of the stored elements (``uint64`` for sparse indices); ``encoding`` is
    ``raw``, ``zstd`` or whatever unknown string the file holds; ``digest`` is the file's own spelling
    (``crc32c:0x1A2B3C4D`` / ``sha256:…``). A component stored in another file of a set (a zTensor v2 part with
    a ``shard``) names that ``shard`` and, once it is opened, its ``source``. ``shape`` is a tensor-train core's
    ``(rank in, extent, rank out)``; ``shared_with`` labels (``tensor/role``) the other owners of a blob several
    parts reference (zTensor v2 weight tying; past 8 of them, the last label says how many more). ``extra``
    holds only format fields shown in Properties.
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
    shard: str | None = None
    source: Source | None = None
    shape: tuple[int, ...] | None = None
    shared_with: tuple[str, ...] = ()

    @property
    def end(self) -> int:
        return self.offset + self.length

    @property
    def is_compressed(self) -> bool:
        return self.encoding != "raw"


#: the last ``shared_with`` label of a blob with more owners than are named: how many more there are
MORE_OWNERS = "and {:,} other parts"


def shared_owners(component: Component) -> tuple[tuple[str, ...], int]:
    """The other owners of ``component``'s blob named in ``shared_with``, and how many other owners it has in
    all (more than are named when the last label is :data:`MORE_OWNERS`)."""
    labels = component.shared_with
    prefix, suffix = MORE_OWNERS.split("{:,}")
    last = labels[-1] if labels else ""
    count = last[len(prefix):-len(suffix)].replace(",", "")
    if not (last.startswith(prefix) and last.endswith(suffix) and count.isascii() and count.isdigit()):
        return labels, len(labels)
    return labels[:-1], len(labels) - 1 + int(count)


#: (offset, length, encoding, digest, uncompressed length, dtype[, component extra]) of a plain ``data``
#: component not built yet
Deferred = (tuple[int, int, str, str | None, int | None, str]
            | tuple[int, int, str, str | None, int | None, str, dict[str, Any]])


def deferred_component(data: Deferred) -> Component:
    """The ``data`` component a deferred one (:func:`dense_tensor`) becomes when built."""
    offset, length, encoding, digest, uncompressed, dtype = data[:6]
    extra = dict(data[6]) if len(data) > 6 else {}
    return Component("data", offset, length, encoding, digest, dtype, "little", uncompressed, extra)


def as_made(tensor: Tensor) -> bool:
    """Whether a :func:`dense_tensor` still has the one ``data`` component it was made with: not built, or built
    and unchanged but for the other owners of its blob a reader noted (``shared_with``: zTensor v2 weight tying
    does not move a blob)."""
    components = tensor._components
    if components is None:
        return True
    part = components.get("data")
    if len(components) != 1 or part is None or tensor._data is None:
        return False
    made = deferred_component(tensor._data)
    made.shared_with = part.shared_with
    return part == made


class Tensor:
    """A logical tensor: its dtype and shape, and the components that store it.

    ``layout`` is canonical (``dense``, ``sparse_csr``, ``sparse_coo``, ``tensor_train``, or the file's own
    string for layouts ztviewer shows structurally only); ``layout_spelling`` is what the file wrote.
    ``index`` is the position in the file's manifest, which keeps duplicate names apart. A member of a multi-file
    set names its ``shard``, the ``source`` holding its bytes and its ``index_in_shard`` (``None`` otherwise).

    A file may hold 100,000 tensors, most of which nobody looks at, so the containers (``components``,
    ``attributes``, ``problems``, ``extra``) are created on first access; :func:`dense_tensor` makes a plain
    one-component tensor that builds its ``data`` component only then. Either way a tensor reads the same.
    """

    __slots__ = ("name", "dtype", "shape", "layout", "layout_spelling", "index", "shard", "source", "index_in_shard",
                 "_components", "_attributes", "_problems", "_extra", "_data")
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __init__(self, name: str, dtype: str, shape: tuple[int, ...], layout: str = "dense",
                 components: dict[str, Component] | None = None, attributes: dict[str, Any] | None = None,
                 layout_spelling: str | None = None, problems: list[Problem] | None = None, index: int = 0,
                 extra: dict[str, Any] | None = None, shard: str | None = None, source: Source | None = None,
                 index_in_shard: int | None = None) -> None:
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.layout = layout
        self.layout_spelling = layout_spelling
        self.index = index
        self.shard = shard
        self.source = source
        self.index_in_shard = index_in_shard
        self._components: dict[str, Component] | None = {} if components is None else components
        self._attributes = attributes
        self._problems = problems
        self._extra = extra
        self._data: Deferred | None = None     # a plain data component not built yet (see dense_tensor)

    def _deferred(self) -> Deferred:
        if self._data is None:
            raise AttributeError(f"tensor {self.name!r} has neither components nor a deferred data component")
        return self._data

    @property
    def components(self) -> dict[str, Component]:
        components = self._components
        if components is None:
            components = self._components = {"data": deferred_component(self._deferred())}
        return components

    @components.setter
    def components(self, value: dict[str, Component]) -> None:
        self._components = value

    @property
    def attributes(self) -> dict[str, Any]:
        if self._attributes is None:
            self._attributes = {}
        return self._attributes

    @attributes.setter
    def attributes(self, value: dict[str, Any]) -> None:
        self._attributes = value

    @property
    def problems(self) -> list[Problem]:
        if self._problems is None:
            self._problems = []
        return self._problems

    @problems.setter
    def problems(self, value: list[Problem]) -> None:
        self._problems = value

    @property
    def extra(self) -> dict[str, Any]:
        if self._extra is None:
            self._extra = {}
        return self._extra

    @extra.setter
    def extra(self, value: dict[str, Any]) -> None:
        self._extra = value

    def component_encodings(self) -> tuple[str, ...]:
        """Each component's ``encoding`` in order, without building a deferred component."""
        if self._components is None:
            return (self._deferred()[2],)
        return tuple(c.encoding for c in self._components.values())

    def byte_span(self) -> tuple[int, int] | None:
        """``(first byte, bytes up to the end of the last component)`` over all components; ``None`` without
        components. A deferred component is not built."""
        if self._components is None:
            data = self._deferred()
            return data[0], data[1]
        if not self._components:
            return None
        start = min(c.offset for c in self._components.values())
        return start, max(c.end for c in self._components.values()) - start

    def extra_value(self, key: str, default: Any = None) -> Any:
        """``extra.get(key, default)`` without creating ``extra`` for a tensor that has none."""
        extra = self._extra
        return extra.get(key, default) if extra else default

    def _fields(self) -> tuple[Any, ...]:
        return (self.name, self.dtype, self.shape, self.layout, self.components, self.attributes,
                self.layout_spelling, self.problems, self.index, self.extra, self.shard, self.source,
                self.index_in_shard)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        values = ", ".join(f"{name}={value!r}" for name, value in zip(TENSOR_FIELDS, self._fields()))
        return f"Tensor({values})"

    def replaced(self, **changes: Any) -> Tensor:
        """A copy with some fields changed, sharing the containers (as ``dataclasses.replace`` would)."""
        values = dict(zip(TENSOR_FIELDS, self._fields()))
        values.update(changes)
        return Tensor(**values)

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
        if self._components is None:
            return self._deferred()[1]
        return sum(c.length for c in self._components.values())

    @property
    def component_count(self) -> int:
        """``len(components)`` without building a deferred component."""
        return 1 if self._components is None else len(self._components)

    def component_digests(self) -> tuple[str | None, ...]:
        """Each component's ``digest`` in order, without building a deferred component."""
        if self._components is None:
            return (self._deferred()[3],)
        return tuple(c.digest for c in self._components.values())

    @property
    def has_errors(self) -> bool:
        problems = self._problems
        return problems is not None and any(p.is_error for p in problems)

    def add_problem(self, problem: Problem) -> None:
        self.problems.append(problem)


TENSOR_FIELDS = ("name", "dtype", "shape", "layout", "components", "attributes", "layout_spelling", "problems",
                 "index", "extra", "shard", "source", "index_in_shard")
_new = object.__new__


def dense_tensor(name: str, dtype: str, shape: tuple[int, ...], index: int, offset: int, length: int,
                 encoding: str = "raw", digest: str | None = None, uncompressed: int | None = None,
                 spelling: str | None = None, extra: dict[str, Any] | None = None,
                 component_dtype: str | None = None, component_extra: dict[str, Any] | None = None,
                 shard: str | None = None, source: Source | None = None, index_in_shard: int | None = None) -> Tensor:
    """A dense tensor stored in one ``data`` component, little-endian, with no attributes or problems: what
    fast readers build for every plain entry. The component is made on first use, of ``component_dtype``
    (default: the tensor's dtype) and with a copy of ``component_extra`` (which may be shared)."""
    t = _new(Tensor)
    t.name, t.dtype, t.shape, t.layout = name, dtype, shape, "dense"
    t.layout_spelling, t.index, t._extra = spelling, index, extra
    t.shard, t.source, t.index_in_shard = shard, source, index_in_shard
    t._components = t._attributes = t._problems = None
    stored = dtype if component_dtype is None else component_dtype
    t._data = ((offset, length, encoding, digest, uncompressed, stored) if component_extra is None
               else (offset, length, encoding, digest, uncompressed, stored, component_extra))
    return t


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

    ``tensors`` keeps every manifest entry in file order, duplicates included: a list, or for large plain
    manifests a :class:`~.tensor_table.TensorTable` that reads the same and builds each tensor on first access;
    :meth:`tensor` looks a name up (the first occurrence wins, as the v0.1 reference reader does).
    ``readable`` is false when the container itself could not be parsed: then ``tensors`` is empty and
    ``problems`` says why, yet the bytes can still be inspected through ``source``. ``shard_sources`` holds the
    other files a zTensor v2 root opened for its parts (by shard name); :meth:`close` closes them too. A file read
    as one of the earlier generations of an append-only file (zTensor v2) names that file in ``generation_of``
    (it is read-only: saving it would overwrite the later ones) and may know its ``generation_number``.
    ``opening`` tells this opened file from every other one of the process, the same path opened again included.
    """

    path: str
    format: str
    variant: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    tensors: MutableSequence[Tensor] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    source: Source | None = None
    readable: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    shard_sources: dict[str, Source] = field(default_factory=dict)
    generation_of: str | None = None
    generation_number: int | None = None
    opening: int = field(default_factory=lambda: next(_OPENINGS), compare=False)
    _by_name: dict[str, int] | None = field(default=None, repr=False)

    @property
    def kind(self) -> str:
        """``format`` plus what ``variant`` adds to it (``zt v1.0``, ``safetensors``, ``zt-v2``, ``zt-v2 data
        shard``: the ``v2`` the format names already is not repeated)."""
        variant, (_, dash, version) = self.variant, self.format.rpartition("-")
        if dash and (variant == version or variant.startswith(version + " ")):
            variant = variant[len(version):].lstrip()
        return self.format if variant in ("", self.format) else f"{self.format} {variant}"

    def tensor_names(self) -> list[str]:
        """Every tensor's name in file order (duplicates included), without building deferred tensors."""
        names = getattr(self.tensors, "tensor_names", None)
        return names() if names is not None else [t.name for t in self.tensors]

    def tensor(self, name: str) -> Tensor:
        if self._by_name is None:
            names = self.tensor_names()
            # reversed, so that the first occurrence of a repeated name is the one that stays
            self._by_name = dict(zip(reversed(names), range(len(names) - 1, -1, -1)))
        try:
            return self.tensors[self._by_name[name]]
        except KeyError:
            raise KeyError(f"no tensor named {name!r} in {self.path}") from None

    def source_for(self, tensor: Tensor, component: Component | None = None) -> Source:
        """The source holding a tensor's bytes: the file's own, or its shard's in a multi-file set. A component
        stored in another file (a zTensor v2 part with a ``shard``) names that file's source itself; when the
        shard could not be opened this raises ``ValueError`` rather than read the wrong file."""
        if component is not None and component.shard is not None:
            if component.source is None:
                raise ValueError(f"part {component.role!r} of {tensor.name!r} is in shard "
                                 f"{component.shard!r}, which is not available")
            return component.source
        source = tensor.source or self.source
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
        built = getattr(self.tensors, "built", None)  # a tensor table: only built tensors can have problems
        for t in self.tensors if built is None else built():
            if t._problems:
                yield from t._problems

    @property
    def has_errors(self) -> bool:
        return any(p.is_error for p in self.all_problems())

    def close(self) -> None:
        if self.source is not None:
            self.source.close()
        for source in self.shard_sources.values():
            source.close()

    def __enter__(self) -> TensorFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
