"""Which plane of an N-D tensor the inspect view shows (napari's ``Dims``): the two displayed axes (rows,
columns) and an index on every other axis. No Qt: the axis widgets render a :class:`Dims` and change it."""
from __future__ import annotations

from .events import Event

SHAPE, AXES, INDEX = "shape", "axes", "index"


class Dims:
    """Displayed axes and slice indices for a tensor of ``shape``.

    ``changed`` announces what changed: ``"shape"`` (a new tensor), ``"axes"`` (other displayed axes) or
    ``"index"`` (a slice index moved). Indices are kept per axis number and clamped to the extent, so moving to
    a tensor of similar shape keeps the slice being looked at.
    """

    def __init__(self, shape: tuple[int, ...] = ()) -> None:
        self.shape: tuple[int, ...] = ()
        self._axes = (0, 1)
        self._point: dict[int, int] = {}
        self.changed: Event[str] = Event("dims.changed")
        if shape:
            self.set_shape(shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def axes(self) -> tuple[int, int]:
        """(row axis, column axis); ``(0, 1)`` below 2-D."""
        return self._axes if self.ndim >= 2 else (0, 1)

    @property
    def displayed(self) -> tuple[int, ...]:
        return self._axes if self.ndim >= 2 else tuple(range(self.ndim))

    @property
    def fixed_axes(self) -> list[int]:
        """Axes not displayed, in order: each has a slice index."""
        shown = set(self.displayed)
        return [axis for axis in range(self.ndim) if axis not in shown]

    def fixed(self) -> dict[int, int]:
        """Slice index of every axis not displayed."""
        return {axis: self._clamped(axis, self._point.get(axis, 0)) for axis in self.fixed_axes}

    def set_shape(self, shape: tuple[int, ...], axes: tuple[int, int] = (0, 1)) -> None:
        """A new tensor: ``axes`` displayed (the first axes where ``axes`` does not fit), indices kept, clamped."""
        old = self.fixed()
        self.shape = tuple(int(d) for d in shape)
        rows, cols = (a if 0 <= a < self.ndim else 0 for a in axes)
        if rows == cols and self.ndim >= 2:
            rows, cols = 0, 1
        self._axes = (rows, cols)
        self._point = {axis: self._clamped(axis, value) for axis, value in old.items() if axis < self.ndim}
        self.changed.emit(SHAPE)

    def set_axes(self, rows: int, cols: int) -> None:
        if not (0 <= rows < self.ndim and 0 <= cols < self.ndim) or rows == cols:
            raise ValueError(f"axes ({rows}, {cols}) are not two different axes of a {self.ndim}-D tensor")
        if (rows, cols) != self._axes:
            self._keep_point()
            self._axes = (rows, cols)
            self.changed.emit(AXES)

    def set_row_axis(self, axis: int) -> None:
        """Show ``axis`` down the rows; taking the column axis swaps the two."""
        rows, cols = self._axes
        self.set_axes(axis, rows if axis == cols else cols)

    def set_col_axis(self, axis: int) -> None:
        """Show ``axis`` across the columns; taking the row axis swaps the two."""
        rows, cols = self._axes
        self.set_axes(cols if axis == rows else rows, axis)

    def set_index(self, axis: int, value: int) -> None:
        """Move the slice of a non-displayed axis (clamped to its extent)."""
        if axis not in self.fixed_axes:
            raise ValueError(f"axis {axis} is not a sliced axis of this plane (displayed: {self.displayed})")
        value = self._clamped(axis, value)
        if self._point.get(axis, 0) != value or axis not in self._point:
            self._point[axis] = value
            self.changed.emit(INDEX)

    def index_of(self, row: int, col: int) -> tuple[int, ...]:
        """The full tensor index of plane pixel ``(row, col)`` (0-D and 1-D tensors are one row)."""
        if self.ndim == 0:
            return ()
        if self.ndim == 1:
            return (col,)
        index = [0] * self.ndim
        r, c = self.axes
        index[r], index[c] = row, col
        for axis, value in self.fixed().items():
            index[axis] = value
        return tuple(index)

    def _keep_point(self) -> None:
        """Only the axes sliced now keep their index (an axis displayed in between starts again at 0)."""
        self._point = self.fixed()

    def _clamped(self, axis: int, value: int) -> int:
        return min(max(0, int(value)), max(0, self.shape[axis] - 1))
