"""Full verification of an opened file: structure (from the reader), decoding of every tensor, digests."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import digest as digests
from .decode import CancelCheck, iter_decoded
from .errors import CodecError, UnsupportedLayout
from .model import Problem, Tensor, TensorFile, warning


@dataclass
class CheckReport:
    problems: list[Problem] = field(default_factory=list)
    tensors_decoded: int = 0
    digests_verified: int = 0

    @property
    def ok(self) -> bool:
        return not any(p.is_error for p in self.problems)


def _decode_tensor(tf: TensorFile, tensor: Tensor, cancelled: CancelCheck | None) -> None:
    if tensor.layout == "dense":
        for _ in iter_decoded(tf, tensor, tensor.components["data"], cancelled=cancelled):
            pass
    elif tensor.layout in ("sparse_csr", "sparse_coo"):
        from .sparse import load_sparse

        load_sparse(tf, tensor, cancelled=cancelled)
    elif tensor.layout == "tensor_train":
        from . import tt

        tt.tt_cores(tf, tensor)
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
    if tf.format == "zt-v2":  # padding and shard digests: whole-file checks of the v2 container
        from .formats.zt_v2 import deep_checks

        report.problems += deep_checks(tf, cancelled)
    for tensor in tf.tensors:
        if tensor.has_errors:
            continue
        if progress is not None:
            progress(tensor.name)
        try:
            _decode_tensor(tf, tensor, cancelled)
            report.tensors_decoded += 1
        except UnsupportedLayout as exc:
            if not any(not p.is_error for p in tensor.problems):
                report.problems.append(warning(exc.message, tensor=tensor.name))
        except CodecError as exc:
            report.problems.append(exc.located(tensor=tensor.name).to_problem())
            continue
        for component in tensor.components.values():
            if component.digest is None:
                continue
            try:
                digests.verify_component(tf.source_for(tensor, component), tensor, component,
                                         cancelled=cancelled)
                report.digests_verified += 1
            except CodecError as exc:
                report.problems.append(exc.located(tensor=tensor.name, component=component.role).to_problem())
    return report
