"""``strider bench slip-gaits`` and ``slip-speed``: the SLIP preview controller's protocols 1 and 4 (Mordatch et
al. 2010, Sec. 7, Table 1 and Fig. 6).

Both drive the torque-actuated humanoid directly (settle under the QP, then the controller every 4 ms), so the
time inside MuJoCo's step, the planner and the QP are each timed in the same run:

* **gaits**: each gait of the protocol walks on flat ground; steps are read from debounced touchdowns after the
  first ``skip_seconds``: step length (COM travel along the heading between touchdowns), step duration, the
  share of steps with a double support and with a flight of at least ``min_flight`` s, and falls;
* **speed**: level walking with each replanning rule; real-time factor (simulated / wall time), bare stepping
  speed (simulated time / wall time inside ``mj_step``), evaluations per replan and the median QP solve.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import statistics
import time

import numpy as np

from strider.bench.output import BenchOutput, Row
from strider.bench.protocol import Protocol


def _controller(gait: str, config: str, every: int | None = None, on_contact: bool | None = None,
                evaluations: int | None = None, **changes):
    from strider.methods.slip.controller import ReplanRule, SlipController, SlipParams
    from strider.methods.slip.gait import load_gait

    params = dataclasses.replace(SlipParams(goals=load_gait(gait)).configured(config), **changes)
    if every is not None:
        params = dataclasses.replace(params, replan=ReplanRule(every=every, on_contact=bool(on_contact)))
    if evaluations is not None:
        params = dataclasses.replace(params, planner=dataclasses.replace(params.planner,
                                                                         max_evaluations=evaluations))
    return SlipController(params)


def episode(character_name: str, controller, seconds: float) -> dict:
    """Settle, then run ``controller`` for ``seconds``; the touchdowns, phases and timings it saw."""
    from strider.characters import load_character
    from strider.sim import CharacterPlacement, Scene, World

    world = World(Scene((CharacterPlacement(load_character(character_name)),)))
    character = world.character()
    controller.reset(world, character)
    per_control = round(controller.control_period / world.timestep)
    for i in range(round(controller.settle_seconds / controller.control_period)):
        controller.settle(i * controller.control_period)
        world.step(per_control)
    ticks = round(seconds / controller.control_period)
    step_wall, qp_times, airborne, double = 0.0, [], [], []
    original = controller.qp.torques

    def timed_torques(targets):
        start = time.perf_counter()
        out = original(targets)
        qp_times.append(time.perf_counter() - start)
        return out

    controller.qp.torques = timed_torques
    wall = time.perf_counter()
    t = 0.0
    done = 0
    for done in range(1, ticks + 1):
        controller.control(t)
        down = controller.memory.down
        airborne.append(not any(down.values()))
        double.append(all(down.values()))
        start = time.perf_counter()
        world.step(per_control)
        step_wall += time.perf_counter() - start
        t += controller.control_period
        if controller.has_fallen():
            break
    wall = time.perf_counter() - wall
    stats = controller.stats
    return {"sim_seconds": t, "wall_seconds": wall, "step_wall_seconds": step_wall, "fell": controller.has_fallen(),
            "fall_time": t if controller.has_fallen() else None, "ticks": done, "plans": stats.plans,
            "evaluations": stats.evaluations, "qp_median_seconds": statistics.median(qp_times) if qp_times else None,
            "qp_fallbacks": controller.qp.solver.stats.fallbacks, "qp_failures": controller.qp.solver.stats.failures,
            "touchdowns": [(td, side, list(com) if com is not None else None) for td, side, com in stats.touchdowns],
            "airborne": airborne, "double": double, "control_period": controller.control_period,
            "heading": controller.target_heading.value}


def step_figures(trial: dict, skip_seconds: float, min_flight: float) -> dict:
    """Steps between consecutive touchdowns after ``skip_seconds``: lengths, durations, DS and flight shares."""
    direction = np.array([np.cos(trial["heading"]), np.sin(trial["heading"])])
    downs = [(t, np.asarray(com)) for t, _, com in trial["touchdowns"] if t >= skip_seconds and com is not None]
    lengths = [float((b[1][:2] - a[1][:2]) @ direction) for a, b in itertools.pairwise(downs)]
    durations = [b[0] - a[0] for a, b in itertools.pairwise(downs)]
    dt = trial["control_period"]
    flights, doubles = [], []
    for (a, _), (b, _) in itertools.pairwise(downs):
        i, j = round(a / dt), round(b / dt)
        flights.append(sum(trial["airborne"][i:j]) * dt >= min_flight)
        doubles.append(any(trial["double"][i:j]))
    return {"steps": len(lengths), "mean_step_length": float(np.mean(lengths)) if lengths else None,
            "mean_step_duration": float(np.mean(durations)) if durations else None,
            "flight_share": float(np.mean(flights)) if flights else None,
            "double_support_share": float(np.mean(doubles)) if doubles else None}


def _within(value: float | None, target: float, tolerance: float) -> bool:
    return value is not None and target > 0 and abs(value - target) <= tolerance * target


def gait_trial(task: tuple[str, str, str, float], context=None) -> dict:
    """One gait episode in a worker: (character, gait, configuration, seconds) -> the episode's record."""
    character, gait, config, seconds = task
    return episode(character, _controller(gait, config), seconds)


