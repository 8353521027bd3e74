"""Task QPs through qpsolvers: the objective the tasks sum to, the backends agree with the KKT solution, and a
problem no backend can solve falls down the chain and is counted, never raised."""

from __future__ import annotations

import numpy as np
import pytest

from strider.errors import UsageError
from strider.optimize.qp import DEFAULT_CHAIN, QPSolver, TaskQP


def _problem(seed=0, n=12, m=3):
    rng = np.random.default_rng(seed)
    tasks = [(rng.normal(size=(8, n)), rng.normal(size=8), w) for w in (1.0, 0.1)]
    qp = TaskQP(n)
    for A, b, w in tasks:
        qp.add(A, b, w)
    return qp, tasks, rng.normal(size=(m, n)), rng.normal(size=m)


def test_tasks_sum_to_the_weighted_least_squares_objective():
    qp, tasks, _, _ = _problem()
    x = np.random.default_rng(5).normal(size=12)
    direct = sum(w * np.sum((A @ x - b) ** 2) for A, b, w in tasks) - sum(w * b @ b for _, b, w in tasks)
    assert qp.cost(x) == pytest.approx(direct + qp.regularization * x @ x, rel=1e-10)


def test_task_on_some_columns_only():
    qp = TaskQP(4, regularization=0.0)
    qp.add(np.eye(2), [1.0, 2.0], 3.0, columns=slice(2, 4))
    assert np.allclose(qp.P[:2], 0) and np.allclose(qp.P[2:, 2:], 6 * np.eye(2)) and np.allclose(qp.q, [0, 0, -6, -12])


@pytest.mark.parametrize("solver", DEFAULT_CHAIN)
def test_every_backend_matches_the_kkt_solution(solver):
    qp, _, A, b = _problem()
    n, m = qp.size, len(b)
    kkt = np.block([[qp.P, A.T], [A, np.zeros((m, m))]])
    expected = np.linalg.solve(kkt, np.concatenate([-qp.q, b]))[:n]
    x = QPSolver((solver,)).solve(qp, A=A, b=b)
    assert np.allclose(x, expected, atol=1e-6)


def test_bounds_bind_and_the_first_backend_answers():
    qp, *_ = _problem(1)
    solver = QPSolver()
    free = solver.solve(qp)
    lb = np.full(qp.size, -np.inf)
    lb[0] = free[0] + 0.5
    x = solver.solve(qp, lb=lb, ub=np.full(qp.size, np.inf))
    assert x[0] == pytest.approx(lb[0], abs=1e-7)
    assert solver.stats.solves == 2 and solver.stats.fallbacks == 0 and solver.stats.by_solver == {"daqp": 2}


def test_an_infeasible_problem_falls_through_the_chain_and_is_counted():
    qp = TaskQP(2)
    qp.add(np.eye(2), [0.0, 0.0], 1.0)
    solver = QPSolver()
    x = solver.solve(qp, A=np.array([[1.0, 0.0], [1.0, 0.0]]), b=np.array([0.0, 1.0]))   # x0 = 0 and x0 = 1
    assert x is None
    assert solver.stats.failures == 1 and solver.stats.fallbacks == 1


def test_an_unknown_backend_is_refused():
    with pytest.raises(UsageError, match="not available"):
        QPSolver(("nosuchsolver",))
