"""Tuning a SIMBICON gait by CMA-ES on flat ground (coros-walking.md, "Decisions for the planners": the base
gait is tuned once to a mean step length and dwell, with no fall).

A gait file says how it was tuned in its ``tuning`` section: the character, the
episode, the figures to reach, and which of its own numbers may move, each by
its field path in the file and its bounds::

    tuning:
      character: planar7
      seconds: 30              # s per evaluation, walking on flat ground
      step_length: 0.36        # m, mean over the steps after skip_seconds
      step_duration: 0.35      # s (optional)
      flight_share: 0.9        # least share of steps with a flight (optional; for runs)
      parameters:
        states.0.swing_hip: [0.2, 1.2]
        feedback.cv_sagittal: [0.0, 0.6]

``strider simbicon tune`` starts from the file's values and writes the gait
with the best values found; the same file and seed give the same gait.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from strider.datafile import Fields, load_yaml
from strider.methods.simbicon.gait import Gait, gait_path, parse_gait

FALL_COST = 1000.0            # a fall costs more than any walking gait, less the longer it walked
LENGTH_SCALE = 0.02           # m: a step-length error of this size costs 1 (the decision's tolerance)
DURATION_SCALE = 0.03         # s
FLIGHT_SCALE = 0.05           # share of steps
SPREAD_SCALE = 0.02           # m of step-length standard deviation: an uneven gait costs too
MIN_FLIGHT = 0.02             # s both feet off the ground that counts as a flight
SIGMA0 = 0.15                 # CMA-ES step size, as a share of each parameter's range
DEFAULT_BUDGET = 300          # evaluations: enough for the shipped gaits (10 parameters, about 30 generations)


@dataclass(frozen=True)
class TuningSpec:
    character: str
    seconds: float
    skip_seconds: float
    step_length: float
    step_duration: float | None
    flight_share: float | None
    parameters: tuple[tuple[str, float, float], ...]   # (field path, low, high)


def read_tuning(data: dict, source: str) -> TuningSpec:
    f = Fields(data, source).mapping("tuning")
    f.reject_unknown({"character", "seconds", "skip_seconds", "step_length", "step_duration", "flight_share",
                      "parameters"})
    p = f.mapping("parameters")
    params = []
    for key in p.data:
        low, high = p.vector(str(key), 2)
        if not low < high:
            raise p.error(str(key), f"bounds must rise, got [{low:g}, {high:g}]")
        value = _get(data, str(key), p)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise p.error(str(key), f"names {value!r}, not a number of this gait")
        params.append((str(key), low, high))
    if not params:
        raise f.error("parameters", "name at least one number of the gait to tune")
    seconds = f.number("seconds", min=1.0, max=600.0)
    duration = f.number("step_duration", None, min=0.05, max=2.0) if f.has("step_duration") else None
    share = f.number("flight_share", None, min=0.0, max=1.0) if f.has("flight_share") else None
    return TuningSpec(f.string("character"), seconds, f.number("skip_seconds", 4.0, min=0.0, max=seconds - 1.0),
                      f.number("step_length", min=0.0, max=2.0), duration, share, tuple(params))


def _get(data: dict, path: str, f: Fields | None = None):
    node = data
    for part in path.split("."):
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            if f is None:
                raise
            raise f.error(path, "no such field in the gait") from None
    return node


def with_values(data: dict, paths, x) -> dict:
    """A copy of a gait file's contents with the numbers at ``paths`` set to ``x``."""
    out = copy.deepcopy(data)
    for path, value in zip(paths, x):
        *parents, last = path.split(".")
        node = _get(out, ".".join(parents)) if parents else out
        node[int(last) if isinstance(node, list) else last] = round(float(value), 4)
    return out


