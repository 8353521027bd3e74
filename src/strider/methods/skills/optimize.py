"""Optimizing a skill's free knots and axes with CMA-ES (seed 003, Sec. 6; torres-skills.md Decisions 19-23).

The free parameters are read from the skill's ``optimize.params`` (knot values
by index, and whole axes), packed into one vector, and written back into a
copy of the skill for each candidate. A candidate's cost is the mean over the
skill's ``optimize.trials`` rollouts: the nominal start, then starts perturbed
as in P6 but seeded from ``optimize.trial_seed`` (1000 by default), apart from
P6's test seeds, so that a robust objective is judged on starts it never saw.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from strider.methods.skills.rollout import cost, cost_bodies, reaches_end, rollout
from strider.methods.skills.skill import JointTarget, Optimize, Skill, load_skill
from strider.optimize.cma_es import CMAResult, Generation, minimize


def parameter_vector(skill: Skill) -> np.ndarray:
    out: list[float] = []
    for p in skill.optimize.params:
        target = skill.state(p.action, p.state).joints[p.trajectory]
        out += [target.values[k] for k in p.knots]
        if p.axis:
            out += list(target.axis)
    return np.asarray(out, dtype=float)


def parameter_bounds(skill: Skill) -> tuple[list[float], list[float]] | None:
    """(lower, upper) per entry of :func:`parameter_vector`: knots within their entry's ``range``, else within
    ``knot_bound``, else free; axes free (normalized). None when nothing is bounded."""
    bound = skill.optimize.knot_bound
    if bound is None and all(p.range is None for p in skill.optimize.params):
        return None
    free = (-math.inf, math.inf) if bound is None else (-bound, bound)
    lower: list[float] = []
    upper: list[float] = []
    for p in skill.optimize.params:
        low, high = p.range or free
        lower += [low] * len(p.knots) + ([-math.inf] * 3 if p.axis else [])
        upper += [high] * len(p.knots) + ([math.inf] * 3 if p.axis else [])
    return lower, upper


def with_parameters(skill: Skill, x: np.ndarray) -> Skill:
    """The skill with its free parameters set from ``x``; axes are normalized (Decision 21)."""
    i = 0
    for p in skill.optimize.params:
        target = skill.state(p.action, p.state).joints[p.trajectory]
        values = list(target.values)
        for k in p.knots:
            values[k] = float(x[i])
            i += 1
        axis = target.axis
        if p.axis:
            a = np.asarray(x[i:i + 3], dtype=float)
            i += 3
            n = float(np.linalg.norm(a))
            axis = tuple(float(v) for v in (a / n if n > 1e-9 else np.asarray(target.axis)))
        skill = skill.with_trajectory(p.action, p.state, p.trajectory,
                                      dataclasses.replace(target, values=tuple(values), axis=axis))
    return skill


def worker_cache() -> dict:
    """Executor setup: each worker's cache of loaded skills, compiled worlds and settled starts."""
    return {}


@dataclasses.dataclass(frozen=True)
class SkillObjective:
    """A picklable objective: workers load the skill file themselves and receive only parameter vectors."""

    path: str

    def __call__(self, x: np.ndarray, context: Any = None) -> float:
        cache = context if isinstance(context, dict) else {}
        skill = cache.get(("skill", self.path))
        if skill is None:
            skill = cache[("skill", self.path)] = load_skill(self.path)
        candidate = with_parameters(skill, x)
        opt = skill.optimize
        bodies = cost_bodies(skill)
        costs = []
        for seed in trial_seeds(opt):
            trace = rollout(candidate, opt.seconds, perturb=opt.perturb if seed is not None else 0.0, seed=seed,
                            bodies=bodies, cache=cache)
            costs.append(cost(opt.cost, trace))
        return float(np.mean(costs))


def trial_seeds(opt: Optimize) -> list[int | None]:
    """The starts one evaluation averages over: None for the nominal start, then the perturbed starts' seeds."""
    return [None] + [opt.trial_seed + k for k in range(opt.trials - 1)]


def optimize_skill(path: str | Path, executor, *, seed: int, maxfevals: int | None = None,
                   checkpoint: str | Path | None = None, resume: bool = False,
                   on_generation: Callable[[Generation], None] | None = None) -> CMAResult:
    """CMA-ES over a skill file's free parameters with its own settings (sigma0, popsize, knot bounds)."""
    skill = load_skill(path)
    opt = skill.optimize
    return minimize(SkillObjective(str(path)), parameter_vector(skill), executor, sigma0=opt.sigma0,
                    maxfevals=maxfevals or opt.maxfevals, popsize=opt.popsize, seed=seed,
                    bounds=parameter_bounds(skill), checkpoint=checkpoint, resume=resume,
                    on_generation=on_generation)


def success_rate(skill: Skill, trials: int, perturb: float = 0.05) -> tuple[bool, int]:
    """P6: (nominal start passes, passes out of ``trials`` perturbed starts with seeds 0..trials-1)."""
    nominal = reaches_end(skill, rollout(skill))
    passed = sum(reaches_end(skill, rollout(skill, perturb=perturb, seed=s)) for s in range(trials))
    return nominal, passed


def write_skill(skill: Skill, x: np.ndarray, path: str | Path, note: str) -> None:
    """Write the skill file with the optimized parameters in place of the initial ones (raw YAML kept)."""
    raw = dataclasses.replace(skill).raw
    data = yaml.safe_load(yaml.safe_dump(raw, sort_keys=False))
    optimized = with_parameters(skill, x)
    actions = {a["name"]: a for a in data["actions"]}
    for p in skill.optimize.params:
        target: JointTarget = optimized.state(p.action, p.state).joints[p.trajectory]
        state = next(s for s in actions[p.action]["states"] if s["name"] == p.state)
        entry = state["joints"][p.trajectory]
        entry["knots"]["values"] = [round(v, 6) for v in target.values]
        entry["axis"] = [round(v, 6) for v in target.axis]
    data["description"] = f"{data.get('description', '').strip()} {note}".strip()
    Path(path).write_text(yaml.safe_dump(data, sort_keys=False, width=120))
