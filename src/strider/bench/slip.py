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
import math
import statistics
import time
from dataclasses import dataclass

import numpy as np

from strider.bench.execution import BenchRun
from strider.bench.output import BenchOutput, Row
from strider.bench.protocol import Protocol
from strider.methods.slip.flights import CLOCK_SLACK  # a gait change due at a tick's time is taken at that tick
from strider.parallel.threads import blas_threads
from strider.progress import progress_over


def _controller(gait: str, config: str, every: int | None = None, on_contact: bool | None = None,
                evaluations: int | None = None, planner_seed: int | None = None, **changes):
    from strider.methods.slip.controller import ReplanRule, SlipController, SlipParams
    from strider.methods.slip.gait import load_gait

    params = dataclasses.replace(SlipParams(goals=load_gait(gait)).configured(config), **changes)
    if every is not None:
        params = dataclasses.replace(params, replan=ReplanRule(every=every, on_contact=bool(on_contact)))
    planner = {k: v for k, v in (("max_evaluations", evaluations), ("seed", planner_seed)) if v is not None}
    if planner:
        params = dataclasses.replace(params, planner=dataclasses.replace(params.planner, **planner))
    return SlipController(params)


def episode(character_name: str, controller, seconds: float, changes: list | None = None) -> dict:
    """Settle, then run ``controller`` for ``seconds``; the touchdowns, phases and timings it saw. ``changes``:
    (time, goals) pairs at which the controller changes gait."""
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
    pending = sorted(changes or [], key=lambda change: change[0])
    for done in range(1, ticks + 1):
        while pending and t >= pending[0][0] - CLOCK_SLACK:
            controller.change_gait(pending.pop(0)[1])
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
            "evaluations": stats.evaluations, "plan_seconds": stats.plan_seconds,
            "qp_median_seconds": statistics.median(qp_times) if qp_times else None,
            "qp_fallbacks": controller.qp.solver.stats.fallbacks, "qp_failures": controller.qp.solver.stats.failures,
            "touchdowns": [(td, side, list(com) if com is not None else None) for td, side, com in stats.touchdowns],
            "airborne": airborne, "double": double, "control_period": controller.control_period,
            "flight_log": [dataclasses.astuple(f) for f in stats.flights.all()],   # (start s, end s, rise m)
            "heading": controller.target_heading.value,
            "final_goals": dataclasses.asdict(controller.params.goals)}


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
    rises = apex_rises(trial, skip_seconds, min_flight)
    return {"steps": len(lengths), "mean_step_length": float(np.mean(lengths)) if lengths else None,
            "mean_step_duration": float(np.mean(durations)) if durations else None,
            "flight_share": float(np.mean(flights)) if flights else None,
            "double_support_share": float(np.mean(doubles)) if doubles else None,
            "flights": len(rises), "mean_apex_rise": float(np.mean(rises)) if rises else None}


def apex_rises(trial: dict, skip_seconds: float, min_flight: float) -> list[float]:
    """h_eps of every flight of at least ``min_flight`` s from ``skip_seconds`` on, from the controller's flight
    log (:mod:`strider.methods.slip.flights`, as the planner's Eq. 23 reads a flight)."""
    from strider.methods.slip.flights import Flight, FlightLog

    log = FlightLog([Flight(*f) for f in trial["flight_log"]])
    return [f.rise for f in log.lasting(min_flight, trial["control_period"], since=skip_seconds)]


def _within(value: float | None, target: float, tolerance: float) -> bool:
    return value is not None and target > 0 and abs(value - target) <= tolerance * target


@dataclass(frozen=True)
class GaitTrial:
    """One gait episode: ``legs`` is the gaits in order with how long each is held, one leg for a plain gait and
    several for a transition."""

    name: str
    character: str
    config: str
    legs: tuple[tuple[str, float], ...]
    planner_seed: int = 1


def gait_trial(trial: GaitTrial, context=None) -> dict:
    """One gait episode in a worker: the record of :func:`episode`."""
    from strider.methods.slip.controller import configured_goals
    from strider.methods.slip.gait import load_gait

    controller = _controller(trial.legs[0][0], trial.config, planner_seed=trial.planner_seed)
    changes, at = [], 0.0
    for (_, held), (gait, _) in itertools.pairwise(trial.legs):
        at += held
        changes.append((at, configured_goals(load_gait(gait), trial.config)))
    return episode(trial.character, controller, sum(seconds for _, seconds in trial.legs), changes)


