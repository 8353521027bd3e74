"""Acceptance measurements of the skills (docs/skills.md, P1, P2, P6, P7) and SIMBICON's push grid (docs/simbicon.md).

    python -m strider.bench.skills_acceptance --workers 2 [--only stand,simbicon,rolls,cma,speedup]

Writes ``benchmarks/results/skills-acceptance-<date>.json``. Every run is
independent and seeded, so the figures repeat exactly; wall times are noisy on
shared machines and are reported as ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import time
from pathlib import Path

import numpy as np

DIRECTIONS = tuple(range(0, 360, 45))          # deg, 8 directions at 45 deg (P1)
SLOPES = tuple(range(-20, 21, 5))               # deg (P2)
STAND_PUSH = (2.0, 0.2, 5.0)                    # s: stand 2 s, push 0.2 s, watch 5 s (P1)
MAX_PUSH = 1500.0                               # N, bisection bracket (P1)
PUSH_RESOLUTION = 10.0                          # N (P1)
STAND_PUSH_GRID = tuple(range(50, 376, 25))     # N, P1 forces run for every direction (250 target, 350 goal)
MAX_SLIDE = 0.1                                 # m of foot slide while loaded (P1, P2)
SIMBICON_PUSH = 600.0                           # N, 0.1 s (issue 5, the GBWC grid's force)
SIMBICON_SETTLE = 10.0                          # s of walking before the push (coros-walking.md P1)
ROLL_TRIALS = 50                                # perturbed starts per rolling skill (P6)
ROLLS = ("roll-supine-to-prone", "roll-prone-to-supine", "roll-repeated", "forward-roll")
CMA_SKILL = "roll-supine-to-prone"              # re-optimized from its Table 6.1 initial guess (P7)
CMA_WORKERS = 2                                 # P7
CMA_EVALUATIONS = 1000                          # P7: at least 1000
CMA_SEED = 1


def _stand_trial(task, context=None) -> dict:
    """One standing run: fell?, foot slide (m, tangential motion of a loaded foot; see
    :mod:`strider.bench.foot_slide`), feet's net displacement (m, steps included) and steps taken."""
    from strider.bench.foot_slide import FootSlideMeter
    from strider.characters import load_character
    from strider.methods.skills.controller import SkillController
    from strider.methods.skills.skill import load_skill
    from strider.runner import Push, Runner, Scenario
    from strider.sim import CharacterPlacement, Scene, Terrain

    force, direction, slope, seconds = task
    terrain = Terrain("slope", slope) if slope else Terrain()
    start, duration, watch = STAND_PUSH
    pushes = (Push(force, start, direction, duration),) if force > 0 else ()
    controller = SkillController(load_skill("stand"))
    meter = FootSlideMeter()
    runner = Runner(Scenario(Scene((CharacterPlacement(load_character("bipv3")),), terrain=terrain),
                             controller, seconds=seconds or start + duration + watch, pushes=pushes),
                    frame_rate=1.0 / controller.control_period, on_frame=meter)
    feet0 = [runner.character.body_position(b).copy() for b in ("lFoot", "rFoot")]
    result = runner.run()
    displacement = max(float(np.linalg.norm((runner.character.body_position(b) - f)[:2]))
                       for b, f in zip(("lFoot", "rFoot"), feet0))
    fell = bool(result.fell or runner.character.non_foot_contact())
    return {"fell": fell, "slide_m": meter.worst, "feet_displacement_m": displacement, "steps": result.steps,
            "passed": not fell and meter.worst < MAX_SLIDE}


def _stand_survives(task, context=None) -> bool:
    return _stand_trial(task)["passed"]


def _walker_survives(task, context=None) -> bool:
    import strider

    controller, style, phase_time, direction = task
    result = strider.walk(seconds=SIMBICON_SETTLE + phase_time + 5.0, controller=controller, style=style,
                          speed=0.6 if controller == "gbwc" else 1.0,
                          pushes=(f"{SIMBICON_PUSH}@{SIMBICON_SETTLE + phase_time}:{direction}:0.1",))
    return not result.fell


def _roll_passes(task, context=None) -> bool:
    from strider.methods.skills.rollout import reaches_end, rollout
    from strider.methods.skills.skill import load_skill

    name, seed = task
    skill = load_skill(name)
    return reaches_end(skill, rollout(skill, perturb=0.05 if seed is not None else 0.0, seed=seed))


def _bare_steps(n: int, context=None) -> float:
    """Wall seconds for ``n`` bare physics steps of the humanoid, the reference for parallel speedup."""
    from strider.characters import load_character
    from strider.sim import CharacterPlacement, Scene, World

    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    t = time.perf_counter()
    world.step(n)
    return time.perf_counter() - t


def stand_figures(executor) -> dict:
    """P1 and P2. Once the character steps, survival is not monotone in the force (a harder push can
    trigger an earlier, better step), so besides the source's bisection the P1 forces are also run as a
    grid: per direction, the largest grid force below which every grid force passed, and the pass at
    the 250 N target and 350 N goal."""
    out: dict = {"max_push_N": {}, "push_grid": {}, "max_push_all_below_N": {}, "slopes_20s": {}}
    for d in DIRECTIONS:
        lo, hi = 0.0, MAX_PUSH
        while hi - lo > PUSH_RESOLUTION:
            mid = 0.5 * (lo + hi)
            ok = next(iter(executor.map(_stand_survives, [(mid, float(d), 0.0, None)])))[1]
            lo, hi = (mid, hi) if ok else (lo, mid)
        out["max_push_N"][d] = lo
    tasks = [(f, float(d), 0.0, None) for d in DIRECTIONS for f in STAND_PUSH_GRID]
    passed = dict(executor.map(_stand_survives, tasks, ordered=True))
    for i, (f, d, _, _) in enumerate(tasks):
        out["push_grid"].setdefault(int(d), {})[int(f)] = bool(passed[i])
    for d, row in out["push_grid"].items():
        below = 0
        for f in sorted(row):
            if not row[f]:
                break
            below = f
        out["max_push_all_below_N"][d] = below
    results = dict(executor.map(_stand_trial, [(0.0, 0.0, float(s), 20.0) for s in SLOPES], ordered=True))
    out["slopes_20s"] = {s: results[i] for i, s in enumerate(SLOPES)}
    return out


