"""``strider bench soak``: a long walk with random speed and turn commands and random pushes.

The simulated time (``minutes``) is split into ``segments`` equal runs that each
start from standing, with their own random schedule drawn from the protocol
seed and the segment number; they run in parallel, and because the split is
fixed by the protocol, results do not depend on the worker count. A fall ends a
segment's run, and the segment goes on from standing, in a fresh world, with
the rest of its schedule, until its simulated time is used up (no
controller here gets up by itself). Reported: falls, non-finite states, the
speed-tracking error per window (its drift over time), and the growth of each
worker's resident memory over its segment.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from strider.bench import plots
from strider.bench.execution import BenchRun, trial_base
from strider.bench.output import BenchOutput, Row
from strider.bench.protocol import Protocol
from strider.bench.trial import BenchContext, Trial, run_trial
from strider.runner.perturbation import Push

MIN_PIECE_SECONDS = 0.5   # s: a remainder of a segment shorter than this is not worth a restart


def _rest_of(trial: Trial, start: float) -> Trial:
    """The part of a segment's schedule from ``start`` on, as a run from standing with the command then in force."""
    speed, turn_rate = trial.speed, 0.0
    for when, changes in trial.script:
        if when <= start:
            values = dict(changes)
            speed, turn_rate = values.get("speed", speed), values.get("turn_rate", turn_rate)
    script = (((0.0, (("turn_rate", turn_rate),)),)
              + tuple((round(when - start, 3), changes) for when, changes in trial.script if when > start))
    pushes = tuple(dataclasses.replace(p, time=round(p.time - start, 3)) for p in trial.pushes if p.time > start)
    return dataclasses.replace(trial, speed=speed, seconds=trial.seconds - start, script=script, pushes=pushes,
                               time_offset=trial.time_offset + start)


def run_segment(trial: Trial, context: BenchContext | None) -> dict:
    """Executor task: a whole segment, restarted from standing after each fall; merged metrics."""
    pieces = []
    start = 0.0
    while trial.seconds - start >= MIN_PIECE_SECONDS:
        piece = run_trial(_rest_of(trial, start) if start > 0 else trial, context)
        pieces.append(piece)
        if not (piece["fell"] and piece["sim_seconds"] > 0):
            break
        start += piece["sim_seconds"]
    windows = [p["tracking_error_windows"] for p in pieces]
    width = max(len(w["sum"]) for w in windows)
    sums, counts = np.zeros(width), np.zeros(width)
    for w in windows:
        sums[:len(w["sum"])] += w["sum"]
        counts[:len(w["count"])] += w["count"]
    offsets = np.cumsum([0.0] + [p["sim_seconds"] for p in pieces])
    # A piece's result lists every push of its schedule; only those before its end (a fall) were delivered.
    delivered = survived = 0
    for start, piece in zip(offsets, pieces):
        for push, ok in zip(_rest_of(trial, start).pushes if start > 0 else trial.pushes,
                            piece["survived_pushes"]):
            if push.time < piece["sim_seconds"]:
                delivered += 1
                survived += bool(ok)
    return {"segment": trial.extra.get("segment"), "sim_seconds": float(offsets[-1]),
            "wall_seconds": sum(p["wall_seconds"] for p in pieces),
            "falls": sum(bool(p["fell"]) for p in pieces), "nan": sum(bool(p["unstable"]) for p in pieces),
            "fall_times": [float(o + p["fall_time"]) for o, p in zip(offsets, pieces)
                           if p["fell"] and p["fall_time"] is not None],
            "pushes_delivered": delivered, "pushes_survived": survived,
            "tracking_error_by_window": [float(s / c) if c else None for s, c in zip(sums, counts)],
            "memory_mb": [m for p in pieces for m in p.get("memory_mb", [])],
            "final_state_sha256": pieces[-1]["final_state_sha256"]}


