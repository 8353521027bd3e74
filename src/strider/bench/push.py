"""``strider bench push``: survival of 0.1 s pushes from every direction at every phase of the stride.

Grid mode runs every (direction, phase) at one force. ``--find-max`` bisects,
for each direction, the largest force that every phase survives (the worst case
over phases), on the protocol's force grid (100-1500 N in 50 N steps): each
round tests every unresolved direction at its midpoint, all phases at once.
Bisection assumes that surviving a force means surviving every smaller one; the
grid of survived and failed forces is in the results file for checking.

A trial succeeds when the character does not fall during ``observe_seconds``
after the push and is back to walking within ``recovery_seconds`` (stride-averaged
speed within ``speed_tolerance`` of the command, or of the gait's own speed in the stride before the
push, forwards and sideways).
Directions say where the push comes *from*, relative to the facing direction:
0 from behind, 90 from the left, 180 from the front, 270 from the right.
"""

from __future__ import annotations

import numpy as np

from strider.bench import plots
from strider.bench.execution import BenchRun, trial_base
from strider.bench.output import BenchOutput, Row
from strider.bench.protocol import Protocol
from strider.bench.trial import STRIDE_STEPS, Trial
from strider.runner.perturbation import Push


def directions(p) -> list[float]:
    return [360.0 * i / p.directions for i in range(p.directions)]


def push_time(p, phase: int) -> float:
    """Phases are evenly spaced over one stride, counted from the end of the settling walk."""
    return STRIDE_STEPS * p.period * phase / p.phases


def trial_id(direction: float, phase: int, force: float) -> str:
    return f"d{direction:05.1f}-p{phase}-f{force:06.1f}"


def make_trial(protocol: Protocol, controller: str, direction: float, phase: int, force: float,
               config: str = "default") -> Trial:
    p = protocol.params
    when = push_time(p, phase)
    return trial_base(protocol, controller, config, speed=p.speed, period=p.period, settle_seconds=p.settle_seconds,
                      seconds=when + p.duration + p.observe_seconds,
                      pushes=(Push(force, when, direction, p.duration),), recovery_from=when + p.duration,
                      speed_tolerance=p.speed_tolerance,
                      extra={"direction_deg": direction, "phase": phase, "force": force})


def succeeded(result: dict, p) -> bool:
    return (not result["fell"]) and result["recovery_seconds"] is not None \
        and result["recovery_seconds"] <= p.recovery_seconds


def grid_trials(protocol: Protocol, controller: str, force: float, dirs: list[float] | None = None,
                config: str = "default") -> dict:
    p = protocol.params
    return {trial_id(d, k, force): make_trial(protocol, controller, d, k, force, config)
            for d in (dirs if dirs is not None else directions(p)) for k in range(p.phases)}