def pooled_step_figures(figures: list[dict]) -> dict:
    """Step figures over several episodes' steps together: each episode's means weighted by its step count."""
    steps = sum(f["steps"] for f in figures)
    out = {"steps": steps}
    for key in ("mean_step_length", "mean_step_duration", "flight_share", "double_support_share"):
        out[key] = (sum(f[key] * f["steps"] for f in figures if f["steps"]) / steps) if steps else None
    flights = sum(f["flights"] for f in figures)
    out["flights"] = flights
    out["mean_apex_rise"] = (sum(f["mean_apex_rise"] * f["flights"] for f in figures if f["flights"]) / flights
                             if flights else None)
    return out


def _falls_text(trials: list[dict]) -> str:
    fell = sorted(t["fall_time"] for t in trials if t["fell"])
    if not fell:
        return f"no fall in {len(trials)}"
    return f"{len(fell)}/{len(trials)} fell (at {', '.join(f'{t:.1f}' for t in fell)} s)"


def _steps_text(goals, figures: dict) -> str:
    length, duration = figures["mean_step_length"], figures["mean_step_duration"]
    text = (f"length {'-' if length is None else f'{length:.2f}'} m (goal {goals.step_length:g}), "
            f"duration {'-' if duration is None else f'{duration:.2f}'} s (goal {goals.step_duration:g}); DS in "
            f"{_share(figures['double_support_share'])}, flight in {_share(figures['flight_share'])}")
    if goals.w_apex > 0:
        rise = figures["mean_apex_rise"]
        text += (f"; apex {'-' if rise is None else f'{100 * rise:.1f} cm'} over {figures['flights']} flight(s) "
                 f"(goal {100 * goals.apex_height:g} cm)")
    return text


def _step_rows(protocol: Protocol, name: str, goals, trials: list[dict], figures: list[dict],
               seeds: tuple[int, ...]) -> list[Row]:
    """A gait's row over all its episodes (their ``figures`` pooled; met only if none fell and the pooled steps
    are within the tolerance), then one row per planner seed."""
    p = protocol.params
    walking = goals.step_length > 0
    together = pooled_step_figures(figures)
    ok = (_within(together["mean_step_length"], goals.step_length, p.tolerance)
          and _within(together["mean_step_duration"], goals.step_duration, p.tolerance)
          and not any(t["fell"] for t in trials)) if walking else None
    anchor = protocol.anchor("step_accuracy") if walking else ""
    if goals.w_apex > 0:
        # A gait that rewards an apex (the run, the jumps) must also fly, and a jump rise near its apex goal.
        share, rise = together["flight_share"], together["mean_apex_rise"]
        ok = bool(ok) and share is not None and share >= p.flight_share
        anchor = protocol.anchor("flight")
        if goals.apex_height > p.jump_from:
            ok = ok and rise is not None and rise >= p.apex_share * goals.apex_height
            anchor = protocol.anchor("jump")
    rows = [Row(f"{name}: {_falls_text(trials)}, {together['steps']} steps", _steps_text(goals, together),
                anchor, ok)]
    for seed, trial, own in zip(seeds, trials, figures):
        fell = f"fell at {trial['fall_time']:.1f} s" if trial["fell"] else "no fall"
        rows.append(Row(f"  planner seed {seed}: {fell}, {own['steps']} steps", _steps_text(goals, own)))
    return rows


