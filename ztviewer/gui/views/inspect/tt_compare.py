"""The tensor-train browser's Compare tab: a reference array of the same shape (a ``.npy`` the user picks, or
another tensor of the file), the relative Frobenius and largest absolute error computed on a worker, and an
error map (TT − reference) of the slice the reconstruction shows."""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ztviewer.analysis.tt_compare import TTError, TTErrorData, load_npy_reference, reference_dtype_name, tt_error
from ztviewer.codec import Tensor, TensorFile
from ztviewer.session.decode_cache import DecodedCache
from ztviewer.session.formatting import shape_text
from ztviewer.session.inspect_data import TTData, load_dense, view_kind

from .heatmap import HeatmapView
from .progress import DelayedProgress
from .runner import JobSlot

#: a reference the panel can load on a worker: (stored bits, dtype name)
ReferenceLoader = Callable[[Callable[[], bool]], tuple[np.ndarray, str]]


@dataclass(frozen=True, slots=True)
class ReferenceChoice:
    label: str
    load: ReferenceLoader


def npy_choice(path: str) -> ReferenceChoice:
    def load(_cancelled: Callable[[], bool]) -> tuple[np.ndarray, str]:
        array = load_npy_reference(path)
        return array, reference_dtype_name(array)
    return ReferenceChoice(f"{os.path.basename(path)} (.npy)", load)


def tt_reference_choices(tf: TensorFile, tt_tensor: Tensor, shape: tuple[int, ...],
                         cache: DecodedCache | None = None) -> list[ReferenceChoice]:
    """What a tensor train of ``tf`` can be compared with without asking: a ``.npy`` beside the file named like
    it or like the tensor, and the file's dense tensors of the same shape."""
    folder, stem = os.path.dirname(tf.path), os.path.splitext(os.path.basename(tf.path))[0]
    choices = [npy_choice(path) for path in dict.fromkeys(os.path.join(folder, f"{name}.npy")
                                                         for name in (stem, tt_tensor.name))
               if os.path.isfile(path)]
    for tensor in tf.tensors:
        if tensor is not tt_tensor and tuple(tensor.shape or ()) == shape and view_kind(tensor) == "dense":
            choices.append(ReferenceChoice(f"{tensor.name} (this file)", _tensor_loader(tf, tensor, cache)))
    return choices


def _tensor_loader(tf: TensorFile, tensor: Tensor, cache: DecodedCache | None) -> ReferenceLoader:
    def load(cancelled: Callable[[], bool]) -> tuple[np.ndarray, str]:
        data = load_dense(tf, tensor, cache=cache, cancelled=cancelled)
        return data.array, data.dtype_name
    return load


def error_html(error: TTError, reference: str) -> str:
    where = ", ".join(str(i) for i in error.max_abs_index)
    return (f"against <b>{reference}</b>: relative error ‖TT − ref‖<sub>F</sub> / ‖ref‖<sub>F</sub> = "
            f"<b>{error.relative:.4g}</b> · max |TT − ref| = <b>{error.max_abs:.4g}</b> at [{where}] · "
            f"{error.elements:,} elements")


