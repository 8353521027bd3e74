"""One benchmark trial: a controller walking a scenario, judged by the shared fall definition.

A :class:`Trial` is a small, picklable description (numbers, names, a
:class:`~strider.sim.Terrain`); :func:`run_trial` builds the world in the worker,
runs it through the shared :class:`~strider.runner.Runner` and returns plain
metrics. Every bench (push, envelope, terrain, soak, scaling) is a list of trials.

**Falls.** Every controller is judged by the one definition in
:mod:`strider.control.falls` (a body other than the feet touches the ground or
an obstacle, the torso tilts past 1 rad, or the root sinks below half its
standing height), which the runner applies after every control update
(``Runner(fall_judge=...)``), whatever the controller itself believes. A fall
ends the trial.

**Speeds** are the centre of mass's, in the character's own facing frame,
averaged over one stride (two step periods) so that the sway within a stride
cancels out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from strider.control.falls import FallCriteria
from strider.courses import Course
from strider.runner.perturbation import Push
from strider.sim import Terrain

FLAT = Terrain()
SHARED_FALLS = FallCriteria()   # the one fall definition (control/falls.py), for every controller
STRIDE_STEPS = 2   # a stride is two steps: speeds are averaged over one, so left/right sway cancels


@dataclass(frozen=True)
class Trial:
    """Everything that determines one run. Times are in seconds after the settling phase."""

    controller: str
    style: str | None = None
    config: str = "default"                # the controller's named configuration (GBWC: default, thesis, ...)
    character: str = "bipv3"
    scale: float = 1.0                     # the character scaled uniformly (characters.scaling)
    gain_rule: str = "similarity"          # how its gains follow its mass (CharacterSpec.with_gains_for_mass)
    speed: float = 0.6
    period: float = 0.5
    seconds: float = 10.0
    settle_seconds: float = 0.0
    ground: Terrain | Course = FLAT       # what it walks on: a terrain or a course (strider.courses)
    pushes: tuple[Push, ...] = ()
    script: tuple[tuple[float, tuple[tuple[str, float], ...]], ...] = ()   # (time, ((command field, value), ...))
    seed: int = 0
    steady_from: float | None = None       # steady speed: mean over [steady_from, end]
    recovery_from: float | None = None     # "back to walking" is measured from this time (a push's end)
    speed_tolerance: float = 0.1           # m/s, stride-averaged, for "back to walking"
    memory_every: float = 0.0              # s between resident-memory samples (soak); 0: none
    tracking_window: float = 0.0           # s: report the speed-tracking error per window of this length (soak)
    tracking_settle: float = 3.0           # s after a command change or push left out of the tracking error
    time_offset: float = 0.0               # s: this run continues a longer one from here (soak restarts after falls)
    stop_past: float | None = None         # m: end the run once the centre of mass is this far from its start
    extra: dict = field(default_factory=dict, hash=False)   # labels carried into the result (direction, phase)
    # A picklable function (trial, trace) -> dict of further metrics, run in the worker on the run's trace
    # (t, com, com_vel, heading at every control update), so the trace itself does not travel.
    analysis: Callable[[Trial, dict], dict] | None = None

    def settling(self) -> tuple:
        """What the walk before time 0 depends on: trials equal in it settle bit for bit the same."""
        return (self.controller, self.config, self.style, self.character, self.scale, self.gain_rule, self.speed,
                self.period, self.settle_seconds, self.ground, self.seed)


class BenchContext:
    """What a worker builds once and keeps: loaded character specs (worlds are rebuilt per trial in ~10 ms)."""

    def __init__(self) -> None:
        self._characters: dict[tuple, Any] = {}
        # Settled walks by what determines them (Trial.settling), so the trials of a sweep that share one
        # (every push of a grid) branch from it instead of each walking the same settling again.
        self.settled: dict[tuple, Any] = {}

    def character(self, name: str, scale: float = 1.0, gain_rule: str = "similarity"):
        key = (name, scale, gain_rule)
        if key not in self._characters:
            from strider.characters import load_character

            self._characters[key] = load_character(name, scale, gain_rule=gain_rule)
        return self._characters[key]


def resident_memory_mb() -> float:
    """This process's resident memory now, MB (Linux /proc; elsewhere the peak from ``resource``)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        import os

        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stride_average(values: np.ndarray, samples: int) -> np.ndarray:
    """Trailing moving average over ``samples`` samples (shorter at the start)."""
    if len(values) == 0:
        return values
    csum = np.cumsum(np.insert(values, 0, 0.0))
    idx = np.arange(1, len(values) + 1)
    lo = np.maximum(idx - samples, 0)
    return (csum[idx] - csum[lo]) / (idx - lo)


