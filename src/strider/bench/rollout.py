"""``strider bench rollout``: physics steps per second through the batched-rollout API, beside bare MuJoCo.

Every rollout starts from one snapshot of a GBWC walk and runs random servo targets (the walk's targets at the
snapshot plus seeded noise) open loop. Each round times, back to back on the same load: MuJoCo's own rollout
on 1..N threads, then the same rollouts through :class:`~strider.runner.batch.BatchRollouts` on 1..N resident
workers (processes, and Ray if asked). The figure that matters is the ratio at equal parallelism. The bench also
checks that the API's end states are bit-identical to bare MuJoCo's, and times closed-loop GBWC rollouts
through the same API for scale.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping
from functools import partial

import numpy as np

from strider.bench.output import BenchOutput, Row
from strider.bench.protocol import Protocol
from strider.control.controller import LocomotionCommand
from strider.runner import Scenario
from strider.runner.batch import BatchRollouts, RolloutSpec, RolloutTask
from strider.sim import World
from strider.sim.rollout import bare_rollouts

SCENARIO_SECONDS = 600.0   # long enough for any rollout the protocol asks of a snapshot near its start


def walking_scenario(character: str = "bipv3", controller: str = "gbwc", speed: float = 0.8,
                     seconds: float = SCENARIO_SECONDS) -> Scenario:
    """A walk on flat ground: the episode the rollout benchmark (and its tests) branch from."""
    from strider.characters import load_character
    from strider.methods.registry import locomotion_scenario

    return locomotion_scenario(controller, LocomotionCommand(speed=speed), load_character(character),
                               seconds=seconds)


def forward_progress_cost(features: Mapping[str, np.ndarray]) -> float:
    """Minus the distance the centre of mass moved forward (along x) from the first sample to the last."""
    com = features["com"]
    return -float(com[-1][0] - com[0][0])


def _rate(steps: int, seconds: list[float]) -> float:
    return steps / statistics.median(seconds)


def measure(protocol: Protocol) -> dict:
    p = protocol.params
    spec = RolloutSpec(partial(walking_scenario, protocol.character), features=("com",), cost=forward_progress_cost)
    start = spec.start(p.settle_seconds)
    world = World(spec.scenario().scene)
    world.restore(start.physics)
    steps = round(p.seconds / world.timestep)
    targets = world.character().servo_targets.copy()
    rng = np.random.default_rng(protocol.seed)
    controls = targets + p.control_noise * rng.standard_normal((p.rollouts, steps, len(targets)))
    tasks = [RolloutTask(start, p.seconds, controls=c) for c in controls]
    total = p.rollouts * steps
    setups = [("processes", w) for w in p.workers] + ([("ray", max(p.workers))] if p.ray else [])
    batches = {setup: BatchRollouts(spec, backend=setup[0], workers=setup[1]) for setup in setups}
    bare_times: dict[int, list[float]] = {w: [] for w in p.workers}
    api_times: dict[tuple[str, int], list[float]] = {s: [] for s in setups}
    try:
        for batch in batches.values():
            batch.run(tasks[:batch.workers])   # start the workers and build their models before timing
        for _ in range(p.rounds):
            for w in p.workers:
                begin = time.perf_counter()
                bare_end = bare_rollouts(world, controls, threads=w)
                bare_times[w].append(time.perf_counter() - begin)
            for setup, batch in batches.items():
                begin = time.perf_counter()
                outcomes = batch.run(tasks)
                api_times[setup].append(time.perf_counter() - begin)
        identical = all(np.array_equal(_full_physics(world, o.end.physics), b) for o, b in zip(outcomes, bare_end))
        closed = {}
        if p.closed_loop_rollouts:
            closed_tasks = [RolloutTask(start, p.seconds, params={"command": LocomotionCommand(speed=float(s))})
                            for s in np.linspace(0.4, 1.2, p.closed_loop_rollouts)]
            batch = batches[("processes", max(p.workers))]
            begin = time.perf_counter()
            closed_out = batch.run(closed_tasks)
            closed_wall = time.perf_counter() - begin
            closed = {"rollouts": len(closed_tasks), "workers": batch.workers,
                      "steps_per_second": len(closed_tasks) * steps / closed_wall,
                      "fell": sum(o.fell for o in closed_out),
                      "costs": [o.cost for o in closed_out]}
    finally:
        for batch in batches.values():
            batch.close()
    bare = {w: _rate(total, t) for w, t in bare_times.items()}
    api = {f"{backend} x{w}": {"workers": w, "backend": backend, "steps_per_second": _rate(total, t),
                               "over_bare": _rate(total, t) / bare[w]}
           for (backend, w), t in api_times.items()}
    return {"steps_per_rollout": steps, "rollouts": p.rollouts,
            "bare_steps_per_second": {str(w): r for w, r in bare.items()}, "batched": api,
            "bit_identical_to_bare": bool(identical), "closed_loop": closed,
            "batched_over_bare_2": api.get("processes x2", {}).get("over_bare")}


def _full_physics(world: World, state) -> np.ndarray:
    world.restore(state)
    return world.full_physics()


def run(protocol: Protocol, progress: bool = True) -> BenchOutput:
    f = measure(protocol)
    p = protocol.params
    rows = [Row(f"bare mujoco.rollout, {w} thread{'s' if w != '1' else ''}", f"{r / 1e3:,.0f} k steps/s")
            for w, r in f["bare_steps_per_second"].items()]
    rows += [Row(f"batched API, {name}", f"{b['steps_per_second'] / 1e3:,.0f} k steps/s "
                                         f"({100 * b['over_bare']:.0f}% of bare at {b['workers']})")
             for name, b in f["batched"].items()]
    rows.append(Row("end states bit-identical to bare MuJoCo", "yes" if f["bit_identical_to_bare"] else "no",
                    "identical", f["bit_identical_to_bare"]))
    if f["closed_loop"]:
        c = f["closed_loop"]
        rows.append(Row(f"closed-loop GBWC rollouts through the API, {c['workers']} workers",
                        f"{c['steps_per_second'] / 1e3:,.1f} k steps/s ({c['fell']} of {c['rollouts']} fell)"))
    target = protocol.target("batched_over_bare_2")
    ratio = f["batched_over_bare_2"]
    if ratio is not None and target is not None:
        rows.append(Row("batched API over bare, 2 workers on 2 threads", f"{100 * ratio:.0f}%",
                        protocol.anchor('batched_over_bare_2'), ratio >= target))
    notes = [(f"{p.rollouts} open-loop rollouts of {f['steps_per_rollout']} steps per batch; each rate is the median "
              f"of {p.rounds} rounds, bare and batched timed back to back, so their ratio holds on a busy machine.")]
    backends = "processes" + (", ray" if p.ray else "")
    return BenchOutput("rollout", protocol.character, protocol.as_dict(), [], {"rates": f}, rows, notes=notes,
                       run={"backend": backends, "workers": max(p.workers)})
