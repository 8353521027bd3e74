"""Minimum-jerk motion between two states: the quintic that starts at (p0, v0, a0) and ends at rest at p1.

A swing foot re-aimed at every replan starts the new curve from where it is and how it moves, so its path
stays smooth in position, velocity and acceleration however often the target changes.
"""

from __future__ import annotations

import numpy as np


def min_jerk(p0, v0, a0, p1, duration: float, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position, velocity and acceleration at time ``t`` (clamped to [0, duration]) of the quintic from
    (p0, v0, a0) to (p1, 0, 0). Arrays broadcast over the trailing axis (one column per coordinate)."""
    p0, v0, a0, p1 = (np.asarray(v, dtype=float) for v in (p0, v0, a0, p1))
    if duration <= 0.0:
        return p1.copy(), np.zeros_like(p1), np.zeros_like(p1)
    T = float(duration)
    t = float(np.clip(t, 0.0, T))
    d = p1 - p0
    # Coefficients of p(t) = c0 + c1 t + ... + c5 t^5 with the end state at rest.
    c3 = (20 * d - (12 * v0 + 3 * a0 * T) * T) / (2 * T**3)
    c4 = (-30 * d + (16 * v0 + 3 * a0 * T) * T) / (2 * T**4)
    c5 = (12 * d - (6 * v0 + a0 * T) * T) / (2 * T**5)
    position = p0 + v0 * t + a0 / 2 * t**2 + c3 * t**3 + c4 * t**4 + c5 * t**5
    velocity = v0 + a0 * t + 3 * c3 * t**2 + 4 * c4 * t**3 + 5 * c5 * t**4
    acceleration = a0 + 6 * c3 * t + 12 * c4 * t**2 + 20 * c5 * t**3
    return position, velocity, acceleration
