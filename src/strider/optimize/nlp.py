"""Sparse nonlinear programs: a CasADi problem solved by its bundled IPOPT, with an elastic retry.

A problem is min f(x) s.t. lbg <= g(x) <= ubg, lbx <= x <= ubx, with a name per constraint row so a failure
can say which constraint is worst. When IPOPT does not converge, :func:`solve` tries once more with every
constraint made elastic (slacks priced at ``slack_weight`` in the objective, L1), the stand-in for SNOPT's
elastic mode: the answer then satisfies what it can and reports the rest as the worst violation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import casadi
import numpy as np

SUCCESS_STATUSES = ("Solve_Succeeded", "Solved_To_Acceptable_Level")


@dataclass(frozen=True)
class IpoptOptions:
    tolerance: float = 1e-8
    constraint_tolerance: float = 1e-6     # phase-tracking.md P4(a): converged at a violation <= 1e-6
    max_iterations: int = 1000
    slack_weight: float = 1e3              # L1 price of an elastic slack (phase-tracking.md Sec. 4, "Solver")
    elastic_retry: bool = True


@dataclass
class NlpProblem:
    x: casadi.SX
    objective: casadi.SX
    g: casadi.SX
    lbg: np.ndarray
    ubg: np.ndarray
    x0: np.ndarray
    lbx: np.ndarray
    ubx: np.ndarray
    row_names: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class NlpResult:
    x: np.ndarray
    objective: float
    status: str
    success: bool
    elastic: bool                  # the answer came from the elastic retry
    iterations: int
    seconds: float                 # wall time, building the solver included
    worst_constraint: str
    worst_violation: float


def solve(problem: NlpProblem, options: IpoptOptions = IpoptOptions()) -> NlpResult:
    start = time.perf_counter()
    result = _run(problem, options)
    if not result.success and options.elastic_retry:
        result = _run(_elastic(problem, options.slack_weight), options, original=problem)
    return replace(result, seconds=time.perf_counter() - start)


def violation(problem: NlpProblem, x: np.ndarray) -> tuple[str, float]:
    """The constraint row (by name) furthest outside its bounds at ``x``, and by how much."""
    g = np.asarray(casadi.Function("g", [problem.x], [problem.g])(x)).ravel()
    over = np.maximum(problem.lbg - g, g - problem.ubg)
    if over.size == 0:
        return "none", 0.0
    i = int(np.argmax(over))
    name = problem.row_names[i] if i < len(problem.row_names) else f"row {i}"
    return name, float(max(over[i], 0.0))


def _run(problem: NlpProblem, options: IpoptOptions, original: NlpProblem | None = None) -> NlpResult:
    """One IPOPT solve; with ``original`` (the problem before it was made elastic) the answer is cut back to the
    original variables and judged on the original constraints."""
    # common subexpressions (a model's kinematics are shared by many rows) shrink the graph that IPOPT's
    # derivatives are generated from; building the solver costs more than solving without it
    nlp = {"x": problem.x, "f": casadi.cse(problem.objective), "g": casadi.cse(problem.g)}
    opts = {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes", "ipopt.tol": options.tolerance,
            "ipopt.constr_viol_tol": options.constraint_tolerance, "ipopt.max_iter": options.max_iterations,
            "ipopt.linear_solver": "mumps"}
    solver = casadi.nlpsol("rectify", "ipopt", nlp, opts)
    out = solver(x0=problem.x0, lbx=problem.lbx, ubx=problem.ubx, lbg=problem.lbg, ubg=problem.ubg)
    stats = solver.stats()
    x = np.asarray(out["x"]).ravel()
    judge = original or problem
    x = x[:len(judge.x0)]
    worst, amount = violation(judge, x)
    status = str(stats.get("return_status", "unknown"))
    success = status in SUCCESS_STATUSES and amount <= options.constraint_tolerance * 10
    objective = float(casadi.Function("f", [judge.x], [judge.objective])(x))
    return NlpResult(x, objective, status, success, original is not None, int(stats.get("iter_count", -1)), 0.0,
                     worst, amount)


def _elastic(problem: NlpProblem, weight: float) -> NlpProblem:
    """Every row gets a pair of non-negative slacks: lbg <= g + s_up - s_down <= ubg, priced weight * (s_up + s_down).
    Violations are then reported on the original rows (the slack part of x is dropped)."""
    m = problem.g.shape[0]
    up = casadi.SX.sym("slack_up", m)
    down = casadi.SX.sym("slack_down", m)
    return NlpProblem(
        x=casadi.vertcat(problem.x, up, down),
        objective=problem.objective + weight * (casadi.sum1(up) + casadi.sum1(down)),
        g=problem.g + up - down, lbg=problem.lbg, ubg=problem.ubg,
        x0=np.concatenate([problem.x0, np.zeros(2 * m)]),
        lbx=np.concatenate([problem.lbx, np.zeros(2 * m)]),
        ubx=np.concatenate([problem.ubx, np.full(2 * m, np.inf)]),
        row_names=problem.row_names)
