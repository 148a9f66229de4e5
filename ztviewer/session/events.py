"""Plain callbacks for session state changes (no Qt): a view connects a function and is called on every change.

Callbacks run synchronously in the thread that changed the state (the GUI thread in the app); a callback that
raises propagates to the code that made the change, so a bug in a view is not silently swallowed.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Event(Generic[T]):
    """One kind of change; ``emit(value)`` calls every connected callback with ``value`` in connection order."""

    __slots__ = ("_callbacks", "name")

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._callbacks: list[Callable[[T], object]] = []

    def connect(self, callback: Callable[[T], object]) -> Callable[[T], object]:
        """Call ``callback(value)`` on every emit (connecting the same callback twice calls it once)."""
        if callback not in self._callbacks:
            self._callbacks.append(callback)
        return callback

    def disconnect(self, callback: Callable[[T], object]) -> None:
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def disconnect_all(self) -> None:
        self._callbacks.clear()

    def emit(self, value: T) -> None:
        for callback in list(self._callbacks):  # a callback may disconnect itself
            callback(value)

    def __len__(self) -> int:
        return len(self._callbacks)

    def __repr__(self) -> str:
        return f"<Event {self.name or '?'} ({len(self._callbacks)} callbacks)>"
