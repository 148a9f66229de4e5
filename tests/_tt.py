"""Tensor-train cores for tests."""
from __future__ import annotations

import numpy as np


def random_cores(shape, ranks, complex_=False, seed=0) -> list[np.ndarray]:
    """Standard-normal cores ``(ranks[k], shape[k], ranks[k + 1])`` (``ranks`` includes the two outer 1s);
    complex ones get a standard-normal imaginary part drawn after each core's real part."""
    rng = np.random.default_rng(seed)
    cores = []
    for k, d in enumerate(shape):
        core = rng.standard_normal((ranks[k], d, ranks[k + 1]))
        if complex_:
            core = core + 1j * rng.standard_normal(core.shape)
        cores.append(core)
    return cores
