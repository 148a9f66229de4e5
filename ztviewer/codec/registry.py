"""Format registry: the built-in :class:`~.format_spec.FormatSpec` list, third-party formats registered
through the ``ztviewer.formats`` entry-point group, and any registered with :func:`register`.

Detection is by content only (:attr:`FormatSpec.sniff` with a :class:`~.format_spec.Probe`); the extension is
a hint for the message when nothing matches. Built-in formats are asked first; the entry points are loaded
only when no built-in format claims a file, or when every format is listed (:func:`formats`), so opening a
built-in format's file costs no entry-point scan.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .append_journal import journal_present
from .errors import CodecError, UnknownFormat
from .format_spec import FormatSpec, Probe, Reader
from .formats.builtin import BUILTIN_FORMATS
from .io.adapted import as_source
from .model import Problem, Severity, TensorFile, warning
from .source import LocalFile, Source

if TYPE_CHECKING:
    from .io.protocol import ByteSource

ENTRY_POINT_GROUP = "ztviewer.formats"

_REGISTERED: list[FormatSpec] = []          # by :func:`register`, after the built-in ones
_PLUGINS: list[FormatSpec] | None = None     # from the entry points, once loaded
_PLUGIN_PROBLEMS: list[Problem] = []


def register(spec: FormatSpec) -> FormatSpec:
    """Add a format (replacing one of the same name that was registered before)."""
    _REGISTERED[:] = [s for s in _REGISTERED if s.name != spec.name]
    _REGISTERED.append(spec)
    return spec


def unregister(name: str) -> None:
    _REGISTERED[:] = [s for s in _REGISTERED if s.name != name]


def builtin_formats() -> tuple[FormatSpec, ...]:
    return BUILTIN_FORMATS


def formats() -> list[FormatSpec]:
    """Every known format: built-in, registered, then from the entry points (a name already taken is skipped)."""
    found = list(BUILTIN_FORMATS) + [s for s in _REGISTERED if s.name not in {b.name for b in BUILTIN_FORMATS}]
    names = {s.name for s in found}
    return found + [s for s in plugin_formats() if s.name not in names]


def plugin_formats() -> list[FormatSpec]:
    """The formats third-party packages declare in the ``ztviewer.formats`` entry-point group (loaded once)."""
    global _PLUGINS
    if _PLUGINS is None:
        _PLUGINS = _load_plugins()
    return list(_PLUGINS)


def plugin_problems() -> list[Problem]:
    """Why an entry point of the group gave no format (it failed to import, or is not a FormatSpec)."""
    plugin_formats()
    return list(_PLUGIN_PROBLEMS)


def reload_plugins() -> None:
    """Forget the loaded entry points (a package was installed meanwhile)."""
    global _PLUGINS
    _PLUGINS = None
    _PLUGIN_PROBLEMS.clear()


def _load_plugins() -> list[FormatSpec]:
    from importlib.metadata import entry_points

    found = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            spec = point.load()
            if callable(spec) and not isinstance(spec, FormatSpec):
                spec = spec()
        except Exception as exc:  # a broken third-party package must not stop the built-in formats
            _PLUGIN_PROBLEMS.append(warning(f"format plug-in {point.name!r} ({point.value}) failed to load: "
                                            f"{type(exc).__name__}: {exc}", rule="ztviewer.formats entry points"))
            continue
        if not isinstance(spec, FormatSpec):
            _PLUGIN_PROBLEMS.append(warning(f"format plug-in {point.name!r} ({point.value}) is not a FormatSpec",
                                            rule="ztviewer.formats entry points"))
            continue
        found.append(spec)
    return found


def target_extensions() -> dict[str, str]:
    """Every writer target (:mod:`.writers.targets` key) of the built-in formats, in the order offered, with the
    extension its files get."""
    return {key: spec.extensions[0] for spec in BUILTIN_FORMATS for key in spec.targets}


def default_targets() -> dict[str, str]:
    """The target an output file's extension chooses: the first format that claims it (``.zt`` → zTensor v2)."""
    found: dict[str, str] = {}
    for spec in BUILTIN_FORMATS:
        for ext in spec.extensions:
            if spec.targets:
                found.setdefault(ext, spec.targets[0])
    return found


def format_named(name: str) -> FormatSpec:
    for spec in formats():
        if spec.name == name:
            return spec
    raise KeyError(name)