def walker_figures(executor) -> dict:
    import strider

    out = {}
    for gait in ("walk", "run"):
        r = strider.walk(seconds=20.0, controller="simbicon", style=gait)
        out[f"simbicon_{gait}_20s"] = {"fell": r.fell, "mean_speed_mps": r.mean_speed_mps, "steps": r.steps}
    for controller, style, period in (("simbicon", "walk", 0.6), ("gbwc", None, 0.5)):
        tasks = [(controller, style, period * k / 4, float(d)) for d in DIRECTIONS for k in range(4)]
        survived = [ok for _, ok in executor.map(_walker_survives, tasks, ordered=True)]
        out[f"{controller}_push_grid_600N"] = {"survived": int(sum(survived)), "of": len(survived)}
    return out


def roll_figures(executor) -> dict:
    out = {}
    for name in ROLLS:
        tasks = [(name, None)] + [(name, s) for s in range(ROLL_TRIALS)]
        results = [ok for _, ok in executor.map(_roll_passes, tasks, ordered=True)]
        out[name] = {"nominal": results[0], "perturbed_passed": int(sum(results[1:])), "of": ROLL_TRIALS}
    return out


def cma_figures() -> dict:
    """P7: CMA-ES for supine->prone from Table 6.1's initial values; wall time including the pool start.

    The workers' CPU time is reported beside the wall time: on a shared machine
    the wall time depends on the other load, the CPU time does not (CPU / 2 is
    the wall time two free cores would take).
    """
    from strider.methods.skills.optimize import optimize_skill, success_rate, with_parameters, worker_cache
    from strider.methods.skills.skill import DATA_DIR, load_skill
    from strider.parallel import Executor

    path = DATA_DIR / "initial" / f"{CMA_SKILL}.yaml"
    skill = load_skill(path)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with Executor("processes", workers=CMA_WORKERS, setup=worker_cache) as ex:
        result = optimize_skill(path, ex, seed=CMA_SEED, maxfevals=CMA_EVALUATIONS)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)   # the pool's workers have been joined by now
    load = os.getloadavg()
    nominal, perturbed = success_rate(with_parameters(skill, result.x), ROLL_TRIALS)
    return {"skill": CMA_SKILL, "seed": CMA_SEED, "sigma0": skill.optimize.sigma0, "workers": CMA_WORKERS,
            "evaluations": result.evaluations, "cost": result.cost, "wall_seconds": wall,
            "worker_cpu_seconds": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
            "load_average_1_5_15": load, "passes_p6a_nominal": nominal, "perturbed_passed": perturbed,
            "of": ROLL_TRIALS}


def speedup_figures() -> dict:
    """Speedup from 1 to 2 workers: bare MuJoCo stepping vs CMA-ES skill rollouts, measured back to back."""
    from strider.methods.skills.optimize import SkillObjective, parameter_vector, worker_cache
    from strider.methods.skills.skill import load_skill, skill_path
    from strider.optimize.cma_es import minimize
    from strider.parallel import Executor

    def timed(workers: int, fn, tasks) -> float:
        with Executor("processes", workers=workers, setup=worker_cache) as ex:
            list(ex.map(fn, tasks[:workers]))   # warm the pool (start-up is not the figure)
            t = time.perf_counter()
            list(ex.map(fn, tasks))
            return time.perf_counter() - t

    steps = [20000] * 8
    bare = timed(1, _bare_steps, steps) / timed(2, _bare_steps, steps)
    path = str(skill_path("roll-supine-to-prone"))
    x0 = parameter_vector(load_skill(path))

    def cma(workers: int) -> float:
        with Executor("processes", workers=workers, setup=worker_cache) as ex:
            list(ex.map(_bare_steps, [10] * workers))
            t = time.perf_counter()
            minimize(SkillObjective(path), x0, ex, sigma0=1.5, maxfevals=66, seed=1)
            return time.perf_counter() - t

    skills = cma(1) / cma(2)
    return {"bare_mujoco_speedup": bare, "cma_rollout_speedup": skills, "ratio": skills / bare}


def main() -> None:
    from strider.parallel import Executor

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default="stand,simbicon,rolls,cma,speedup")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    report: dict = {"date": datetime.date.today().isoformat()}
    with Executor("processes", workers=args.workers) as ex:
        if "stand" in parts:
            report["stand"] = stand_figures(ex)
            print(json.dumps(report["stand"]), flush=True)
        if "simbicon" in parts:
            report["walkers"] = walker_figures(ex)
            print(json.dumps(report["walkers"]), flush=True)
        if "rolls" in parts:
            report["rolls"] = roll_figures(ex)
            print(json.dumps(report["rolls"]), flush=True)
    if "cma" in parts:
        report["cma"] = cma_figures()
        print(json.dumps(report["cma"]), flush=True)
    if "speedup" in parts:
        report["speedup"] = speedup_figures()
        print(json.dumps(report["speedup"]), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"skills-acceptance-{report['date']}-{'-'.join(sorted(parts))}.json"
    path.write_text(json.dumps(report, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
