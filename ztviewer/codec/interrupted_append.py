"""A zTensor v2 append that a crash interrupted: found when a file is opened, rolled back only when asked.

Opening never writes. A journal beside the file (:mod:`.append_journal`) is *applicable* only when all of this
holds: it is a sound journal no live save holds, the file is zTensor v2, the footer at its end does not verify,
and the journal's ``old_length`` ends exactly at a sound v2 footer (magic, version, bounds, manifest hash) whose
40 bytes hash to the journal's ``old_footer``. Then the file opens as that previous generation, with a warning
that says so and how to roll the append back (:func:`repair`: ``ztviewer repair FILE``, the window's Repair
action, or the writer's own next append). Any other journal is *stale* (the file's end footer verifies) or
*ignored*, with a warning naming it and the reason; the file is read as it is.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from .append_journal import UnusableJournal, being_written, footer_hash, journal_path, read_journal, remove_journal
from .errors import CodecError
from .formats.magic import ZT_V2_MAGIC
from .formats.zt_v2.container import FOOTER_SIZE, Footer, footer_ending_at, read_footer, read_manifest_bytes
from .model import Problem, Region, TensorFile, error, warning
from .portable import O_BINARY, truncate
from .source import LocalFile, Source

RULE = "an interrupted zTensor v2 append is rolled back only on request: ztviewer repair (spec §2.5)"
APPLICABLE, STALE, IGNORED = "applicable", "stale", "ignored"
REPAIR_HINT = "`ztviewer repair FILE` (or File ▸ Repair Interrupted Save… in the window) rolls it back"


@dataclass(frozen=True, slots=True)
class JournalFinding:
    """What a journal beside a file means for it: ``verdict`` is :data:`APPLICABLE`, :data:`STALE` or
    :data:`IGNORED`; ``problem`` is the warning that says so. An applicable one knows the sound ``footer`` that
    ends the previous generation and ``end_problem``, why the footer at the end of the file does not verify."""

    verdict: str
    journal_file: str
    problem: Problem
    footer: Footer | None = None
    end_problem: Problem | None = None

    @property
    def old_length(self) -> int:
        assert self.footer is not None
        return self.footer.end


@dataclass(frozen=True, slots=True)
class RepairOutcome:
    """What :func:`repair` did: ``refused`` (nothing changed) or not, and the sentence that says it."""

    refused: bool
    message: str
    removed: int = 0  # bytes cut from the end of the file


def examine_journal(source: Source) -> JournalFinding | None:
    """The journal beside ``source``'s file judged against the file, reading only (``None``: there is none)."""
    journal_file = journal_path(source.path)
    if not os.path.lexists(journal_file):
        return None
    name = os.path.basename(journal_file)

    def ignored(reason: str) -> JournalFinding:
        return JournalFinding(IGNORED, journal_file, warning(f"the append journal {name} is ignored: {reason}; "
                                                             "the file was not changed", rule=RULE))
    try:
        journal = read_journal(journal_file, source.size)
    except UnusableJournal as exc:
        return ignored(str(exc))
    if being_written(journal_file):
        return ignored("a save is appending to the file right now (its journal is locked); reload when it ends")
    if source.head(len(ZT_V2_MAGIC)) != ZT_V2_MAGIC:
        return ignored("the file is not zTensor v2, the only format whose appends are journaled")
    end_problem = _end_footer_problem(source)
    if end_problem is None:
        return JournalFinding(STALE, journal_file, warning(
            f"the append journal {name} is stale and ignored: the footer at the end of the file verifies (its "
            "generation is complete); the file was not changed", rule=RULE))
    old = journal.old_length
    footer = footer_ending_at(source, old)
    if footer is None:
        return ignored(f"no sound zTensor v2 footer ends at byte {old:,}, where it says the previous generation "
                       "ended")
    if footer_hash(source.read(old - FOOTER_SIZE, FOOTER_SIZE, "footer")) != journal.old_footer:
        return ignored(f"the footer that ends at byte {old:,} is not the one it recorded (old_footer)")
    problem = warning(f"an interrupted append was found (journal {name}): the {source.size - old:,} bytes after "
                      f"byte {old:,} are an incomplete generation; the file is shown as its previous generation and "
                      f"was not changed. {REPAIR_HINT}", offset=old, rule=RULE)
    return JournalFinding(APPLICABLE, journal_file, problem, footer, end_problem)