def spec_of(tf: TensorFile) -> FormatSpec | None:
    """The spec of an opened file's format (``None`` for a set or a format no longer registered)."""
    known: list[FormatSpec] = [*BUILTIN_FORMATS, *_REGISTERED, *(_PLUGINS or [])]
    for spec in known:
        if spec.name == tf.format:
            return spec
    return None


def detect(probe: Probe) -> FormatSpec | None:
    """The format that claims the file: built-in and registered ones first, then the plug-ins, then a format
    whose damaged-file test (a trailer) recognises it."""
    first = [*BUILTIN_FORMATS, *_REGISTERED]
    for spec in first:
        if spec.sniff(probe):
            return spec
    later = [s for s in plugin_formats() if s.name not in {f.name for f in first}]
    for spec in later:
        if _sniffs(spec, probe):
            return spec
    return next((s for s in first + later if s.sniff_damaged is not None and s.sniff_damaged(probe)), None)


def _sniffs(spec: FormatSpec, probe: Probe) -> bool:
    try:
        return spec.sniff(probe)
    except CodecError:
        raise
    except Exception:  # a plug-in's sniff that fails claims nothing
        return False


def _extension_hint(path: str) -> FormatSpec | None:
    ext = os.path.splitext(path)[1].lower()
    for spec in sorted(formats(), key=lambda s: s.name):  # by name: ".zt" → "zt" before "zt-v2"
        if ext in spec.extensions:
            return spec
    return None


def read_source(source: Source, read: Reader | None = None) -> TensorFile:
    """Parse an already opened source (with ``read`` instead of its format's reader when given). Always returns a
    TensorFile; a fatal container error makes it ``readable=False`` with the error in ``problems``."""
    spec: FormatSpec | None = None
    try:
        spec = detect(Probe(source))
        if spec is None:
            raise _unknown_format_error(source)
        tf = (read or spec.reader())(source)
    except CodecError as exc:
        hint = _extension_hint(source.path)
        fmt = spec.name if spec else (hint.name if hint else "unknown")
        return TensorFile(path=source.path, format=fmt, variant="", source=source, readable=False,
                          problems=[exc.to_problem()])
    tf.source = source
    return tf


def open_source(source: ByteSource | Source) -> TensorFile:
    """Parse a file from any source (:class:`~.io.memory.InMemorySource`, :class:`~.io.fsspec_file.FsspecSource`,
    or any object implementing the :class:`~.io.protocol.ByteSource` protocol), named by its ``path``; as
    :func:`read_source`."""
    return read_source(as_source(source))


def open_file(path: str | os.PathLike[str]) -> TensorFile:
    """Open and parse a tensor file (raises ``OSError`` only when the path cannot be opened). Nothing is written.

    A zTensor v2 append a crash interrupted (its journal beside the file applies) opens as the previous
    generation, the warning saying so first among the problems; any other journal is ignored with a warning
    that says why (:mod:`.interrupted_append`), after the error of a file that cannot be read."""
    source = LocalFile(path)
    if not journal_present(path):
        return read_source(source)
    from .interrupted_append import APPLICABLE, examine_journal, read_previous_generation

    finding = examine_journal(source)
    if finding is None:
        return read_source(source)
    applicable = finding.verdict == APPLICABLE
    tf = read_source(source, (lambda s: read_previous_generation(s, finding)) if applicable else None)
    tf.problems.insert(0 if tf.readable else len(tf.problems), finding.problem)  # first: why it cannot be read
    return tf


def _unknown_format_error(source: Source) -> UnknownFormat:
    hint = _extension_hint(source.path)
    if source.size == 0:
        what = "the file is empty (0 bytes)"
    else:
        shown = source.read(0, min(8, source.size), "the leading bytes")
        what = f"unrecognised leading bytes {shown!r} ({source.size} bytes in all)"
    if hint is not None:
        expected = hint.signature or f"not recognised as {hint.description} ({', '.join(hint.extensions)})"
    else:
        expected = "known formats: " + ", ".join(f"{s.description} ({', '.join(s.extensions)})" for s in formats())
    return UnknownFormat(f"not a tensor file ztviewer can read: {what}; {expected}", offset=0,
                         rule="format detection by magic bytes")


__all__ = [
    "ENTRY_POINT_GROUP",
    "FormatSpec",
    "Probe",
    "Problem",
    "Reader",
    "Severity",
    "builtin_formats",
    "default_targets",
    "detect",
    "format_named",
    "formats",
    "open_file",
    "open_source",
    "plugin_formats",
    "read_source",
    "register",
    "spec_of",
    "target_extensions",
]