def measure(gait: Gait, character: str, seconds: float, skip_seconds: float) -> dict:
    """Walk ``gait`` on flat ground: whether and when it fell, speed, and the step figures after ``skip_seconds``."""
    from strider.characters import load_character
    from strider.methods.simbicon.controller import SIMBICON
    from strider.runner import Runner
    from strider.runner.hooks import FootfallRecorder, step_figures
    from strider.runner.scenario import Scenario
    from strider.sim import CharacterPlacement, Scene

    recorder = FootfallRecorder()
    scenario = Scenario(Scene((CharacterPlacement(load_character(character)),)), SIMBICON(gait=gait), seconds)
    result = Runner(scenario, hooks=[recorder]).run()
    figures = step_figures(recorder.footfalls, recorder.times, recorder.loaded, skip_seconds, MIN_FLIGHT)
    return {"fell": result.fell, "fall_time": result.fall_time, "mean_speed": result.steady_speed_mps,
            "wall_seconds": result.wall_seconds, "sim_seconds": result.sim_seconds, **figures}


def cost(figures: dict, spec: TuningSpec) -> float:
    if figures["fell"] or not figures["steps"]:
        walked = figures["fall_time"] if figures["fall_time"] is not None else 0.0
        return FALL_COST * (1.0 + (spec.seconds - walked) / spec.seconds)
    total = ((figures["mean_step_length"] - spec.step_length) / LENGTH_SCALE) ** 2
    total += (figures["step_length_sd"] / SPREAD_SCALE) ** 2
    if spec.step_duration is not None:
        total += ((figures["mean_step_duration"] - spec.step_duration) / DURATION_SCALE) ** 2
    if spec.flight_share is not None:
        total += (max(0.0, spec.flight_share - figures["flight_share"]) / FLIGHT_SCALE) ** 2
    return float(total)


@dataclass(frozen=True)
class _Evaluate:
    """A picklable CMA objective: x in [0, 1]^n, mapped onto each parameter's bounds."""

    data: dict
    source: str
    body: str
    spec: TuningSpec

    def values(self, x) -> np.ndarray:
        low = np.array([p[1] for p in self.spec.parameters])
        high = np.array([p[2] for p in self.spec.parameters])
        return low + np.clip(np.asarray(x, dtype=float), 0.0, 1.0) * (high - low)

    def gait_data(self, x) -> dict:
        return with_values(self.data, [p[0] for p in self.spec.parameters], self.values(x))

    def __call__(self, x, context=None) -> float:
        gait = parse_gait(self.gait_data(x), self.source, "tuned", self.body)
        return cost(measure(gait, self.spec.character, self.spec.seconds, self.spec.skip_seconds), self.spec)


def tune(name_or_path: str, body: str, executor, *, maxfevals: int = DEFAULT_BUDGET, sigma0: float = SIGMA0,
         seed: int = 1,
         checkpoint: str | Path | None = None, resume: bool = False, on_generation=None) -> tuple[dict, float, object]:
    """CMA-ES over the gait's ``tuning.parameters`` from its current values; the tuned file contents, their
    cost, and the optimizer's result (history, evaluations)."""
    from strider.optimize.cma_es import minimize

    path = gait_path(name_or_path, body)
    data = load_yaml(path)
    spec = read_tuning(data, str(path))
    parse_gait(data, str(path), path.stem, body)   # the starting gait must be valid before any episode runs
    objective = _Evaluate(data, str(path), body, spec)
    x0 = np.array([(_get(data, key) - low) / (high - low) for key, low, high in spec.parameters])
    x0 = np.clip(x0, 0.0, 1.0)
    result = minimize(objective, x0, executor, sigma0=sigma0, maxfevals=maxfevals, seed=seed,
                      bounds=([0.0] * len(x0), [1.0] * len(x0)), checkpoint=checkpoint, resume=resume,
                      on_generation=on_generation)
    start = objective(x0)
    best, best_cost = (result.x, result.cost) if result.cost < start else (x0, start)
    return objective.gait_data(best), best_cost, result
