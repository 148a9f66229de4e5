"""Manifest keys a reader kept without understanding them, and what a save does with them.

The zTensor readers keep every map key they do not know: at the root (``TensorFile.extra["unknown_keys"]``), in
an object / tensor entry (``Tensor.extra["unknown_keys"]``) and in a part / component entry (v2:
``Component.extra["unknown_keys"]``; v1.x: the component's ``extra`` besides its logical ``type``). A save in the
file's own format carries them over unchanged at every level, so an edit never drops what it does not
understand. Any other format cannot hold them (their meaning belongs to the format that wrote them): such a
save drops them and says which, where (:class:`DroppedKeys`). So does a safetensors save of the keys a safetensors
entry holds besides ``dtype``, ``shape`` and ``data_offsets`` (``Tensor.extra["unknown_keys"]``), which the format
defines no place for.
"""
from __future__ import annotations

from typing import Any

from ..model import Component, Tensor, TensorFile
from ..text import value_text
from .targets import TARGETS, Target

#: ``(format, variant)`` of the files whose unknown keys a target keeps
_FAMILY = {("zt", "v1.0"): "zt-v1.0", ("zt", "v1.x-objects"): "zt-objects", ("zt-v2", "v2"): "zt-v2",
           ("zt-v2", "v2 earlier generation"): "zt-v2"}
#: places named in full in a warning; more are counted
SHOWN_PLACES = 8


def keeps_unknown_keys(tf: TensorFile, target: Target) -> bool:
    """Whether saving ``tf`` as ``target`` writes the same manifest schema, so its unknown keys can stay."""
    return _FAMILY.get((tf.format, tf.variant)) == target.key


def cannot_hold(tf: TensorFile, target: Target) -> str:
    """The reason a save of ``tf`` as ``target`` drops its unknown keys."""
    family = _FAMILY.get((tf.format, tf.variant), tf.format)
    source = TARGETS[family].label if family in TARGETS else f"{tf.format} {tf.variant}".strip()
    if family == target.key:  # safetensors: its entries hold dtype, shape and data_offsets only
        return f"{target.label} defines no place for them and its reference reader ignores them"
    return f"{target.label} cannot hold keys of a {source} manifest"


def root_keys(tf: TensorFile) -> dict[Any, Any]:
    """The manifest root's unknown keys."""
    found = tf.extra.get("unknown_keys")
    return dict(found) if isinstance(found, dict) else {}


def tensor_keys(tensor: Tensor) -> dict[Any, Any]:
    """An object / tensor entry's unknown keys."""
    found = tensor.extra_value("unknown_keys")
    return dict(found) if isinstance(found, dict) else {}


def part_keys(tf: TensorFile, component: Component) -> dict[Any, Any]:
    """A part / component entry's unknown keys."""
    extra = component.extra or {}
    if tf.format == "zt-v2":
        found = extra.get("unknown_keys")
        return dict(found) if isinstance(found, dict) else {}
    if tf.format == "zt" and tf.variant == "v1.x-objects":
        return {k: v for k, v in extra.items() if k != "type"}
    if tf.format == "zt" and tf.variant == "v1.0":
        return dict(extra)
    return {}


class DroppedKeys:
    """Unknown keys a save cannot write, by place, turned into one warning per reason."""

    def __init__(self) -> None:
        self._places: dict[str, list[tuple[str, list[Any]]]] = {}

    def add(self, reason: str, where: str, keys: dict[Any, Any]) -> None:
        if keys:
            self._places.setdefault(reason, []).append((where, list(keys)))

    def warnings(self) -> list[str]:
        out = []
        for reason, places in self._places.items():
            shown = "; ".join(f"{where}: {', '.join(map(_key, keys))}" for where, keys in places[:SHOWN_PLACES])
            more = len(places) - SHOWN_PLACES
            out.append(f"manifest keys ztviewer does not understand are dropped ({reason}): {shown}"
                       + (f"; and {more:,} more places" if more > 0 else ""))
        return out


def _key(key: Any) -> str:
    return value_text(key, 60)
