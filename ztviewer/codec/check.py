"""Full verification of an opened file: structure (from the reader), decoding of every tensor, digests."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from . import digest as digests
from .decode import iter_decoded
from .decode_rules import BOOL_RULE, CancelCheck, check_bools, expected_length, is_bool, per_file_budget
from .digest_state import DigestState
from .errors import CodecError, DigestMismatch, FileDecodeBudgetSpent, UnsupportedLayout
from .model import Component, Problem, Tensor, TensorFile, error, warning
from .registry import spec_of
from .tensor_queries import transient_slice


@dataclass
class CheckReport:
    problems: list[Problem] = field(default_factory=list)
    tensors_decoded: int = 0
    digests_verified: int = 0
    #: (tensor, role, state) of every recorded digest the check verified: ok, mismatch or invalid
    digest_states: list[tuple[Tensor, str, DigestState]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(p.is_error for p in self.problems)


def _decode_tensor(tf: TensorFile, tensor: Tensor, cancelled: CancelCheck | None) -> None:
    if tensor.layout == "dense":
        data = tensor.components["data"]
        bools, start = is_bool(data), 0
        for part in iter_decoded(tf, tensor, data, cancelled=cancelled):
            if bools:
                check_bools(tensor, data, part, start, BOOL_RULE)
            start += len(part)
    elif tensor.layout in ("sparse_csr", "sparse_coo"):
        from .sparse import load_sparse

        load_sparse(tf, tensor, cancelled=cancelled, mapped=True)  # one validating pass: pages given back
    elif tensor.layout == "tensor_train":
        from . import tt

        tt.tt_cores(tf, tensor)
    elif tensor.layout == "zt.mx/1":
        from .formats.zt_v2.mx import mx_dense

        mx_dense(tf, tensor, cancelled=cancelled)
    else:
        reason = tensor.extra_value("structural") or f"layout {tensor.layout!r} is not decoded by ztviewer"
        raise UnsupportedLayout(reason, tensor=tensor.name)


def check_file(
    tf: TensorFile, progress: Callable[[str], None] | None = None, cancelled: CancelCheck | None = None,
) -> CheckReport:
    """Decode every tensor that has no structural error and verify every digest."""
    report = CheckReport(problems=list(tf.all_problems()))
    if not tf.readable:
        return report
    spec = spec_of(tf)
    if spec is not None:  # the format's whole-file checks (zTensor v2: padding and shard digests)
        report.problems += spec.deep_checks(tf, cancelled)
    decoded: set[tuple[int, int, int, str, int | None]] = set()  # blobs already decoded (aliases, duplicates)
    skipped = 0
    with per_file_budget():
        for tensor in _walk(tf.tensors):
            if tensor.has_errors:
                continue
            if progress is not None:
                progress(tensor.name)
            try:
                _decode_once(tf, tensor, cancelled, decoded)
                report.tensors_decoded += 1
            except UnsupportedLayout as exc:
                if not any(not p.is_error for p in tensor.problems):
                    report.problems.append(warning(exc.message, tensor=tensor.name))
            except FileDecodeBudgetSpent as exc:
                if not skipped:
                    report.problems.append(warning(f"{exc.message}; this tensor and the compressed tensors after "
                                                   "it were not decoded", rule=exc.rule, tensor=tensor.name))
                skipped += 1
            except CodecError as exc:
                report.problems.append(exc.located(tensor=tensor.name).to_problem())
                continue
            except MemoryError:
                report.problems.append(error("not enough memory to decode this tensor", tensor=tensor.name,
                                             rule="decoding fits in memory"))
                continue
            _verify_digests(tf, tensor, report, cancelled)
    return report


def _walk(tensors: Sequence[Tensor], batch: int = 2000) -> Iterator[Tensor]:
    """Every tensor in order, a lazy table's unbuilt ones built for the walk only (a million-tensor check does not
    keep a million tensors)."""
    for start in range(0, len(tensors), batch):
        yield from transient_slice(tensors, start, start + batch)


def _decode_once(tf: TensorFile, tensor: Tensor, cancelled: CancelCheck | None,
                 decoded: set[tuple[int, int, int, str, int | None]]) -> None:
    """Decode a tensor unless its only component is a blob this pass already decoded (v0.1 aliases and
    duplicate entries name one blob many times)."""
    data = tensor.components.get("data") if tensor.layout == "dense" and tensor.component_count == 1 else None
    if data is not None and _read_by_digest(data):
        return
    key = None
    if data is not None and data.encoding != "raw":
        key = (id(tf.source_for(tensor)), data.offset, data.length, data.encoding, expected_length(tensor, data))
        if key in decoded:
            return
    _decode_tensor(tf, tensor, cancelled)
    if key is not None:
        decoded.add(key)


def _read_by_digest(data: Component) -> bool:
    """Whether decoding this raw component is only reading its bytes (no value rules apply) and verifying its
    digest reads them all too: then the digest pass is the one read (a second would double a cold check)."""
    if data.encoding != "raw" or data.digest is None or (data.extra and "type" in data.extra) or is_bool(data):
        return False
    try:
        digests.parse_digest(data.digest)
    except CodecError:
        return False
    return True


def _verify_digests(tf: TensorFile, tensor: Tensor, report: CheckReport, cancelled: CancelCheck | None) -> None:
    """Digests cover the stored bytes, so they are verified even when the decode budget is spent."""
    for component in tensor.components.values():
        if component.digest is None:
            continue
        try:
            digests.verify_component(tf.source_for(tensor, component), tensor, component, cancelled=cancelled)
            report.digests_verified += 1
            report.digest_states.append((tensor, component.role, DigestState.OK))
        except CodecError as exc:
            report.problems.append(exc.located(tensor=tensor.name, component=component.role).to_problem())
            state = DigestState.MISMATCH if isinstance(exc, DigestMismatch) else DigestState.INVALID
            report.digest_states.append((tensor, component.role, state))