def run_grid(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    results = run.run(grid_trials(protocol, run.controller, p.force, config=run.config), label=f"{p.force:g} N")
    trials = list(results.values())
    ok = _success_grid(trials, p, p.force)
    n, survived = ok.size, int(ok.sum())
    no_fall = sum(not t["fell"] for t in trials)
    dirs = directions(p)
    per_dir = {f"{d:g}": int(ok[i].sum()) for i, d in enumerate(dirs)}
    anchor = protocol.anchor("grid_survival")
    rows = [Row(f"survival at {p.force:g} N x {p.duration:g} s, {p.directions} directions x {p.phases} phases",
                f"{survived}/{n} ({100 * survived / n:.0f}%)", anchor, survived == n),
            Row("  of which did not fall (recovery aside)", f"{no_fall}/{n}"),
            Row("  directions with every phase survived", f"{sum(v == p.phases for v in per_dir.values())}"
                f"/{p.directions}")]
    rows += [Row(f"  from {d} deg", f"{v}/{p.phases}") for d, v in per_dir.items()]
    summary = {"force": p.force, "survived": survived, "trials": n, "survival_rate": survived / n,
               "did_not_fall": no_fall, "survived_by_direction": per_dir}
    fig = _heatmap(ok, p, f"push survival at {p.force:g} N ({run.subject})")
    return BenchOutput("push", run.controller, protocol.as_dict(), trials, summary, rows, plots={"heatmap": fig})


def run_find_max(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    forces = list(np.arange(p.find_max_low, p.find_max_high + 1e-9, p.find_max_resolution))
    dirs = directions(p)
    lo = {d: -1 for d in dirs}            # index of the largest force known survived (-1: none tested)
    hi = {d: len(forces) for d in dirs}   # index of the smallest force known failed (len: none)
    all_results: dict[str, dict] = {}
    first_round_force = None
    rnd = 0
    while any(hi[d] - lo[d] > 1 for d in dirs):
        rnd += 1
        todo = {d: (lo[d] + hi[d]) // 2 for d in dirs if hi[d] - lo[d] > 1}
        trials = {}
        for d, i in todo.items():
            trials.update(grid_trials(protocol, run.controller, float(forces[i]), [d], run.config))
        results = run.run(trials, label=f"round {rnd}")
        all_results.update(results)
        if first_round_force is None:
            first_round_force = float(forces[next(iter(todo.values()))])
        for d, i in todo.items():
            f = float(forces[i])
            every = all(succeeded(results[trial_id(d, k, f)], p) for k in range(p.phases))
            if every:
                lo[d] = i
            else:
                hi[d] = i
    max_force = {f"{d:g}": (float(forces[lo[d]]) if lo[d] >= 0 else None) for d in dirs}
    known = [v for v in max_force.values() if v is not None]
    worst = min(known) if len(known) == len(dirs) else None
    target = protocol.target("min_max_force")
    rows = [Row("min over directions of F_max (all phases survive)",
                f"{worst:g} N" if worst is not None else f"< {p.find_max_low:g} N in some direction",
                protocol.anchor("min_max_force"), None if target is None else (worst is not None and worst >= target))]
    rows += [Row(f"  F_max from {d} deg", f"{v:g} N" if v is not None else f"< {p.find_max_low:g} N",
                 "", None) for d, v in max_force.items()]
    trials = list(all_results.values())
    summary = {"max_force_by_direction": max_force, "min_max_force": worst, "rounds": rnd,
               "force_grid": [float(f) for f in forces], "capped_at_high": [d for d, v in max_force.items()
                                                                            if v == float(forces[-1])]}
    ok = _success_grid([t for t in trials if t["force"] == first_round_force], p, first_round_force)
    figs = {"polar": plots.polar(dirs, [max_force[f"{d:g}"] for d in dirs],
                                 f"largest force survived at every phase ({run.subject}; facing up)", "F_max, N",
                                 target=target, ceiling=p.find_max_high),
            "heatmap": _heatmap(ok, p, f"push survival at {first_round_force:g} N ({run.subject})")}
    notes = [(f"Bisection over {p.find_max_low:g}-{p.find_max_high:g} N in {p.find_max_resolution:g} N steps; "
             f"{rnd} rounds, {len(trials)} trials.")]
    return BenchOutput("push", run.controller, protocol.as_dict(), trials, summary, rows, notes=notes, plots=figs)


def _success_grid(trials: list[dict], p, force: float) -> np.ndarray:
    """Success by direction (rows) and phase (columns); NaN where a cell was not run at ``force``."""
    dirs = directions(p)
    grid = np.full((len(dirs), p.phases), np.nan)
    index = {f"{d:g}": i for i, d in enumerate(dirs)}
    for t in trials:
        if t["force"] == force:
            grid[index[f"{t['direction_deg']:g}"], t["phase"]] = 1.0 if succeeded(t, p) else 0.0
    return grid


def _heatmap(ok: np.ndarray, p, title: str):
    return plots.heatmap(ok, [f"{d:g}" for d in directions(p)],
                         [f"{push_time(p, k):.3g}" for k in range(p.phases)], title,
                         "push from, deg (0 = behind, 90 = left)", "push time within the stride, s",
                         "1 = survived and walking again", fmt="{:.0f}")
