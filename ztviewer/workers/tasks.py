"""The background jobs of the app: opening a file and verifying digests."""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ztviewer.codec import Problem, Severity, TensorFile
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.errors import CodecError, DigestMismatch
from ztviewer.codec.model import Component, Tensor
from ztviewer.codec.source import LocalFile

from .base import Worker


def open_path(path: str, *args: Any, **kwargs: Any) -> TensorFile:
    """:func:`ztviewer.codec.multifile.open_path`, imported on the first open (in the worker, not at start-up)."""
    from ztviewer.codec.multifile import open_path as open_any

    return open_any(path, *args, **kwargs)


@dataclass(slots=True)
class OpenedFile:
    """What :class:`OpenFileTask` delivers: the parsed file and the result of the optional analysis."""

    tensor_file: TensorFile
    analysis: Any = None
    seconds: float = 0.0


class OpenFileTask(Worker):
    """Parse a file's container and manifest off the GUI thread.

    A file whose content is bad still arrives (``readable=False`` and its problems); only a path that cannot
    be opened at all fails. ``analyse`` (a plain function of the :class:`TensorFile`) runs on the same worker
    thread, so callers can add their own whole-file pass (the GUI builds its file map there).
    """

    def __init__(self, path: str | os.PathLike[str], analyse: Callable[[TensorFile], Any] | None = None,
                 reader: Callable[[str], TensorFile] | None = None) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self.analyse = analyse
        self.reader = reader or read_tensor_file   # e.g. an earlier generation of a zTensor v2 file

    def execute(self) -> OpenedFile:
        start = time.perf_counter()
        tensor_file = self.reader(self.path)
        self.check_cancelled()
        analysis = self.analyse(tensor_file) if self.analyse is not None else None
        return OpenedFile(tensor_file, analysis, time.perf_counter() - start)


def read_tensor_file(path: str) -> TensorFile:
    """:func:`open_path` (files, shard sets, datasets), except that a failure inside a reader becomes a problem
    instead of an exception."""
    try:
        return open_path(path)
    except OSError:
        raise
    except CodecError as exc:  # a folder or JSON that is not a tensor set
        problem = exc.to_problem()
        return TensorFile(path=path, format="unknown", readable=False, problems=[problem])
    except Exception as exc:  # a reader bug or a missing reader must not lose the file's bytes
        source = LocalFile(path)
        problem = Problem(Severity.ERROR, f"the reader failed: {type(exc).__name__}: {exc}",
                          rule="internal reader error")
        ext = os.path.splitext(path)[1].lstrip(".").lower() or "unknown"
        return TensorFile(path=path, format=ext, source=source, readable=False, problems=[problem])


@dataclass(frozen=True, slots=True)
class ComponentCheck:
    """Outcome of verifying one component (``problem`` is set unless ``state`` is OK)."""

    tensor: Tensor
    role: str
    state: DigestState
    problem: Problem | None = None


@dataclass(frozen=True, slots=True)
class VerifySummary:
    checked: int
    ok: int
    mismatched: int
    invalid: int
    bytes_done: int
    seconds: float