def _end_footer_problem(source: Source) -> Problem | None:
    """Why the footer at the end of the file does not verify (``None``: it does)."""
    try:
        footer = read_footer(source)
        if not footer.is_data_shard:
            read_manifest_bytes(source, footer)
    except CodecError as exc:
        return error(f"the end of the file is not a sound footer: {exc.message}", offset=exc.offset, rule=exc.rule)
    return None


def interrupted_append_of(tf: TensorFile) -> JournalFinding | None:
    """The applicable journal ``tf`` was opened with (it shows the generation before an interrupted append)."""
    found = tf.extra.get("_interrupted_append")
    return found if isinstance(found, JournalFinding) else None


def read_previous_generation(source: Source, finding: JournalFinding) -> TensorFile:
    """The file as the previous generation an applicable ``finding`` names: its tensors, the incomplete bytes
    after it as a region, and why the end of the file does not verify as an error."""
    from .formats.zt_v2 import read

    assert finding.footer is not None and finding.end_problem is not None
    tf = read(source, finding.footer)
    old = finding.old_length
    tf.regions.append(Region("interrupted-append", old, source.size - old,
                             "an interrupted append (not part of the file; Repair removes it)"))
    tf.problems.insert(0, finding.end_problem)
    tf.extra["_interrupted_append"] = finding
    return tf


def repair(path: str | os.PathLike[str], release: Callable[[], None] | None = None) -> RepairOutcome:
    """Roll back the interrupted append of ``path`` if its journal is applicable: cut the file back to the
    previous generation, then remove the journal. A stale journal is removed (the file is sound); any other is
    left, and the file too (``refused``). ``release`` closes this process's maps of the file, for a system that
    refuses to cut a mapped file (Windows). Raises ``OSError`` when the file cannot be read."""
    target = os.path.realpath(os.fspath(path))
    nothing = RepairOutcome(False, f"nothing to repair: no append journal ({os.path.basename(journal_path(target))}) "
                                   "beside the file")
    if not os.path.lexists(journal_path(target)):
        return nothing
    source = LocalFile(target)
    try:
        finding = examine_journal(source)
        fd_of_source = source.fileno()
        examined = os.fstat(fd_of_source) if fd_of_source is not None else os.stat(target)
    finally:
        source.close()
    if finding is None:
        return nothing
    name = os.path.basename(finding.journal_file)
    if finding.verdict == STALE:
        remove_journal(finding.journal_file)
        return RepairOutcome(False, f"nothing to repair: the footer at the end of the file verifies; the stale "
                                    f"journal {name} was removed")
    if finding.verdict != APPLICABLE:
        return RepairOutcome(True, f"refused: {finding.problem.message}")
    old, size = finding.old_length, examined.st_size
    try:
        fd = os.open(target, os.O_RDWR | O_BINARY)
    except OSError as exc:
        return RepairOutcome(True, f"refused: the file cannot be opened for writing ({exc.strerror}); it was not "
                                   "changed")
    try:
        now = os.fstat(fd)
        if (now.st_size, now.st_ino, now.st_dev) != (size, examined.st_ino, examined.st_dev):
            return RepairOutcome(True, "refused: the file changed while it was examined; it was not changed")
        try:
            truncate(fd, old, release)
        except OSError as exc:
            return RepairOutcome(True, f"refused: the file could not be cut back ({exc.strerror}); it was not "
                                       "changed")
        os.fsync(fd)
    finally:
        os.close(fd)
    done = (f"rolled back an interrupted append: removed the {size - old:,} bytes after byte {old:,}; the file is "
            "its previous generation again")
    try:
        remove_journal(finding.journal_file)
    except OSError as exc:
        return RepairOutcome(False, f"{done}, but its journal {name} could not be removed ({exc.strerror})",
                             size - old)
    return RepairOutcome(False, done, size - old)
