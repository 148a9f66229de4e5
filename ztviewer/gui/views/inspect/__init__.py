"""Views of tensor values: heatmaps and line plots, spy plots, the tensor-train browser, statistics.

:class:`~.panel.InspectPanel` picks the right view for the selected tensor; every heavy computation runs on
a worker (:mod:`.runner`), over the Qt-free numerics of :mod:`ztviewer.analysis`.
"""
from .panel import InspectPanel

__all__ = ["InspectPanel"]