def run_gaits(protocol: Protocol) -> BenchOutput:
    from strider.methods.slip.gait import load_gait
    from strider.parallel import Executor

    p = protocol.params
    cases = [(config, gait) for config in p.configs for gait in p.gaits]
    tasks = [(protocol.character, gait, config, p.seconds) for config, gait in cases]
    with Executor("processes", workers=min(p.workers, len(tasks))) as executor:
        episodes = [trial for _, trial in executor.map(gait_trial, tasks, ordered=True)]
    trials, rows = [], []
    for (config, gait), trial in zip(cases, episodes, strict=True):
        goals = load_gait(gait)
        figures = step_figures(trial, p.skip_seconds, p.min_flight)
        trials.append({"gait": gait, "config": config, **figures,
                       **{k: v for k, v in trial.items() if k not in ("airborne", "double")}})
        walking = goals.step_length > 0
        length_ok = _within(figures["mean_step_length"], goals.step_length, p.tolerance) if walking else None
        duration_ok = _within(figures["mean_step_duration"], goals.step_duration, p.tolerance) if walking else None
        fell = f"fell at {trial['fall_time']:.1f} s" if trial["fell"] else "no fall"
        length = figures["mean_step_length"]
        duration = figures["mean_step_duration"]
        rows.append(Row(f"{gait} ({config}): {fell}, {figures['steps']} steps",
                        f"length {'-' if length is None else f'{length:.2f}'} m (goal {goals.step_length:g}), "
                        f"duration {'-' if duration is None else f'{duration:.2f}'} s "
                        f"(goal {goals.step_duration:g}); DS in "
                        f"{_share(figures['double_support_share'])}, flight in {_share(figures['flight_share'])}",
                        protocol.anchor("step_accuracy") if walking else "",
                        None if not walking else bool(length_ok and duration_ok and not trial["fell"])))
    notes = [(f"Statistics leave out the first {p.skip_seconds:g} s; a flight is at least {p.min_flight:g} s with "
             f"no foot down. Episodes ran {min(p.workers, len(tasks))} at a time, one process each.")]
    return BenchOutput("slip-gaits", "slip", protocol.as_dict(), trials, {"cases": len(trials)}, rows, notes=notes)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}% of steps"


