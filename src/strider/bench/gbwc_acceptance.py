"""The walking-humanoid acceptance protocol for GBWC, measured in one run.

Runs every scenario of the acceptance list (speed envelope, step periods,
turning, the 600 N push grid, standing, start/stop, scaled and asymmetric
characters, determinism) on a process pool, plus the speed measurement
(real-time factor of headless walking beside bare MuJoCo stepping of the same
model, in the same run), and writes
``benchmarks/results/gbwc-acceptance-<date>.json`` and a Markdown summary
that sets each figure beside its target.

    python -m strider.bench.gbwc_acceptance --workers 2
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import math
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from strider.parallel import Executor, run_sweep
from strider.runner.perturbation import Push

SETTLE_FRACTION = 0.5   # steady speed = mean COM speed over the last half of a run (coros-walking.md, P2)
SPEED_TOLERANCE = 0.15  # m/s, the envelope criterion
PUSH_FORCE = 600.0      # N (seed 000, Sec. 5.6)
PUSH_DURATION = 0.1     # s (seed 000, Sec. 5.6)
PUSH_SPEED = 0.6        # m/s (coros-walking.md, P1)
PUSH_TIME = 6.0         # s after the start: walking is steady by then
TURN_TIME = 6.0         # s: when the 90 degree heading command is given
TURN_TOLERANCE_DEG = 5.0


@dataclass(frozen=True)
class Case:
    """One scenario: a name, a group, and the arguments of :func:`run_case`."""

    group: str
    name: str
    seconds: float = 20.0
    speed: float = 1.0
    period: float = 0.5
    character: str = "bipv3"
    scale: float = 1.0
    pushes: tuple[Push, ...] = ()
    walking: bool = True
    script: tuple[tuple[float, dict], ...] = ()
    control_period: float | None = None
    timestep: float | None = None
    extra: dict = field(default_factory=dict)


def _timestep(timestep: float | None) -> dict:
    """Scene keyword arguments for a physics step (none: the project's default)."""
    return {} if timestep is None else {"timestep": timestep}


def run_case(case: Case, context=None) -> dict:
    """Run one scenario in this process and return its metrics (a plain dict, picklable); an executor task."""
    from strider.characters import load_character
    from strider.control.controller import LocomotionCommand
    from strider.methods.gbwc.controller import GBWC
    from strider.methods.gbwc.params import GBWCParams
    from strider.runner import CommandChange, Runner, Scenario
    from strider.sim import CharacterPlacement, Scene

    params = GBWCParams()
    if case.control_period is not None:
        params = dataclasses.replace(params, control_period=case.control_period)
    controller = GBWC(LocomotionCommand(speed=case.speed, period=case.period, walking=case.walking), params)
    scene = Scene((CharacterPlacement(load_character(case.character, case.scale)),), **_timestep(case.timestep))
    scenario = Scenario(scene, controller, seconds=case.seconds,
                        pushes=case.pushes,
                        script=tuple(CommandChange(t, c) for t, c in case.script))
    runner = Runner(scenario, record_trace=True)
    result = runner.run()
    trace = result.trace
    t = trace["t"]
    vel = trace["com_vel"]
    last = t >= case.seconds * SETTLE_FRACTION
    steady = float(np.mean(vel[last, 0])) if last.any() else float("nan")
    out = result.as_dict()
    out.update(case=case.name, group=case.group, command_speed=case.speed, period=case.period,
               steady_speed_mps=steady, steady_speed_error=abs(steady - case.speed) if case.walking else None,
               final_mode=controller.mode, final_state_digest=float(np.sum(result.final_state * np.arange(
                   1, len(result.final_state) + 1))))
    if case.group == "turn":
        out["turn_seconds"] = _turn_completion(trace, controller, case)
    return out


def _turn_completion(trace: dict, controller, case: Case) -> float | None:
    heading = np.asarray(trace["heading"]) if "heading" in trace else None
    if heading is None:
        return None
    t = trace["t"]
    target = math.radians(case.extra["turn_deg"])
    err = np.degrees(np.abs(np.angle(np.exp(1j * (heading - target)))))
    after = t >= TURN_TIME
    ok = after & (err <= TURN_TOLERANCE_DEG)
    return float(t[ok][0] - TURN_TIME) if ok.any() else None


def cases() -> list[Case]:
    out = [Case("walk", "walk 1.0 m/s, 20 s", speed=1.0)]
    for v in (-0.6, -0.3, 0.0, 0.3, 0.6, 1.0, 1.4, 1.7):
        out.append(Case("envelope", f"speed {v:+.1f}", speed=v))
    for T in (0.3, 0.6, 1.0):
        out.append(Case("period", f"period {T} s at 0.6 m/s", speed=0.6, period=T))
    out.append(Case("turn", "turn 90 deg at 0.6 m/s", speed=0.6,
                    script=((TURN_TIME, {"heading": math.pi / 2}),), extra={"turn_deg": 90.0}))
    for direction in range(0, 360, 45):
        for k in range(4):
            # Four gait phases: a 0.5 s step sampled every quarter step.
            when = PUSH_TIME + k * 0.125
            out.append(Case("push", f"600 N from {direction} deg, phase {k}/4", seconds=12.0, speed=PUSH_SPEED,
                            pushes=(Push(PUSH_FORCE, when, float(direction), PUSH_DURATION),)))
    out.append(Case("stand", "stand 20 s", speed=0.0, walking=False))
    for direction in (0, 90, 180, 270):
        out.append(Case("stand-push", f"stand, 150 N x 0.2 s from {direction} deg", seconds=10.0, speed=0.0,
                        walking=False, pushes=(Push(150.0, 4.0, float(direction), 0.2),)))
    out.append(Case("start-stop", "stand, walk 0.6 m/s, stop", seconds=16.0, speed=0.0, walking=False,
                    script=((3.0, {"walking": True, "speed": 0.6}), (10.0, {"walking": False, "speed": 0.0}))))
    out.append(Case("characters", "0.75x humanoid at 1.0 m/s", scale=0.75, speed=1.0))
    out.append(Case("characters", "1.25x humanoid at 1.0 m/s", scale=1.25, speed=1.0))
    out.append(Case("characters", "robot at 0.6 m/s", character="robot", speed=0.6))
    out.append(Case("determinism", "determinism run A", seconds=5.0, speed=1.0))
    out.append(Case("determinism", "determinism run B", seconds=5.0, speed=1.0))
    return out


def measure_speed(seconds: float = 20.0, timestep: float | None = None) -> dict:
    """Real-time factor of headless GBWC walking and of bare stepping of the same model, same process."""
    from strider.characters import load_character
    from strider.control.controller import LocomotionCommand
    from strider.methods.gbwc.controller import GBWC
    from strider.runner import Runner, Scenario
    from strider.sim import CharacterPlacement, Scene, World

    scene = Scene((CharacterPlacement(load_character()),), **_timestep(timestep))
    controller = GBWC(LocomotionCommand(speed=0.6))
    runner = Runner(Scenario(scene, controller, seconds=seconds))
    # Thread CPU time beside wall time: on a machine shared with other work, wall time also counts the
    # time this process waited for a core, CPU time does not, so its ratios are the steadier ones.
    cpu_start = time.thread_time()
    result = runner.run()
    walking_cpu = time.thread_time() - cpu_start
    world = World(scene)
    steps = round(seconds / world.timestep)
    cpu_start, start = time.thread_time(), time.perf_counter()
    world.step(steps)
    bare, bare_cpu = time.perf_counter() - start, time.thread_time() - cpu_start
    return {"sim_seconds": seconds, "timestep": world.timestep, "control_period": controller.control_period,
            "walking_wall_seconds": result.wall_seconds, "walking_realtime_factor": result.realtime_factor,
            "bare_wall_seconds": bare, "bare_realtime_factor": seconds / bare,
            "controller_overhead_ratio": (result.wall_seconds - bare) / bare,
            "walking_cpu_seconds": walking_cpu, "walking_cpu_realtime_factor": seconds / walking_cpu,
            "bare_cpu_seconds": bare_cpu, "bare_cpu_realtime_factor": seconds / bare_cpu,
            "cpu_overhead_ratio": (walking_cpu - bare_cpu) / bare_cpu}


def summarize(results: list[dict], speed: dict) -> tuple[dict, str]:
    by = {}
    for r in results:
        by.setdefault(r["group"], []).append(r)
    rows = []

    def row(what, measured, target, ok):
        rows.append((what, measured, target, "yes" if ok else "**no**"))

    w = by["walk"][0]
    row("walk 20 s at 1.0 m/s: fell", str(w["fell"]), "no fall", not w["fell"])
    row("  steady speed (last 10 s)", f"{w['steady_speed_mps']:.3f} m/s", "1.0 +/- 0.1", w["steady_speed_error"] <= 0.1)
    row("  mean speed over the whole run", f"{w['mean_speed_mps']:.3f} m/s", "(includes the start)", True)
    row("  lateral drift", f"{w['lateral_drift_m']:.2f} m", "< 0.5 m", w["lateral_drift_m"] < 0.5)
    for r in by["envelope"]:
        ok = not r["fell"] and r["steady_speed_error"] <= SPEED_TOLERANCE
        row(f"envelope {r['case']}", f"fell={r['fell']}, steady {r['steady_speed_mps']:+.3f} m/s",
            "no fall, error <= 0.15", ok)
    for r in by["period"]:
        row(r["case"], f"fell={r['fell']}", "walks 20 s", not r["fell"])
    t = by["turn"][0]
    turn_s = t.get("turn_seconds")
    row("turn 90 deg at 0.6 m/s", f"fell={t['fell']}, done in {turn_s if turn_s is None else round(turn_s, 2)} s",
        "<= 2.5 s, keeps walking", (not t["fell"]) and turn_s is not None and turn_s <= 2.5)
    pushes = by["push"]
    survived = sum(1 for p in pushes if not p["fell"])
    row("600 N x 0.1 s pushes at 0.6 m/s (8 dirs x 4 phases)", f"{survived}/{len(pushes)} survived", "32/32",
        survived == len(pushes))
    per_dir = {}
    for p in pushes:
        d = p["pushes"][0]["direction_deg"]
        per_dir.setdefault(d, []).append(not p["fell"])
    s = by["stand"][0]
    row("stand 20 s", f"fell={s['fell']}", "no fall", not s["fell"])
    sp = by["stand-push"]
    row("stand, 150 N x 0.2 s (4 directions)", f"{sum(not p['fell'] for p in sp)}/{len(sp)} survived", "all",
        all(not p["fell"] for p in sp))
    ss = by["start-stop"][0]
    row("stand -> walk 0.6 -> stop", f"fell={ss['fell']}, final mode {ss['final_mode']}", "standing again",
        (not ss["fell"]) and ss["final_mode"] == "standing")
    for r in by["characters"]:
        row(r["case"], f"fell={r['fell']}, steady {r['steady_speed_mps']:.3f} m/s", "walks 20 s", not r["fell"])
    a, b = by["determinism"]
    same = a["final_state_digest"] == b["final_state_digest"]
    row("determinism (two identical runs)", "identical" if same else "differ", "identical", same)
    row("real-time factor, headless walking", f"{speed['walking_realtime_factor']:.1f}x", ">= 20x",
        speed["walking_realtime_factor"] >= 20)
    row("bare MuJoCo stepping, same model", f"{speed['bare_realtime_factor']:.1f}x", "(reference)", True)
    row("controller overhead / bare stepping", f"{speed['controller_overhead_ratio'] * 100:.0f}%", "<= 50% (goal)",
        speed["controller_overhead_ratio"] <= 0.5)
    lines = ["| scenario | measured | target | met |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    push_lines = ["", "Push survival by direction (from which the push comes; 0 = from behind):", "",
                  "| direction deg | survived (4 phases) |", "|---|---|"]
    push_lines += [f"| {d:g} | {sum(v)}/{len(v)} |" for d, v in sorted(per_dir.items())]
    summary = {"rows": rows, "push_by_direction": {str(k): sum(v) for k, v in per_dir.items()}}
    md = "\n".join(lines + push_lines) + "\n"
    return summary, md


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2, help="parallel workers (default 2)")
    parser.add_argument("--backend", default="processes", choices=("serial", "processes", "ray"),
                        help="where the scenarios run (default processes)")
    parser.add_argument("--out", default="benchmarks/results", help="folder for the JSON and Markdown results")
    parser.add_argument("--only", default=None, help="run only this group (walk, envelope, push, ...)")
    parser.add_argument("--timestep", type=float, default=None,
                        help="physics step, s, for every scenario (default: the project's, 0.001); results "
                             "then go to files named ...-dt<ms>ms")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    if args.timestep is not None and not (1e-5 <= args.timestep <= 0.01):
        parser.error("--timestep must be between 1e-5 and 0.01 s")
    todo = [dataclasses.replace(c, timestep=args.timestep) for c in cases() if args.only is None or c.group == args.only]
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with Executor(args.backend, workers=args.workers) as executor:
        done = run_sweep(executor, run_case, {str(i): c for i, c in enumerate(todo)}, progress=sys.stderr.isatty(),
                         description="gbwc acceptance")
    results = list(done.values())
    speed = measure_speed(timestep=args.timestep)
    date = _dt.date.today().isoformat()
    if args.timestep is not None:
        date += f"-dt{args.timestep * 1000:g}ms"
    payload = {"benchmark": "gbwc-acceptance", "date": date, "python": platform.python_version(),
               "machine": platform.machine(), "wall_seconds": time.perf_counter() - start,
               "speed": speed, "results": results}
    if args.only is None:
        summary, md = summarize(results, speed)
        payload["summary"] = summary
        (out_dir / f"gbwc-acceptance-{date}.md").write_text(md)
        print(md)
    (out_dir / f"gbwc-acceptance-{date}.json").write_text(json.dumps(payload, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