def segment_trial(protocol: Protocol, controller: str, segment: int, config: str = "default") -> Trial:
    p = protocol.params
    seconds = p.minutes * 60.0 / p.segments
    rng = np.random.default_rng([protocol.seed, segment])
    script = []
    t = float(rng.uniform(*p.command_interval))
    first_speed = float(rng.uniform(*p.speed_range))
    while t < seconds:
        script.append((round(t, 3), (("speed", float(rng.uniform(*p.speed_range))),
                                     ("turn_rate", float(rng.uniform(*p.turn_rate_range))))))
        t += float(rng.uniform(*p.command_interval))
    pushes = []
    t = float(rng.uniform(*p.push_interval))
    while t < seconds:
        pushes.append(Push(float(rng.uniform(0.0, p.push_force_max)), round(t, 3), float(rng.uniform(0.0, 360.0)),
                           p.push_duration))
        t += float(rng.uniform(*p.push_interval))
    return trial_base(protocol, controller, config, speed=first_speed, period=p.period, seconds=seconds,
                      script=tuple(script), pushes=tuple(pushes), memory_every=p.memory_every,
                      tracking_window=p.drift_window_minutes * 60.0, tracking_settle=p.settle_after_change,
                      extra={"segment": segment})


def run(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    trials = {f"segment {i}": segment_trial(protocol, run.controller, i, run.config) for i in range(p.segments)}
    results = list(run.run(trials, task=run_segment).values())
    falls = sum(r["falls"] for r in results)
    nans = sum(r["nan"] for r in results)
    simulated = sum(r["sim_seconds"] for r in results) / 60.0
    pushes = sum(len(t.pushes) for t in trials.values())
    delivered = sum(r["pushes_delivered"] for r in results)
    survived = sum(r["pushes_survived"] for r in results)
    windows = [[e for e in r["tracking_error_by_window"]] for r in results]
    width = max(len(w) for w in windows)
    by_window = []
    for k in range(width):
        vals = [w[k] for w in windows if k < len(w) and w[k] is not None]
        by_window.append(float(np.mean(vals)) if vals else None)
    valid = [(k, e) for k, e in enumerate(by_window) if e is not None]
    drift = None
    if len(valid) >= 2:
        ks, es = zip(*valid)
        drift = float(np.polyfit(np.array(ks) * p.drift_window_minutes / 60.0, es, 1)[0])   # m/s per hour
    growth = [r["memory_mb"][-1][1] - r["memory_mb"][0][1] for r in results if r.get("memory_mb")]
    rows = [Row(f"falls in {simulated:.1f} simulated minutes ({p.segments} segments of "
                f"{p.minutes / p.segments:g} min, restarted from standing after a fall)", f"{falls}",
                protocol.anchor("falls"), falls == 0),
            Row("  mean simulated time between falls", f"{simulated * 60 / falls:.0f} s" if falls else "-"),
            Row("  unstable simulations (non-finite state or MuJoCo's warning)", f"{nans}", "", nans == 0),
            Row(f"  pushes (up to {p.push_force_max:g} N) survived", f"{survived} of {delivered} delivered "
                f"({pushes} scheduled)"),
            Row(f"  speed-tracking error per {p.drift_window_minutes:g} min window, m/s",
                ", ".join("-" if e is None else f"{e:.3f}" for e in by_window)),
            Row("  drift of the tracking error", "n/a" if drift is None else f"{drift:+.4f} m/s per hour"),
            Row("  resident-memory growth over a segment", ", ".join(f"{g:+.1f} MB" for g in growth) or "n/a")]
    summary = {"falls": falls, "fall_times_by_segment": [r["fall_times"] for r in results], "nan": nans,
               "simulated_minutes": simulated, "pushes_scheduled": pushes, "pushes_delivered": delivered,
               "pushes_survived": survived, "tracking_error_by_window": by_window,
               "tracking_drift_mps_per_hour": drift, "memory_growth_mb": growth}
    x = [(k + 0.5) * p.drift_window_minutes for k in range(width)]
    series = {f"segment {i}": (x[:len(w)], [np.nan if e is None else e for e in w]) for i, w in enumerate(windows)}
    figs = {"tracking": plots.lines(series, f"speed-tracking error over the soak ({run.subject})",
                                    "minutes into the segment", "mean |speed error|, m/s")}
    return BenchOutput("soak", run.controller, protocol.as_dict(), results, summary, rows, plots=figs)