def run_gaits(run: BenchRun) -> BenchOutput:
    """Protocol 1: each gait alone on flat ground, then each transition, once per planner seed; steps after
    ``skip_seconds``. The episodes are chaotic (a last-bit difference in the clock, or another CPU's rounding,
    changes a plan within 0.1 s and the episode's outcome with it), so one seed is one sample."""
    from strider.methods.slip.gait import load_gait

    protocol, p = run.protocol, run.protocol.params
    for gait in {*p.gaits, *(gait for legs in p.transitions for gait, _ in legs)}:
        load_gait(gait)    # an unknown gait fails here, before any episode runs
    cases = {gait: ((gait, p.seconds),) for gait in p.gaits}
    for legs in p.transitions:
        cases[" -> ".join(gait for gait, _ in legs)] = tuple(legs)
    trials = {f"{name} seed {seed}": GaitTrial(name, protocol.character, run.config, legs, seed)
              for name, legs in cases.items() for seed in p.planner_seeds}
    episodes = run.run(trials, task=gait_trial)
    records, rows = [], []
    for name, legs in cases.items():
        mine = [episodes[f"{name} seed {seed}"] for seed in p.planner_seeds]
        if len(legs) == 1:
            figures = [step_figures(t, p.skip_seconds, p.min_flight) for t in mine]
            rows += _step_rows(protocol, name, load_gait(legs[0][0]), mine, figures, p.planner_seeds)
        else:
            figures = [{} for _ in mine]     # a transition's steps mix gaits: no step figures
            held = ", ".join(f"{gait} {seconds:g} s" for gait, seconds in legs)
            rows.append(Row(f"transition {name}", f"{_falls_text(mine)} ({held})", protocol.anchor("transitions"),
                            not any(t["fell"] for t in mine)))
        for seed, trial, own in zip(p.planner_seeds, mine, figures):
            records.append({"case": name, "planner_seed": seed, "legs": [list(leg) for leg in legs], **own,
                            **{k: v for k, v in trial.items() if k not in ("airborne", "double")}})
    falls = sum(r["fell"] for r in records if len(r["legs"]) > 1)
    notes = [(f"Statistics leave out the first {p.skip_seconds:g} s; a flight is at least {p.min_flight:g} s with "
              "no foot down."),
             (f"Each case runs once per planner seed ({', '.join(map(str, p.planner_seeds))}), and a gait's steps "
              "are pooled over its episodes. The episodes are chaotic: a difference in the last bit of the "
              "controller's clock changes a plan within 0.1 s, and with it where and when a walk falls, so one "
              "episode is one sample of the outcome.")]
    return BenchOutput("slip-gaits", run.controller, protocol.as_dict(), records,
                       {"cases": len(cases), "episodes": len(records), "transition_falls": falls}, rows,
                       notes=notes)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}% of steps"


def run_speed(protocol: Protocol, progress: bool = True) -> BenchOutput:
    """Protocol 4: each replanning rule's walk in the protocol's configuration at its evaluation budget (the
    source's), then ``strider_cases`` in strider's default configuration at its own; pycma's floor per plan."""
    from strider.methods.slip.planner import cma_bookkeeping_seconds

    p = protocol.params
    trials, rows = [], []
    runs = [(p.config, p.evaluations, case) for case in p.cases] + [("default", None, case) for case in p.strider_cases]
    for config, evaluations, case in progress_over(runs, "slip-speed walks", unit="walk", enabled=progress):
        every, on_contact, seconds = int(case[0]), bool(case[1]), float(case[2])
        controller = _controller("walk", config, every, on_contact, evaluations)
        trial = episode(protocol.character, controller, seconds)
        rt = trial["sim_seconds"] / trial["wall_seconds"]
        bare = trial["sim_seconds"] / trial["step_wall_seconds"]
        plans = max(trial["plans"], 1)
        evals = trial["evaluations"] / plans
        planning_share = trial["plan_seconds"] / trial["wall_seconds"]
        name = ("contact events only" if every == 0 else
                f"every {every} step{'s' if every > 1 else ''}{' and contact events' if on_contact else ''}")
        trials.append({"config": config, "replan": name, "every": every, "on_contact": on_contact,
                       "realtime_factor": rt, "bare_realtime_factor": bare, "evaluations_per_plan": evals,
                       "planning_share": planning_share,
                       **{k: v for k, v in trial.items() if k not in ("airborne", "double", "touchdowns")}})
        metric = "every_step" if every == 1 else "contact_only" if every == 0 else ""
        planner = controller.params.planner
        who = "" if config == p.config else (f"strider's configuration ({planner.max_evaluations} evaluations, then "
                                              f"{planner.refine_iterations} refining iterations): ")
        rows.append(Row(f"{who}replanning {name}, {trial['sim_seconds']:.1f} s walked"
                        + (f" (fell at {trial['fall_time']:.1f} s)" if trial["fell"] else ""),
                        f"{rt:.3f}x real time (bare mj_step {bare:.0f}x); planning "
                        f"{100 * planning_share:.0f}% of the wall time, "
                        f"{trial['plan_seconds'] / plans:.2f} s per plan of {evals:.0f} evals; "
                        f"QP median {1e3 * trial['qp_median_seconds']:.2f} ms",
                        protocol.anchor(metric) if metric else "",
                        protocol.meets(metric, rt) if metric else None))
    planner = _controller("walk", p.config, evaluations=p.evaluations).params.planner
    generation = cma_bookkeeping_seconds(planner)
    floor = generation * math.ceil(p.evaluations / planner.popsize)
    rows.append(Row("pycma's own ask and tell, per generation of the planner's options (a cost that takes no time)",
                    f"{1e3 * generation:.2f} ms: {floor:.2f} s of every {p.evaluations}-evaluation plan", "", None))
    threads = blas_threads()
    notes = [(f"One process, {threads} BLAS thread{'s' if threads > 1 else ''} (the protocol asks for 1). Bare "
              "speed is simulated time over the wall time spent inside MuJoCo's step in the same run. Rows without "
              f"a prefix run the '{p.config}' configuration at {p.evaluations} evaluations a plan.")]
    return BenchOutput("slip-speed", "slip", protocol.as_dict(), trials,
                       {"cases": len(trials), "cma_generation_seconds": generation}, rows, notes=notes)