class TTComparePanel(QWidget):
    """Reference chooser, error figures and the error map; ``compared(TTError)`` when the figures are in."""

    compared = Signal(object)
    message = Signal(str)

    def __init__(self, reconstruction: HeatmapView, pool=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.reconstruction = reconstruction
        self.data: TTData | None = None
        self.candidates: Callable[[tuple[int, ...]], list[ReferenceChoice]] = lambda shape: []
        self.choices: list[ReferenceChoice] = []
        self.error: TTError | None = None
        self.reference = QComboBox()
        self.reference.setObjectName("ttReference")
        self.reference.setMinimumContentsLength(24)
        self.reference.activated.connect(self._chosen)
        self.browse = QPushButton("Choose .npy…")
        self.browse.setToolTip("Compare with a NumPy array of the same shape (the tensor the train approximates)")
        self.browse.clicked.connect(self.choose_npy)
        self.result = QLabel("Choose a reference array of the same shape to see how far the tensor train is "
                             "from it.")
        self.result.setObjectName("ttError")
        self.result.setWordWrap(True)
        self.progress = DelayedProgress()
        self.error_map = HeatmapView(pool, sparse_button=False)
        self.error_map.message.connect(self.message)
        self.error_map.axes.bind(reconstruction.axes.dims)    # the error map shows the reconstruction's slice
        self.error_map.hide()
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel("reference"))
        top.addWidget(self.reference, 1)
        top.addWidget(self.browse)
        top.addWidget(self.progress)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.result)
        layout.addWidget(self.error_map, 1)
        self.slot = JobSlot(pool, self)
        self.slot.busy_changed.connect(self.progress.set_busy)
        self.slot.progress.connect(self.progress.set_progress)

    def set_data(self, data: TTData) -> None:
        self.slot.cancel()
        self.data, self.error = data, None
        self.error_map.hide()
        self.result.setText("Choose a reference array of the same shape to see how far the tensor train is "
                            "from it.")
        self.choices = []
        self._fill()

    def _fill(self) -> None:
        self.reference.clear()
        self.reference.addItem("— none —")
        if self.data is not None and not self.choices:
            self.choices = list(self.candidates(self.data.shape))
        for choice in self.choices:
            self.reference.addItem(choice.label)

    def choose_npy(self) -> None:
        dialog = QFileDialog(self, "Reference array", "", "NumPy arrays (*.npy);;All files (*)")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self.compare_with_npy)
        dialog.open()

    def compare_with_npy(self, path: str) -> None:
        choice = npy_choice(path)
        self.choices = [c for c in self.choices if c.label != choice.label] + [choice]
        self._fill()
        self.reference.setCurrentIndex(self.reference.count() - 1)
        self.compare(choice)

    def _chosen(self, index: int) -> None:
        if index <= 0:
            self.slot.cancel()
            self.error_map.hide()
            self.result.setText("No reference.")
            return
        self.compare(self.choices[index - 1])

    def compare(self, choice: ReferenceChoice) -> None:
        data = self.data
        if data is None:
            return
        self.result.setText(f"Comparing with {choice.label}…")

        def job(task) -> tuple[TTError, np.ndarray, str]:
            reference, dtype_name = choice.load(task.is_cancelled)
            if tuple(reference.shape) != data.shape:
                raise ValueError(f"{choice.label} has shape {shape_text(tuple(reference.shape))}, the tensor "
                                 f"train {shape_text(data.shape)}")
            error = tt_error(data.cores, reference, dtype_name, cancelled=task.is_cancelled,
                             progress=task.report_progress)
            return error, reference, dtype_name

        self.slot.start(job, lambda result: self._compared(choice, *result), failed=self._failed)

    def _compared(self, choice: ReferenceChoice, error: TTError, reference: np.ndarray, dtype_name: str) -> None:
        if self.data is None:
            return
        self.error = error
        self.result.setText(error_html(error, choice.label))
        axes, fixed = self.reconstruction.axes.axes(), self.reconstruction.axes.fixed()
        error_data = TTErrorData(self.data, reference, dtype_name)
        self.error_map.set_data(error_data, f"TT − {choice.label}")  # type: ignore[arg-type]  # DenseData's interface
        if len(self.error_map.axes.shape) > 1:                  # set_data chose default axes: keep the slice
            self.error_map.axes.set_axes(*axes)
            for axis, value in fixed.items():
                self.error_map.axes.set_index(axis, value)
        self.error_map.show()
        self.compared.emit(error)

    def _failed(self, text: str) -> None:
        self.error_map.hide()
        self.result.setText(f"Cannot compare: {text}")
        self.message.emit(f"Cannot compare: {text}")

    def shutdown(self) -> None:
        self.slot.shutdown()
        self.error_map.shutdown()
