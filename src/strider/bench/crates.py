"""``strider bench crates``: the crate skills of GBWC (coros-walking.md, P3 (c) and (d)).

Each case is one episode of :class:`strider.methods.gbwc.crates.CrateSkill` on the protocol's character: lift a
crate from a table and carry it, or push one and pull it back. It passes when the character does not fall (the
shared fall test: touching the table with anything but a foot is a fall too) and the task is done within the
protocol's time. The trials run in the workers through :func:`run_crate_trial`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from strider.bench import plots
from strider.bench.execution import BenchRun
from strider.bench.output import BenchOutput, Row
from strider.bench.trial import SHARED_FALLS, BenchContext


@dataclass(frozen=True)
class CrateTrial:
    kind: str
    mass: float
    friction: float | None
    config: str
    character: str
    seconds: float
    name: str


def run_crate_trial(trial: CrateTrial, context: BenchContext | None) -> dict:
    from strider.methods.gbwc.crates import CrateTask, crate_scenario
    from strider.runner import Runner

    context = context or BenchContext()
    task = CrateTask.lifting(trial.mass) if trial.kind == "lift" else CrateTask.pushing(trial.mass)
    if trial.friction is not None:
        task = task.with_friction(trial.friction)
    scenario = crate_scenario(task, context.character(trial.character), trial.config, trial.seconds)
    runner = Runner(scenario, stop_on_fall=True, fall_judge=SHARED_FALLS)
    runner.start()
    skill = scenario.controller
    while not runner.done and skill.done_time is None:
        runner.advance(min(0.1, trial.seconds - runner.time))
    result = runner.finish()
    done = skill.done_time is not None and not result.fell
    return {"case": trial.name, "kind": trial.kind, "mass": trial.mass, "fell": result.fell,
            "fall_time": result.fall_time, "done_time": skill.done_time, "passed": done,
            "stage": skill.stage, "stage_times": skill.stage_times, "crate_moved_m": skill.crate_moved(),
            "sim_seconds": result.sim_seconds, "wall_seconds": result.wall_seconds,
            "final_state_sha256": hashlib.sha256(np.ascontiguousarray(result.final_state).tobytes()).hexdigest()}


def run(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    trials = {c.name: CrateTrial(c.kind, c.mass, c.friction, run.config, protocol.character, p.seconds, c.name)
              for c in p.cases}
    results = list(run.run(trials, label="crates", task=run_crate_trial).values())
    passed = sum(r["passed"] for r in results)
    rows = [Row(f"crate tasks passed (within {p.seconds:g} s)", f"{passed}/{len(results)}", "", passed == len(results))]
    for r in results:
        if r["passed"]:
            detail = f"done at {r['done_time']:.1f} s, crate moved {r['crate_moved_m']:.2f} m"
        elif r["fell"]:
            detail = f"fell at {r['fall_time']:.1f} s in stage {r['stage']}"
        else:
            detail = f"not done in {p.seconds:g} s: stage {r['stage']}, crate moved {r['crate_moved_m']:.2f} m"
        rows.append(Row(f"  {r['case']}", detail, protocol.anchor(r["kind"]), r["passed"]))
    summary = {"passed": passed, "cases": len(results),
               "by_case": {r["case"]: {"passed": r["passed"], "done_time": r["done_time"], "stage": r["stage"],
                                       "crate_moved_m": r["crate_moved_m"]} for r in results}}
    figs = {"bars": plots.bars([r["case"] for r in results], [1.0 if r["passed"] else 0.0 for r in results],
                               f"crate tasks ({run.subject})", "passed")}
    return BenchOutput("crates", run.controller, protocol.as_dict(), results, summary, rows, plots=figs)
