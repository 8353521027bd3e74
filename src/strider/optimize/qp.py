"""Weighted least-squares tasks solved as one QP, through ``qpsolvers`` with a chain of fallback backends.

A whole-body controller states what it wants as tasks ``w ||A x - b||^2`` (slip-planning.md Sec. 4: every QP
term has this form) plus equality rows and bounds. ``TaskQP`` sums the tasks into ``P = sum 2 w A^T A + 2 eps I``
and ``q = -sum 2 w A^T b``; ``QPSolver`` tries its backends in order and counts what happened, so every
result can say how often a solve fell back or failed (the caller then holds its previous answer).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import qpsolvers

from strider.errors import UsageError

DEFAULT_CHAIN = ("daqp", "proxqp", "quadprog")   # fastest first, by measurement (docs/slip.md, "QP solvers")


@dataclass
class TaskQP:
    """An objective built task by task over ``size`` variables."""

    size: int
    regularization: float = 1e-6    # eps of slip-planning.md Sec. 4: keeps P positive definite
    P: np.ndarray = field(init=False)
    q: np.ndarray = field(init=False)

    def __post_init__(self):
        self.P = 2 * self.regularization * np.eye(self.size)
        self.q = np.zeros(self.size)

    def add(self, A: np.ndarray, b: np.ndarray, weight: float, columns: slice | None = None) -> None:
        """Add ``weight ||A x[columns] - b||^2``."""
        A = np.atleast_2d(A)
        cols = columns if columns is not None else slice(0, self.size)
        self.P[cols, cols] += 2 * weight * A.T @ A
        self.q[cols] -= 2 * weight * A.T @ np.asarray(b, dtype=float)

    def cost(self, x: np.ndarray) -> float:
        """The objective at x (without the constant sum of w ||b||^2)."""
        return float(0.5 * x @ self.P @ x + self.q @ x)


@dataclass
class QPStats:
    solves: int = 0
    fallbacks: int = 0                  # solves the first backend did not answer
    failures: int = 0                   # solves no backend answered
    by_solver: dict[str, int] = field(default_factory=dict)


class QPSolver:
    """Solve with the first backend of ``chain`` whose answer is finite and keeps the constraints."""

    def __init__(self, chain: tuple[str, ...] = DEFAULT_CHAIN, tolerance: float = 1e-6):
        unknown = [name for name in chain if name not in qpsolvers.available_solvers]
        if unknown or not chain:
            raise UsageError(f"QP solver(s) {', '.join(unknown) or '(none)'} not available; installed: "
                             f"{', '.join(sorted(qpsolvers.available_solvers))}")
        self.chain = tuple(chain)
        self.tolerance = tolerance      # relative constraint violation an answer may have
        self.stats = QPStats()

    def solve(self, problem: TaskQP, A: np.ndarray | None = None, b: np.ndarray | None = None,
              G: np.ndarray | None = None, h: np.ndarray | None = None, lb: np.ndarray | None = None,
              ub: np.ndarray | None = None) -> np.ndarray | None:
        """argmin of the tasks s.t. A x = b, G x <= h, lb <= x <= ub; None when every backend fails."""
        self.stats.solves += 1
        for i, name in enumerate(self.chain):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    x = qpsolvers.solve_qp(problem.P, problem.q, G=G, h=h, A=A, b=b, lb=lb, ub=ub, solver=name)
            except (ValueError, ArithmeticError, qpsolvers.QPError):
                x = None
            if x is not None and np.all(np.isfinite(x)) and self._feasible(x, A, b, G, h, lb, ub):
                if i > 0:
                    self.stats.fallbacks += 1
                self.stats.by_solver[name] = self.stats.by_solver.get(name, 0) + 1
                return x
        self.stats.fallbacks += 1
        self.stats.failures += 1
        return None

    def _feasible(self, x, A, b, G, h, lb, ub) -> bool:
        """Whether an answer keeps the constraints: some backends return their last iterate on an infeasible
        problem instead of saying so."""
        tol = self.tolerance
        if A is not None and np.max(np.abs(A @ x - b), initial=0.0) > tol * (1 + np.max(np.abs(b), initial=0.0)):
            return False
        if G is not None and np.max(G @ x - h, initial=0.0) > tol * (1 + np.max(np.abs(h), initial=0.0)):
            return False
        if lb is not None and np.any(x < lb - tol * (1 + np.abs(lb))):
            return False
        return ub is None or not np.any(x > ub + tol * (1 + np.abs(ub)))
