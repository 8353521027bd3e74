"""Local refinement of a batched cost: bounded L-BFGS-B whose gradient is forward differences taken in one call.

A cost that scores a whole population at once (rows of a matrix) makes a finite-difference gradient cheap: the
point and its n nudged copies are one call. SciPy's L-BFGS-B does the rest. Nudges point into the box, so no
copy leaves the bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.optimize


@dataclass(frozen=True)
class Refined:
    x: np.ndarray
    cost: float
    evaluations: int


def refine(batch_cost: Callable[[np.ndarray], np.ndarray], x0: np.ndarray, lower: float | np.ndarray,
           upper: float | np.ndarray, iterations: int, step: float = 1e-4) -> Refined:
    """Minimize ``batch_cost`` (rows of candidates -> their costs) from ``x0`` inside [lower, upper] for at most
    ``iterations`` L-BFGS-B iterations; ``step`` is the forward-difference nudge. Returns the best point seen
    (never worse than ``x0``) and how many candidates were scored."""
    x0 = np.asarray(x0, dtype=float)
    n = len(x0)
    lower = np.broadcast_to(np.asarray(lower, dtype=float), (n,))
    upper = np.broadcast_to(np.asarray(upper, dtype=float), (n,))
    scored = 0

    def value_and_gradient(x: np.ndarray) -> tuple[float, np.ndarray]:
        nonlocal scored
        nudge = np.where(x + step <= upper, step, -step)
        candidates = np.vstack([x, x + np.diag(nudge)])
        costs = batch_cost(candidates)
        scored += len(candidates)
        return float(costs[0]), (costs[1:] - costs[0]) / nudge

    start_cost = float(batch_cost(x0[None])[0])
    scored += 1
    if iterations <= 0:
        return Refined(x0.copy(), start_cost, scored)
    result = scipy.optimize.minimize(value_and_gradient, np.clip(x0, lower, upper), jac=True, method="L-BFGS-B",
                                     bounds=list(zip(lower, upper, strict=True)), options={"maxiter": iterations})
    if np.isfinite(result.fun) and result.fun < start_cost:
        return Refined(np.asarray(result.x), float(result.fun), scored)
    return Refined(x0.copy(), start_cost, scored)
