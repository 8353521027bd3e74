"""Scalar helpers for the control loop that give NumPy's exact results without its per-call overhead.

A controller update does hundreds of operations on single numbers and 3-vectors,
where a NumPy call costs far more than the arithmetic. These helpers compute the
same IEEE operations in the same order as the NumPy expressions they replace
(``np.clip``, ``np.linalg.norm``, ``np.dot`` on 3-vectors), so a simulation stays
bit-identical; ``tests/test_fast_paths.py`` checks that on random inputs.
"""

from __future__ import annotations

import math

import numpy as np


def floats(v) -> list[float]:
    """A short vector (array, tuple or list) as a list of Python floats, converting only an array."""
    return v.tolist() if isinstance(v, np.ndarray) else list(v)


def clamp(x: float, lo: float, hi: float) -> float:
    """``np.clip`` of one number (the same value, NaN passing through)."""
    return min(max(x, lo), hi)


def norm3(v: np.ndarray) -> float:
    """Length of a 3-vector, summed in ``np.linalg.norm``'s order."""
    x, y, z = v.tolist()
    return math.sqrt(x * x + y * y + z * z)


def dot3(a: np.ndarray, b: np.ndarray) -> float:
    """Dot product of two 3-vectors, summed in ``np.dot``'s order."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return a0 * b0 + a1 * b1 + a2 * b2