def run_speed(protocol: Protocol) -> BenchOutput:
    p = protocol.params
    trials, rows = [], []
    for case in p.cases:
        every, on_contact, seconds = int(case[0]), bool(case[1]), float(case[2])
        trial = episode(protocol.character, _controller("walk", p.config, every, on_contact, p.evaluations), seconds)
        rt = trial["sim_seconds"] / trial["wall_seconds"]
        bare = trial["sim_seconds"] / trial["step_wall_seconds"]
        evals = trial["evaluations"] / max(trial["plans"], 1)
        name = ("contact events only" if every == 0 else
                f"every {every} step{'s' if every > 1 else ''}{' and contact events' if on_contact else ''}")
        trials.append({"replan": name, "every": every, "on_contact": on_contact, "realtime_factor": rt,
                       "bare_realtime_factor": bare, "evaluations_per_plan": evals,
                       **{k: v for k, v in trial.items() if k not in ("airborne", "double", "touchdowns")}})
        metric = "every_step" if every == 1 else "contact_only" if every == 0 else ""
        target = protocol.target(metric) if metric else None
        rows.append(Row(f"replanning {name}, {trial['sim_seconds']:.1f} s walked"
                        + (f" (fell at {trial['fall_time']:.1f} s)" if trial["fell"] else ""),
                        f"{rt:.3f}x real time (bare mj_step {bare:.0f}x); {evals:.0f} evals per plan; "
                        f"QP median {1e3 * trial['qp_median_seconds']:.2f} ms",
                        protocol.anchor(metric) if metric else "",
                        None if target is None else rt >= target))
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    notes = [(f"One process, OPENBLAS_NUM_THREADS={threads} (the protocol asks for 1). Bare speed is simulated "
              "time over the wall time spent inside MuJoCo's step in the same run.")]
    return BenchOutput("slip-speed", "slip", protocol.as_dict(), trials, {"cases": len(trials)}, rows, notes=notes)


def dodge_trial(task: tuple, context=None) -> dict:
    """One throw in a worker: (character, configuration, sees the ball, seed, throw time, watch s, spread deg)."""
    from strider.characters import load_character
    from strider.runner import Runner, Scenario
    from strider.runner.throws import Throw, Thrower, ball_props
    from strider.sim import CharacterPlacement, Scene

    character, config, sees, seed, throw_at, watch, spread = task
    throw = Throw.seeded(seed, throw_at, spread)
    scene = Scene((CharacterPlacement(load_character(character)),), props=ball_props((throw,)))
    controller = _controller("dodge", config, sees_projectiles=sees)
    thrower = Thrower((throw,))
    result = Runner(Scenario(scene, controller, throw_at + watch, seed=seed), hooks=(thrower,)).run()
    outcome = thrower.outcomes()[0]
    return {"config": config, "sees_ball": sees, "seed": seed, "azimuth_deg": throw.azimuth_deg,
            "hit": outcome.hit, "hit_bodies": list(outcome.hit_bodies), "fell": result.fell,
            "fall_time": result.fall_time, "avoided": not outcome.hit and not result.fell,
            "moved_m": result.distance_m, "steps": result.steps, "sim_seconds": result.sim_seconds,
            "wall_seconds": result.wall_seconds, "plans": controller.stats.plans,
            "evaluations": controller.stats.evaluations}


def run_dodge(protocol: Protocol) -> BenchOutput:
    from strider.parallel import Executor

    p = protocol.params
    cases = [(config, True) for config in p.configs] + ([("default", False)] if p.blind else [])
    tasks = [(protocol.character, config, sees, seed, p.throw_at, p.watch_seconds, p.spread_deg)
             for config, sees in cases for seed in range(p.seeds)]
    with Executor("processes", workers=min(p.workers, len(tasks))) as executor:
        trials = [trial for _, trial in executor.map(dodge_trial, tasks, ordered=True)]
    rows, summary = [], {}
    for config, sees in cases:
        mine = [t for t in trials if t["config"] == config and t["sees_ball"] == sees]
        avoided = sum(t["avoided"] for t in mine)
        name = f"{config}" + ("" if sees else ", planner blind to the ball (control)")
        summary[name] = avoided / len(mine)
        misses = ", ".join(f"seed {t['seed']}: {_miss(t)}" for t in mine if not t["avoided"])
        rows.append(Row(f"dodge ({name})", f"{avoided}/{len(mine)} avoided" + (f" ({misses})" if misses else ""),
                        protocol.anchor("avoided") if sees else "",
                        avoided / len(mine) >= protocol.target("avoided") if sees else None))
    notes = [(f"Each trial ran {p.throw_at + p.watch_seconds:g} s after the 1 s settle; episodes ran "
              f"{min(p.workers, len(tasks))} at a time, one process each.")]
    return BenchOutput("slip-dodge", "slip", protocol.as_dict(), trials, {"avoided_share": summary}, rows,
                       notes=notes)


def _miss(trial: dict) -> str:
    if trial["fell"]:
        return "fell"
    return "hit the " + "/".join(body.split("/")[-1] for body in trial["hit_bodies"])
