"""Attribute changes between two attribute maps (file level or tensor level)."""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .model import AttrChange, AttrKind


def same_value(a: Any, b: Any) -> bool:
    """Equality of attribute values: types must match (``True`` is not ``1``), NaN equals NaN, containers
    compare element by element."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    try:
        equal = a == b
        return bool(equal) if isinstance(equal, bool) else bool(getattr(equal, "all", lambda: False)())
    except Exception:
        return False


def attribute_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[AttrChange]:
    """Keys removed (in ``a`` only), changed, and added (in ``b`` only), in ``a``'s then ``b``'s order."""
    changes = []
    for key, value in a.items():
        if key not in b:
            changes.append(AttrChange(str(key), AttrKind.REMOVED, value, None))
        elif not same_value(value, b[key]):
            changes.append(AttrChange(str(key), AttrKind.CHANGED, value, b[key]))
    changes.extend(AttrChange(str(key), AttrKind.ADDED, None, value) for key, value in b.items() if key not in a)
    return changes
