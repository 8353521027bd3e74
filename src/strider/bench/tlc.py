"""``strider bench tlc-tasks``, ``tlc-vrwt`` and ``tlc-cost``: task-level control's task success with the shipped
policies (coros-walking.md, P7), the very robust walk under thrown balls (P8) and the offline cost of exploring
and solving a task (P9).

* **tlc-tasks**: per task, ``starts`` goals drawn from the protocol's range; each episode walks in from
  standing with GBWC, then walks the task by the shipped policy until it succeeds, falls or runs out of time.
  Also each episode's real-time factor (simulated over wall time, walk-in included), and (P10) one policy's
  walk of a minute on one core, beside bare MuJoCo stepping of the same model in the same process.
* **tlc-vrwt**: balls of each mass thrown at the VRWT policy's walk (strider's runtime, and the thesis' that takes
  the nearest explored state's command alone) and at the plain walk (its steady action every step), the same
  throws at all three; a fall within the observed time fails.
* **tlc-cost**: a task explored (Alg. 1) and solved (Alg. 2) from scratch on the protocol's workers, the wall
  time of each beside a tenth of the thesis' (2.5 h of exploration plus Table 4.2's FVI time).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from strider.bench.output import BenchOutput, Row
from strider.parallel import Checkpoint, Executor, run_sweep
from strider.progress import move_to, progress_bar

NOMINAL_STEP_SECONDS = 0.5   # T of the walk's steps: a bound on the time to the throw's strike


@dataclass(frozen=True)
class TaskCase:
    task: str
    goal: float | tuple[float, ...]     # a number, or one per dimension of the task parameter
    seconds: float
    seed: int
    config: str = "default"     # whose exploration thresholds the policy was solved from
    timing_repeats: int = 1     # a speed case: the walk, its replay and bare stepping each timed this often


def task_case(case: TaskCase, context=None) -> dict:
    from strider.methods.tlc.tasks import load_task
    from strider.methods.tlc.walker import shipped_policy, walk_task

    task = load_task(case.task, case.config)
    start = time.perf_counter()
    walk = walk_task(shipped_policy(task), task, case.goal, case.seconds, seed=case.seed)
    wall = time.perf_counter() - start
    sim = walk.strikes[-1].time if walk.strikes else 0.0
    return {"task": case.task, "config": case.config, "goal": case.goal, "seed": case.seed,
            "succeeded": walk.succeeded, "fell": walk.fell,
            "time_to_success": walk.time_to_success, "final_w": walk.final_w, "steps": len(walk.strikes),
            "task_seconds": sim, "wall_seconds": wall}


def speed_case(case: TaskCase, context=None) -> dict:
    """P10: a policy walking on (success does not stop it) for ``seconds``, timed; then in the same process the
    same walk again with every control tick's state kept, and MuJoCo alone stepping those ticks (the walk's own
    motion, the overhead's baseline); then bare stepping of the model from standing for as long. The three are
    timed ``timing_repeats`` times over and the fastest of each kept."""
    from strider.bench.speed import TickStates, bare_stepping_seconds, fastest_timings
    from strider.characters import load_character
    from strider.methods.tlc.tasks import load_task
    from strider.methods.tlc.walker import shipped_policy, walk_task
    from strider.sim import CharacterPlacement, Scene

    task = load_task(case.task)
    policy = shipped_policy(task)
    walks = []     # the same deterministic walk each time

    def timings() -> tuple[float, float, float]:
        start = time.perf_counter()
        walks.append(walk_task(policy, task, case.goal, case.seconds, seed=case.seed, stop_on_success=False))
        wall = time.perf_counter() - start
        ticks = TickStates()
        walk_task(policy, task, case.goal, case.seconds, seed=case.seed, stop_on_success=False, hooks=(ticks,))
        bare, _ = bare_stepping_seconds(Scene((CharacterPlacement(load_character(policy.character)),)),
                                        walks[-1].sim_seconds)
        return wall, ticks.replay_seconds(walks[-1].sim_seconds), bare

    wall, replay, bare = fastest_timings(case.timing_repeats, timings)
    walk = walks[-1]
    speeds = [s.forward_speed for s in walk.strikes]
    return {"task": case.task, "goal": case.goal, "fell": walk.fell, "sim_seconds": walk.sim_seconds,
            "wall_seconds": wall, "bare_wall_seconds": bare, "replay_wall_seconds": replay,
            "realtime_factor": walk.sim_seconds / wall,
            "bare_realtime_factor": walk.sim_seconds / bare, "overhead": (wall - replay) / replay,
            "overhead_over_standing": (wall - bare) / bare,
            "mean_strike_speed": float(np.mean(speeds)) if speeds else None, "timing_repeats": case.timing_repeats}


def run_tasks(protocol, progress: bool = True, checkpoint: Checkpoint | None = None) -> BenchOutput:
    from strider.methods.tlc.tasks import load_task

    p = protocol.params
    cases = {}
    rng = np.random.default_rng(protocol.seed)
    dimensions = {}
    for name, spec in p.tasks:
        dimensions[name] = load_task(name).dimensions
        goals = rng.uniform(spec["low"], spec["high"], (spec["starts"], dimensions[name]))
        for config in spec["configs"]:          # the same goals for every configuration
            for k, g in enumerate(goals):
                goal = float(g[0]) if len(g) == 1 else tuple(float(x) for x in g)
                cases[f"{name}-{config}-{k}"] = TaskCase(name, goal, spec["seconds"], protocol.seed + k, config)
    with Executor("processes", workers=p.workers) as executor:
        results = run_sweep(executor, task_case, cases, checkpoint, progress=progress,
                            description="tlc-tasks episodes")
    rows, summary = [], {}
    for name, spec in p.tasks:
        for config in spec["configs"]:
            mine = [r for r in results.values() if r["task"] == name and r["config"] == config]
            ok = sum(r["succeeded"] for r in mine)
            falls = sum(r["fell"] for r in mine)
            times = [r["time_to_success"] for r in mine if r["succeeded"]]
            share = ok / len(mine)
            square = "²" if dimensions[name] == 2 else ""
            which = f" ({config} thresholds)" if len(spec["configs"]) > 1 else ""
            rows.append(Row(f"{name}{which}: {len(mine)} goals in U[{spec['low']:g}, {spec['high']:g}]{square}, "
                            f"{spec['seconds']:g} s each",
                            f"{ok}/{len(mine)} succeeded ({100 * share:.0f}%); {falls} fall(s); median "
                            f"{np.median(times) if times else float('nan'):.1f} s to success",
                            protocol.anchor("success"), protocol.meets("success", share)))
            summary[name if config == "default" else f"{name}-{config}"] = {
                "succeeded": ok, "episodes": len(mine), "share": share, "falls": falls,
                "median_seconds_to_success": float(np.median(times)) if times else None,
                "max_seconds_to_success": max(times, default=None),
                "failures": [{"goal": r["goal"], "fell": r["fell"], "final_w": r["final_w"]}
                             for r in mine if not r["succeeded"]]}
    if p.speed_task is not None:
        with Executor("processes", workers=1) as executor:
            [(_, speed)] = list(executor.map(speed_case, [TaskCase(p.speed_task, p.speed_goal, p.speed_seconds,
                                                                    protocol.seed,
                                                                    timing_repeats=p.speed_repeats)]))
        rows.append(Row(f"speed: the {p.speed_task} policy walking {p.speed_seconds:g} s on one core (mean "
                        f"{speed['mean_strike_speed']:.2f} m/s at strikes)", f"{speed['realtime_factor']:.0f}x real "
                        f"time (bare stepping {speed['bare_realtime_factor']:.0f}x)",
                        protocol.anchor("realtime_factor"),
                        protocol.meets("realtime_factor", speed["realtime_factor"]) and not speed["fell"]))
        rows.append(Row("  controller + policy + runner overhead over bare stepping of the same model through the "
                        "same walk", f"{100 * speed['overhead']:.0f}% (over stepping from standing: "
                        f"{100 * speed['overhead_over_standing']:.0f}%; each the fastest of {speed['timing_repeats']})",
                        protocol.anchor("overhead"),
                        protocol.meets("overhead", speed["overhead"], at_most=True)))
        summary["speed"] = speed
    notes = [("Success is judged at foot strikes, as the policy's reward is: GLT within 10 cm of the goal with the "
              "forward COM speed under 0.1 m/s either way; GPT the same around a point; HT walking forward faster "
              "than 0.3 m/s within 5 degrees of the goal heading, judged on both GBWC's character frame and the "
              "pelvis's yaw (which lags the frame through a turn). The thesis gives no success rate (anchor: a "
              "decision)."),
             ("'source thresholds' is the policy solved from an exploration with Table 4.2's T and N (the thesis' "
              "configuration); 'default' is strider's, with T and N set for MuJoCo's noisier foot strikes.")]
    return BenchOutput("tlc-tasks", "tlc", protocol.as_dict(), list(results.values()), summary, rows, notes=notes)


WALKERS = {"plain": "the plain walk (0.6 m/s every step)",
           "nearest": "the VRWT policy, the nearest explored state's command (the thesis')",
           "policy": "the VRWT policy"}


@dataclass(frozen=True)
class HitCase:
    mass: float
    walker: str          # "policy" (VRWT's), "nearest" (VRWT's, the thesis' runtime) or "plain" (its steady action)
    strike: int
    seconds: float
    seed: int


def hit_case(case: HitCase, context=None) -> dict:
    """One ball at a walker: thrown from a random direction at a random moment of the step from ``strike``."""
    from strider.methods.tlc.tasks import load_task
    from strider.methods.tlc.walker import TimedThrow, shipped_policy, walk_task

    task = load_task("VRWT")
    if case.walker == "nearest":
        task = task.with_runtime_neighbours(1)
    throw = task.trusted.hits.random_throw(np.random.default_rng(case.seed), case.mass)
    plain = task.actions[task.steady.cycle] if case.walker == "plain" else None
    walk = walk_task(shipped_policy(task), task, (), case.seconds, seed=case.seed,
                     throws=(TimedThrow(case.strike, throw),), fixed_action=plain)
    return {"mass": case.mass, "walker": case.walker, "seed": case.seed, "azimuth_deg": throw.azimuth_deg,
            "delay": throw.time, "hit": walk.hit_steps > 0, "fell": walk.fell, "steps": len(walk.strikes)}


def run_vrwt(protocol, progress: bool = True, checkpoint: Checkpoint | None = None) -> BenchOutput:
    p = protocol.params
    # the task's clock starts at the walk-in's last strike; the ball leaves within the step from strike k
    seconds = p.throw_strike * NOMINAL_STEP_SECONDS + p.observe
    cases = {f"{walker}-{m:g}kg-{k}": HitCase(m, walker, p.throw_strike, seconds, protocol.seed + k)
             for m in p.masses for walker in WALKERS for k in range(p.hits)}
    with Executor("processes", workers=p.workers) as executor:
        results = run_sweep(executor, hit_case, cases, checkpoint, progress=progress, description="tlc-vrwt throws")
    rows, summary = [], {}
    for m in p.masses:
        for walker, name in WALKERS.items():
            mine = [r for r in results.values() if r["mass"] == m and r["walker"] == walker]
            falls, hits = sum(r["fell"] for r in mine), sum(r["hit"] for r in mine)
            rate = falls / len(mine)
            rows.append(Row(f"{m:g} kg balls at {name}", f"{falls}/{len(mine)} fell ({100 * rate:.0f}%); "
                            f"{hits} hit the body", protocol.anchor(f"failures_{m:g}kg") if walker != "plain"
                            else "thesis' plain walk: ~30 / 70 / 100% for 5 / 10 / 15 kg",
                            protocol.meets(f"failures_{m:g}kg", rate, at_most=True) if walker != "plain" else None))
            summary[f"{walker}-{m:g}kg"] = {"falls": falls, "throws": len(mine), "hits": hits, "rate": rate}
    notes = [(f"Each ball (0.12 m, 6 m/s from 1 m, aimed at the centre of mass) leaves at a random moment of the "
              f"step that starts at the task's strike {p.throw_strike}, from a random direction; a fall within "
              f"{p.observe:g} s of that strike fails. The same throws hit every walker."),
             "The thesis' plain-walk figures are approximate (Sec. 4.5.6: roughly 30%, 70% and all fall)."]
    return BenchOutput("tlc-vrwt", "tlc", protocol.as_dict(), list(results.values()), summary, rows, notes=notes)


def run_cost(protocol, progress: bool = True) -> BenchOutput:
    from strider.bench.output import CHECKPOINT_DIR, DEFAULT_RESULTS_DIR
    from strider.methods.tlc.explore import explore, worker_setup
    from strider.methods.tlc.policy import solve
    from strider.methods.tlc.tasks import load_task

    p = protocol.params
    task = load_task(p.task, p.config)
    checkpoint = DEFAULT_RESULTS_DIR / CHECKPOINT_DIR / f"tlc-cost-{task.name}-{task.config}.pkl"
    with Executor("processes", workers=p.workers, setup=worker_setup(task)) as executor, \
            progress_bar(task.exploration.max_states, f"exploring {task.name}", unit="state", enabled=progress) as bar:
        exploration = explore(task, executor, checkpoint=checkpoint,
                              progress=lambda branched, known: move_to(bar, branched, known=known))
    explored = exploration.info["wall_seconds"]
    policy = solve(exploration, task)
    solved = policy.info["wall_seconds"]
    checkpoint.unlink(missing_ok=True)
    total = explored + solved
    counts = exploration.outcome_counts()
    rows = [Row(f"{task.name} ({task.config} thresholds) on {p.workers} workers: exploration + FVI",
                f"{total / 60:.1f} min ({explored / 60:.1f} + {solved / 60:.2f})", protocol.anchor("total_minutes"),
                protocol.meets("total_minutes", total / 60.0, at_most=True)),
            Row("  states explored; steps kept / untrusted / fell",
                f"{len(exploration)} ({exploration.info['stopped']}); {counts['kept']} / {counts['untrusted']} / "
                f"{counts['fell']}"),
            Row("  grid cells expecting success", f"{100 * policy.info['success_share']:.0f}%")]
    summary = {"task": task.name, "config": task.config, "exploration_seconds": explored, "solve_seconds": solved,
               "total_seconds": total, "states": len(exploration), "outcomes": counts, **exploration.info}
    notes = [(f"Exploration stops at {task.exploration.max_states} states (twice Table 4.2's |s|) or when a batch "
              "adds no novel state. The thesis explored on its own machine for 2.5-4 h; the target is a tenth of "
              "2.5 h plus its FVI time.")]
    return BenchOutput("tlc-cost", "tlc", protocol.as_dict(), [summary], summary, rows, notes=notes,
                       config=task.config)
