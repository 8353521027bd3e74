"""``strider bench tlc-tasks`` and ``tlc-cost``: task-level control's task success with the shipped policies
(coros-walking.md, P7) and the offline cost of exploring and solving a task (P9).

* **tlc-tasks**: per task, ``starts`` goals drawn from the protocol's range; each episode walks in from
  standing with GBWC, then walks the task by the shipped policy until it succeeds, falls or runs out of time.
  Also each episode's real-time factor (simulated over wall time, walk-in included).
* **tlc-cost**: a task explored (Alg. 1) and solved (Alg. 2) from scratch on the protocol's workers, the wall
  time of each beside a tenth of the thesis' (2.5 h of exploration plus Table 4.2's FVI time).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from strider.bench.output import BenchOutput, Row


@dataclass(frozen=True)
class TaskCase:
    task: str
    goal: float
    seconds: float
    seed: int


def task_case(case: TaskCase, context=None) -> dict:
    from strider.methods.tlc.tasks import load_task
    from strider.methods.tlc.walker import shipped_policy, walk_task

    task = load_task(case.task)
    start = time.perf_counter()
    walk = walk_task(shipped_policy(task), task, case.goal, case.seconds, seed=case.seed)
    wall = time.perf_counter() - start
    sim = walk.strikes[-1].time if walk.strikes else 0.0
    return {"task": case.task, "goal": case.goal, "seed": case.seed, "succeeded": walk.succeeded, "fell": walk.fell,
            "time_to_success": walk.time_to_success, "final_w": walk.final_w, "steps": len(walk.strikes),
            "task_seconds": sim, "wall_seconds": wall}


def run_tasks(protocol) -> BenchOutput:
    from strider.parallel import Executor
    from strider.parallel.sweep import run_sweep

    p = protocol.params
    cases = {}
    rng = np.random.default_rng(protocol.seed)
    for name, spec in p.tasks:
        goals = rng.uniform(spec["low"], spec["high"], spec["starts"])
        for k, g in enumerate(goals):
            cases[f"{name}-{k}"] = TaskCase(name, float(g), spec["seconds"], protocol.seed + k)
    with Executor("processes", workers=p.workers) as executor:
        results = run_sweep(executor, task_case, cases, progress=True, description="tlc-tasks episodes")
    rows, summary = [], {}
    for name, spec in p.tasks:
        mine = [r for r in results.values() if r["task"] == name]
        ok = sum(r["succeeded"] for r in mine)
        falls = sum(r["fell"] for r in mine)
        times = [r["time_to_success"] for r in mine if r["succeeded"]]
        share = ok / len(mine)
        rows.append(Row(f"{name}: {len(mine)} goals in U[{spec['low']:g}, {spec['high']:g}], {spec['seconds']:g} s "
                        "each", f"{ok}/{len(mine)} succeeded ({100 * share:.0f}%); {falls} fall(s); median "
                        f"{np.median(times) if times else float('nan'):.1f} s to success",
                        protocol.anchor("success"), share >= protocol.target("success")))
        summary[name] = {"succeeded": ok, "episodes": len(mine), "share": share, "falls": falls,
                         "median_seconds_to_success": float(np.median(times)) if times else None,
                         "max_seconds_to_success": max(times, default=None),
                         "failures": [{"goal": r["goal"], "fell": r["fell"], "final_w": r["final_w"]}
                                      for r in mine if not r["succeeded"]]}
    notes = [("Success is judged at foot strikes, as the policy's reward is: GLT within 10 cm of the goal with the "
              "forward COM speed under 0.1 m/s; HT walking forward faster than 0.3 m/s within 5 degrees of the goal "
              "heading, judged on both GBWC's character frame and the pelvis's yaw (which lags the frame through a "
              "turn). The thesis gives no success rate (anchor: a decision).")]
    return BenchOutput("tlc-tasks", "tlc", protocol.as_dict(), list(results.values()), summary, rows, notes=notes)


def run_cost(protocol) -> BenchOutput:
    from strider.bench.output import CHECKPOINT_DIR, DEFAULT_RESULTS_DIR
    from strider.methods.tlc.explore import explore, worker_setup
    from strider.methods.tlc.policy import solve
    from strider.methods.tlc.tasks import load_task
    from strider.parallel import Executor

    p = protocol.params
    task = load_task(p.task, p.config)
    checkpoint = DEFAULT_RESULTS_DIR / CHECKPOINT_DIR / f"tlc-cost-{task.name}-{task.config}.pkl"
    with Executor("processes", workers=p.workers, setup=worker_setup(task.character)) as executor:
        exploration = explore(task, executor, checkpoint=checkpoint)
    explored = exploration.info["wall_seconds"]
    policy = solve(exploration, task)
    solved = policy.info["wall_seconds"]
    checkpoint.unlink(missing_ok=True)
    total = explored + solved
    limit = protocol.target("total_minutes") * 60.0
    counts = exploration.outcome_counts()
    rows = [Row(f"{task.name} ({task.config} thresholds) on {p.workers} workers: exploration + FVI",
                f"{total / 60:.1f} min ({explored / 60:.1f} + {solved / 60:.2f})", protocol.anchor("total_minutes"),
                total <= limit),
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