@dataclass(frozen=True)
class DodgeTrial:
    """One throw: the seed draws the azimuth; ``sees_ball`` False is the control case of a planner blind to it."""

    character: str
    config: str
    sees_ball: bool
    seed: int
    throw_at: float
    watch_seconds: float
    spread_deg: float


def dodge_trial(trial: DodgeTrial, context=None) -> dict:
    """One throw in a worker: stand, throw, watch; hit, fall or avoided."""
    from strider.characters import load_character
    from strider.runner import Runner, Scenario
    from strider.runner.throws import Throw, Thrower, ball_props
    from strider.sim import CharacterPlacement, Scene

    throw = Throw.seeded(trial.seed, trial.throw_at, trial.spread_deg)
    scene = Scene((CharacterPlacement(load_character(trial.character)),), props=ball_props((throw,)))
    controller = _controller("dodge", trial.config, sees_projectiles=trial.sees_ball)
    thrower = Thrower((throw,))
    result = Runner(Scenario(scene, controller, trial.throw_at + trial.watch_seconds, seed=trial.seed),
                    hooks=(thrower,)).run()
    outcome = thrower.outcomes()[0]
    return {"config": trial.config, "sees_ball": trial.sees_ball, "seed": trial.seed,
            "azimuth_deg": throw.azimuth_deg, "hit": outcome.hit, "hit_bodies": list(outcome.hit_bodies),
            "fell": result.fell, "fall_time": result.fall_time, "avoided": not outcome.hit and not result.fell,
            "moved_m": result.distance_m, "steps": result.steps, "sim_seconds": result.sim_seconds,
            "wall_seconds": result.wall_seconds, "plans": controller.stats.plans,
            "evaluations": controller.stats.evaluations}


def run_dodge(run: BenchRun) -> BenchOutput:
    """Protocol 5: one throw per seed at the standing character; with ``blind``, the same throws at a planner that
    is not told of the ball (run in strider's configuration only)."""
    protocol, p = run.protocol, run.protocol.params
    cases = [True] + ([False] if p.blind and run.config == "default" else [])
    trials = {f"{'sees' if sees else 'blind'} {seed}": DodgeTrial(protocol.character, run.config, sees, seed,
                                                                   p.throw_at, p.watch_seconds, p.spread_deg)
              for sees in cases for seed in range(p.seeds)}
    results = list(run.run(trials, task=dodge_trial).values())
    rows, summary = [], {}
    for sees in cases:
        mine = [t for t in results if t["sees_ball"] == sees]
        avoided = sum(t["avoided"] for t in mine)
        name = run.subject + ("" if sees else ", planner blind to the ball (control)")
        summary[name] = avoided / len(mine)
        misses = ", ".join(f"seed {t['seed']}: {_miss(t)}" for t in mine if not t["avoided"])
        rows.append(Row(f"dodge ({name})", f"{avoided}/{len(mine)} avoided" + (f" ({misses})" if misses else ""),
                        protocol.anchor("avoided") if sees else "",
                        protocol.meets("avoided", avoided / len(mine)) if sees else None))
    notes = [f"Each trial ran {p.throw_at + p.watch_seconds:g} s after the 1 s settle."]
    return BenchOutput("slip-dodge", run.controller, protocol.as_dict(), results, {"avoided_share": summary}, rows,
                       notes=notes)


def _miss(trial: dict) -> str:
    if trial["fell"]:
        return "fell"
    return "hit the " + "/".join(body.split("/")[-1] for body in trial["hit_bodies"])