def run_trial(trial: Trial, context: BenchContext | None) -> dict:
    """Run one trial in this process; a plain dict of metrics (JSON-ready)."""
    from strider.control.controller import LocomotionCommand
    from strider.methods.registry import locomotion_scenario
    from strider.runner import CommandChange, Runner
    from strider.runner.hooks import FinishLine

    context = context or BenchContext()
    scenario = locomotion_scenario(trial.controller, LocomotionCommand(speed=trial.speed, period=trial.period),
                                   context.character(trial.character, trial.scale, trial.gain_rule),
                                   style=trial.style, ground=trial.ground,
                                   seconds=trial.seconds, settle_seconds=trial.settle_seconds, pushes=trial.pushes,
                                   script=tuple(CommandChange(t, dict(c)) for t, c in trial.script),
                                   seed=trial.seed, config=trial.config)
    controller = scenario.controller
    memory: list[tuple[float, float]] = []
    hooks = () if trial.stop_past is None else (FinishLine(trial.stop_past),)
    runner = Runner(scenario, record_trace=True, stop_on_fall=True, fall_judge=SHARED_FALLS, hooks=hooks,
                    frame_rate=1.0 / trial.memory_every if trial.memory_every > 0 else 0.0,
                    on_frame=(lambda world, t: memory.append((trial.time_offset + t, resident_memory_mb())))
                    if trial.memory_every else None)
    settled = context.settled.get(trial.settling()) if trial.settle_seconds > 0 else None
    runner.start(settled)
    if trial.settle_seconds > 0 and settled is None:
        context.settled[trial.settling()] = runner.snapshot()
    runner.advance(trial.seconds)
    result = runner.finish()
    out = {k: v for k, v in result.as_dict().items() if k not in ("command", "pushes")}
    out["survived_pushes"] = [p.survived for p in result.pushes]
    out.update(trial.extra)
    out.update(_speed_metrics(trial, result, controller.control_period))
    if trial.analysis is not None:
        out.update(trial.analysis(trial, result.trace))
    out["final_state_sha256"] = hashlib.sha256(np.ascontiguousarray(result.final_state).tobytes()).hexdigest()
    if memory:
        out["memory_mb"] = [[round(t, 3), m] for t, m in memory]
    return out


def _speed_metrics(trial: Trial, result, control_period: float) -> dict:
    tr = result.trace
    if not tr or len(tr["t"]) == 0:
        return {"steady_speed_mps": None, "steady_speed_error": None, "recovery_seconds": None}
    t, vel, heading = tr["t"], tr["com_vel"], tr["heading"]
    forward = vel[:, 0] * np.cos(heading) + vel[:, 1] * np.sin(heading)
    lateral = -vel[:, 0] * np.sin(heading) + vel[:, 1] * np.cos(heading)
    window = max(1, round(STRIDE_STEPS * trial.period / control_period))
    fwd_avg, lat_avg = stride_average(forward, window), stride_average(lateral, window)
    out: dict[str, Any] = {"steady_speed_mps": None, "steady_speed_error": None, "recovery_seconds": None}
    if trial.steady_from is not None:
        tail = t >= trial.steady_from
        if tail.any() and not result.fell:
            steady = float(np.mean(forward[tail]))
            out["steady_speed_mps"] = steady
            out["steady_speed_error"] = abs(steady - trial.speed)
    if trial.recovery_from is not None and not result.fell:
        # Back to walking: the stride-averaged speed is back within tolerance of the command or of the gait's
        # own speed before the push, forwards and sideways, measured from one full stride after the push ends
        # (the average must not include pre-push samples). A controller that does not track a speed command
        # (SIMBICON walks at the speed its gait gives) is judged against the walk it was doing.
        first_push = min(p.time for p in trial.pushes) if trial.pushes else trial.recovery_from
        before = (t < first_push) & (t >= first_push - STRIDE_STEPS * trial.period)
        reference_fwd = float(np.mean(forward[before])) if before.any() else trial.speed
        reference_lat = float(np.mean(lateral[before])) if before.any() else 0.0
        out["pre_push_speed_mps"] = reference_fwd
        start = trial.recovery_from + STRIDE_STEPS * trial.period
        tol = trial.speed_tolerance
        as_commanded = (np.abs(fwd_avg - trial.speed) <= tol) & (np.abs(lat_avg) <= tol)
        as_before = (np.abs(fwd_avg - reference_fwd) <= tol) & (np.abs(lat_avg - reference_lat) <= tol)
        ok = (t >= start) & (as_commanded | as_before)
        out["recovery_seconds"] = float(t[ok][0] - trial.recovery_from) if ok.any() else None
    if trial.tracking_window > 0:
        out["tracking_error_windows"] = _tracking_errors(trial, t, fwd_avg, result.fall_time)
    return out


def _tracking_errors(trial: Trial, t: np.ndarray, fwd_avg: np.ndarray, fall_time: float | None) -> dict:
    """|stride-averaged speed - commanded speed|, summed and counted per window of the whole (offset) run,
    away from the start, command changes and pushes; sums and counts so that pieces of a run can be merged."""
    commanded = np.full(len(t), trial.speed)
    quiet = t >= trial.tracking_settle    # every run starts from standing
    if fall_time is not None:
        quiet &= t < fall_time - trial.tracking_settle   # falling is not tracking
    for when, changes in trial.script:
        for key, value in changes:
            if key == "speed":
                commanded[t >= when] = value
        quiet &= ~((t >= when) & (t < when + trial.tracking_settle))
    for push in trial.pushes:
        quiet &= ~((t >= push.time) & (t < push.time + push.duration + trial.tracking_settle))
    error = np.abs(fwd_avg - commanded)
    window = np.floor((t + trial.time_offset) / trial.tracking_window).astype(int)
    count = int(np.ceil((trial.time_offset + trial.seconds) / trial.tracking_window - 1e-9))
    sums = np.bincount(window[quiet], weights=error[quiet], minlength=count)[:count]
    counts = np.bincount(window[quiet], minlength=count)[:count]
    return {"sum": sums.tolist(), "count": counts.tolist()}
