"""What the tensor tree marks on a tensor's name beyond the codec model: problems found after opening (a
decode, Check File) and unsaved renames and deletions (Qt-free; the tree model paints them)."""
from __future__ import annotations

from collections.abc import Sequence

from ztviewer.codec import Problem, Tensor, TensorFile
from ztviewer.codec.errors import Severity
from ztviewer.codec.tensor_queries import tensor_names, tensor_positions

from .edit_session import EditSession

FILE_POSITION = -1     # where a problem naming no tensor (or an unknown one) is kept


class FoundProblems:
    """Problems found since the file was opened, by tensor position (the file's own at ``FILE_POSITION``)."""

    def __init__(self, tensors: Sequence[Tensor]) -> None:
        self.tensors = tensors
        self._found: dict[int, list[Problem]] = {}
        self._by_name: dict[str, int] | None = None

    def of_file(self, tensor_file: TensorFile) -> list[Problem]:
        """The reader's problems of the file plus those found since."""
        return tensor_file.problems + self._found.get(FILE_POSITION, [])

    def of_tensor(self, position: int | None, tensor: Tensor) -> list[Problem]:
        """The reader's problems of the tensor at ``position`` plus those found since (``None``: not this file's)."""
        found = self._found.get(position) if position is not None else None
        return tensor.problems + found if found else tensor.problems

    def level(self, position: int | None, own: Sequence[Problem]) -> Severity | None:
        """The worst severity among ``own`` (the reader's) and the problems found at ``position``; ``None`` when
        there is none (no list is built: a tree asks this for every row it paints)."""
        found = self._found.get(position) if position is not None else None
        if not own and not found:
            return None
        if any(p.is_error for p in own) or (found and any(p.is_error for p in found)):
            return Severity.ERROR
        return Severity.WARNING

    def add(self, problems: Sequence[Problem]) -> list[int]:
        """Keep the problems not known yet; returns the positions (``FILE_POSITION``: the file) that gained one."""
        if self._by_name is None:
            self._by_name = {}
            for position, name in enumerate(tensor_names(self.tensors)):
                self._by_name.setdefault(name, position)
        touched: dict[int, None] = {}
        for problem in problems:
            position = self._by_name.get(problem.tensor, FILE_POSITION) if problem.tensor is not None \
                else FILE_POSITION
            known = self._found.setdefault(position, [])
            if problem not in known and (position == FILE_POSITION or problem not in self.tensors[position].problems):
                known.append(problem)
                touched[position] = None
        return list(touched)


class PendingNames:
    """Unsaved renames and deletions: position -> the name the next save gives the tensor (``None``: deleted)."""

    def __init__(self, tensors: Sequence[Tensor], edits: EditSession | None) -> None:
        self.tensors = tensors
        self.edits = edits
        self.state: dict[int, str | None] = {}

    def renamed(self) -> dict[int, str]:
        """position -> pending new name, of every tensor renamed by unsaved edits."""
        return {position: new for position, new in self.state.items() if new is not None}

    def refresh(self) -> tuple[list[int], bool]:
        """Read the edits again; returns the positions whose mark changed and whether a shown name changed."""
        current = self.edits.current_names() if self.edits is not None else None
        state: dict[int, str | None] = {}
        if current is not None:
            positions = tensor_positions(self.tensors)   # the document built every tensor it holds
            new_names = {positions[id(original)]: name for original, name in current if id(original) in positions}
            for position, name in enumerate(tensor_names(self.tensors)):
                new = new_names.get(position)
                if new != name:
                    state[position] = new
        old = self.state
        changed = [p for p in old.keys() | state.keys()
                   if (p in old, old.get(p)) != (p in state, state.get(p))]   # None: deleted, not unmarked
        renamed_before = self.renamed()
        self.state = state
        return sorted(changed), self.renamed() != renamed_before

    def name(self, position: int, name: str) -> str:
        """The name the user sees for the tensor at ``position`` named ``name`` in the file: its pending new name,
        else its own (a deleted tensor is shown, struck out, under its name). The name column shows it, the filter
        matches it and sorting by name orders by it."""
        new = self.state.get(position)
        return name if new is None else new

    def shown_names(self) -> list[str]:
        """:meth:`name` of every tensor, by position."""
        names = tensor_names(self.tensors)
        for position in self.state:
            names[position] = self.name(position, names[position])
        return names
