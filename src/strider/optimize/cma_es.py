"""A CMA-ES harness for offline optimization (seed 003, Eqs. 6.1, 6.6, 6.7; torres-skills.md Decision 23).

``minimize`` runs pycma's ask/tell loop, evaluating each generation in
parallel through a :class:`strider.parallel.Executor`. After every generation
it writes a checkpoint (the optimizer, NumPy's global random state that pycma
draws from, and the history so far); ``resume=True`` continues from it, and
because evaluations are deterministic and the random state is restored, an
interrupted and resumed run reaches exactly the result of an uninterrupted
one with the same seed. Any method (skills, SAMCON, controller tuning) passes
a picklable ``evaluate(x, context) -> cost``.
"""

from __future__ import annotations

import math
import os
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from strider.errors import UsageError

DEFAULT_SIGMA0 = 0.5       # Decision 23
DEFAULT_MAXFEVALS = 1000   # Decision 23


def default_popsize(n: int) -> int:
    """pycma's default population, 4 + floor(3 ln n) (Decision 23)."""
    return 4 + math.floor(3 * math.log(n))


@dataclass
class Generation:
    evaluations: int
    best: float        # best cost so far
    median: float      # median cost of this generation


@dataclass
class CMAResult:
    x: np.ndarray
    cost: float
    evaluations: int
    history: list[Generation] = field(default_factory=list)
    stop: dict = field(default_factory=dict)


def whole_generations(maxfevals: int, popsize: int) -> int:
    """The evaluation budget a run keeps: ``maxfevals`` rounded up to whole generations of ``popsize``, since
    CMA-ES updates only on a full population."""
    return -(-maxfevals // popsize) * popsize


def _task(task: tuple[Callable, np.ndarray], context: Any) -> float:
    evaluate, x = task
    value = float(evaluate(x, context))
    return value if math.isfinite(value) else float("inf")


def minimize(evaluate: Callable[[np.ndarray, Any], float], x0: np.ndarray, executor, *, sigma0: float = DEFAULT_SIGMA0,
             maxfevals: int = DEFAULT_MAXFEVALS, popsize: int | None = None, seed: int = 1,
             bounds: tuple[Sequence[float], Sequence[float]] | None = None,
             checkpoint: str | Path | None = None, resume: bool = False,
             on_generation: Callable[[Generation], None] | None = None) -> CMAResult:
    """Minimize ``evaluate`` from ``x0``; ``executor.map(fn, tasks, ordered=True)`` runs each generation.

    ``bounds``: per-variable (lower, upper), +-inf for a free one; candidates stay inside (pycma's BoundTransform).
    """
    import cma

    if seed < 1:
        raise UsageError(f"--seed must be >= 1 for CMA-ES (pycma treats 0 as 'random'), got {seed}")
    x0 = np.asarray(x0, dtype=float)
    path = Path(checkpoint) if checkpoint is not None else None
    history: list[Generation] = []
    popsize = popsize or default_popsize(len(x0))
    maxfevals = whole_generations(maxfevals, popsize)
    if resume:
        if path is None or not path.is_file():
            raise UsageError(f"--resume: no checkpoint at {path}")
        with open(path, "rb") as fh:
            saved = pickle.load(fh)
        es, history = saved["es"], saved["history"]
        np.random.set_state(saved["random_state"])
    else:
        # The budget is kept here, not by pycma (which runs one generation past a whole multiple), so that a
        # resumed run takes the budget of its own call: a larger one continues a finished run.
        options = {"seed": seed, "maxfevals": math.inf, "verbose": -9, "popsize": popsize}
        if bounds is not None:
            options["bounds"] = [list(map(float, bounds[0])), list(map(float, bounds[1]))]
        es = cma.CMAEvolutionStrategy(x0, sigma0, options)
    while es.countevals < maxfevals and not es.stop():
        xs = es.ask()
        costs = [0.0] * len(xs)
        for i, value in executor.map(_task, [(evaluate, np.asarray(x)) for x in xs], ordered=True):
            costs[i] = value
        es.tell(xs, costs)
        best = float(es.result.fbest)
        history.append(Generation(int(es.result.evaluations), best, float(np.median(costs))))
        if path is not None:
            _save(path, {"es": es, "history": history, "random_state": np.random.get_state()})
        if on_generation is not None:
            on_generation(history[-1])
    stop = dict(es.stop()) or {"maxfevals": maxfevals}
    return CMAResult(np.asarray(es.result.xbest, dtype=float), float(es.result.fbest), int(es.result.evaluations),
                     history, stop)


def _save(path: Path, payload: dict) -> None:
    """Write atomically, so a run killed mid-write leaves the previous checkpoint intact."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as fh:
        pickle.dump(payload, fh)
    os.replace(tmp, path)


def plot_convergence(history: list[Generation], path: str | Path, title: str) -> None:
    """Best-so-far and per-generation median cost against evaluations, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    evals = [g.evaluations for g in history]
    ax.plot(evals, [g.best for g in history], label="best so far")
    ax.plot(evals, [g.median for g in history], label="generation median", alpha=0.6)
    ax.set_xlabel("evaluations")
    ax.set_ylabel("cost")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