class VerifyDigestsTask(Worker):
    """Verify recorded digests of ``targets`` ((tensor, component) pairs) of ``tensor_file``.

    Each tensor's bytes are read from ``tensor_file.source_for(tensor)`` (its shard in a multi-file set).
    ``progress`` is (bytes done, bytes in all); ``partial`` carries lists of :class:`ComponentCheck`, batched
    so that a file with 100,000 tiny components does not flood the GUI thread. The digest API polls the
    cancel flag between chunks of at most 8 MiB.
    """

    def __init__(self, tensor_file: TensorFile, targets: Sequence[tuple[Tensor, Component]],
                 batch_interval: float = 0.1) -> None:
        super().__init__()
        self.tensor_file = tensor_file
        self.targets = list(targets)
        self.total_bytes = sum(c.length for _, c in self.targets)
        self._batch_interval = batch_interval

    def execute(self) -> VerifySummary:
        start = time.perf_counter()
        done = 0
        counts = {DigestState.OK: 0, DigestState.MISMATCH: 0, DigestState.INVALID: 0}
        batch: list[ComponentCheck] = []
        last_flush = time.monotonic()

        def advance(nbytes: int) -> None:
            nonlocal done
            done += nbytes
            self.report_progress(done, self.total_bytes)

        try:
            for tensor, component in self.targets:
                self.check_cancelled()
                before = done
                check = self._verify_one(tensor, component, advance)
                done = before + component.length  # a failed range still counts as handled
                counts[check.state] += 1
                batch.append(check)
                if time.monotonic() - last_flush >= self._batch_interval:
                    self.signals.partial.emit(batch)
                    batch, last_flush = [], time.monotonic()
                    self.report_progress(done, self.total_bytes)
        finally:
            if batch:
                self.signals.partial.emit(batch)
        self.report_progress(done, self.total_bytes, force=True)
        return VerifySummary(len(self.targets), counts[DigestState.OK], counts[DigestState.MISMATCH],
                             counts[DigestState.INVALID], done, time.perf_counter() - start)

    def _verify_one(self, tensor: Tensor, component: Component, advance: Callable[[int], None]) -> ComponentCheck:
        from ztviewer.codec.digest import verify_component  # crc32c loads importlib.metadata: not at start-up

        try:
            source = self.tensor_file.source_for(tensor, component)
        except ValueError as exc:  # no open source holds this tensor's bytes
            problem = Problem(Severity.ERROR, str(exc), tensor=tensor.name, component=component.role,
                              offset=component.offset, rule="digest over the stored bytes")
            return ComponentCheck(tensor, component.role, DigestState.INVALID, problem)
        try:
            verify_component(source, tensor, component, progress=advance, cancelled=self.is_cancelled)
        except DigestMismatch as exc:
            return ComponentCheck(tensor, component.role, DigestState.MISMATCH, exc.to_problem())
        except CodecError as exc:  # malformed or unsupported digest, range outside the file
            if exc.offset is None:
                exc.offset = component.offset
            problem = exc.located(tensor=tensor.name, component=component.role).to_problem()
            return ComponentCheck(tensor, component.role, DigestState.INVALID, problem)
        return ComponentCheck(tensor, component.role, DigestState.OK)


class AnalysisTask(Worker):
    """Run ``job(task)`` on a pool thread: any Qt-free computation of a view (previews, reductions,
    statistics, spy plots).

    The job receives this task and uses :meth:`is_cancelled` / :meth:`check_cancelled`,
    :meth:`report_progress` and :meth:`emit_partial` (e.g. a first coarse image before the exact one).
    ``tag`` is free for the caller (which view, which request) to recognise results of stale jobs.
    """

    def __init__(self, job: Callable[[AnalysisTask], Any], tag: Any = None,
                 progress_interval: float = 0.05) -> None:
        super().__init__(progress_interval)
        self.job = job
        self.tag = tag

    def emit_partial(self, value: Any) -> None:
        if not self.is_cancelled():
            self.signals.partial.emit(value)

    def execute(self) -> Any:
        return self.job(self)


class SaveTask(Worker):
    """Save an edited document (``codec.save``: temporary file, fsync, rename) off the GUI thread.

    ``progress`` is (bytes written, bytes to write); cancelling removes the temporary file and leaves the
    target as it was. ``doc`` must not change while the task runs (the GUI passes a copy). ``compact`` writes
    a zTensor v2 file saved over itself afresh instead of appending a generation.
    """

    def __init__(self, doc: Any, path: str | os.PathLike[str], compact: bool = False) -> None:
        super().__init__()
        self.doc = doc
        self.path = os.fspath(path)
        self.compact = compact

    def execute(self) -> Any:
        from ztviewer.codec.save import save

        return save(self.doc, self.path, progress=self.report_progress, cancelled=self.is_cancelled,
                    compact=self.compact)


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """What :class:`CheckFileTask` delivers: the codec's report and how long the check took."""

    report: Any            # ztviewer.codec.check.CheckReport
    tensors: int
    seconds: float


class CheckFileTask(Worker):
    """Check File: structure, decoding of every tensor and every digest (``ztviewer check``), off the GUI thread.

    ``progress`` is (tensors started, tensors in all); the codec polls the cancel flag between decoded chunks.
    """

    def __init__(self, tensor_file: TensorFile) -> None:
        super().__init__()
        self.tensor_file = tensor_file
        self.total = len(tensor_file.tensors)
        self.current_name = ""

    def execute(self) -> CheckOutcome:
        from ztviewer.codec.check import check_file

        start = time.perf_counter()
        started = 0

        def progress(name: str) -> None:
            nonlocal started
            self.check_cancelled()
            self.current_name = name
            self.report_progress(started, self.total)
            started += 1

        report = check_file(self.tensor_file, progress, self.is_cancelled)
        self.check_cancelled()
        self.report_progress(self.total, self.total, force=True)
        return CheckOutcome(report, self.total, time.perf_counter() - start)
