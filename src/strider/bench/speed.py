"""``strider bench speed``: how fast a controller simulates, against bare MuJoCo stepping, and how it scales.

* **Real-time factor**: simulated seconds per wall second of headless walking
  (the shared Runner, no recording), in this process, on one core.
* **Bare stepping**: the same model stepped by MuJoCo alone for the same number
  of physics steps, in the same process right after; the **overhead ratio** is
  (walking wall time - bare wall time) / bare wall time. Both are also timed in
  thread CPU time, which leaves out the time spent waiting for a core that other
  work on a shared machine took.
* **Profile**: a shorter walk under ``cProfile``, its time grouped by module, so
  the breakdown names components (MuJoCo's C calls, each strider module,
  NumPy). Profiling slows Python more than C, so only the shares are reported.
* **Scaling**: the 96-trial push grid (shortened) on 1 and then 2 worker
  processes, beside the speedup that bare stepping gets from 2 processes,
  which is what this machine can give; the Ray backend runs the same grid and
  its per-trial results are compared with the process pool's.

Wall-clock figures on a shared machine are noisy; every ratio here is measured
within one run.
"""

from __future__ import annotations

import cProfile
import dataclasses
import pstats
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from strider.bench import plots, push
from strider.bench.execution import BenchRun
from strider.bench.output import BenchOutput, Row, without_timings
from strider.bench.protocol import Protocol, load_protocol
from strider.bench.trial import BenchContext, run_trial
from strider.errors import UsageError
from strider.parallel import Executor
from strider.runner.hooks import EpisodeHook

PROFILE_TOP = 12   # components listed in the breakdown
MEANINGFUL_SPEEDUP = 1.2
"""Below this bare-stepping speedup from 2 processes, the machine had no second core to give during the run
(other jobs used it), and the share of it the push grid reached says nothing about the executor."""


def scene_for(protocol: Protocol, context: BenchContext):
    from strider.sim import CharacterPlacement, Scene

    return Scene((CharacterPlacement(context.character(protocol.character)),))


def walking_run(protocol: Protocol, controller: str, seconds: float, context: BenchContext,
                config: str = "default"):
    from strider.control.controller import LocomotionCommand
    from strider.methods.registry import locomotion_scenario
    from strider.runner import Runner

    p = protocol.params
    return Runner(locomotion_scenario(controller, LocomotionCommand(speed=p.speed, period=p.period),
                                      context.character(protocol.character), style=protocol.style,
                                      seconds=seconds, config=config))


def bare_stepping_seconds(scene, sim_seconds: float) -> tuple[float, float]:
    """Wall and thread CPU time for MuJoCo alone to step ``scene``'s model through ``sim_seconds``."""
    from strider.sim import World

    world = World(scene)
    steps = round(sim_seconds / world.timestep)
    cpu, start = time.thread_time(), time.perf_counter()
    world.step(steps)
    return time.perf_counter() - start, time.thread_time() - cpu


class TickStates(EpisodeHook):
    """Every control tick's physics state once the controller has acted, kept to be stepped again bare."""

    def __init__(self):
        self.ticks: list[tuple[float, object]] = []
        self.world = None

    def begin(self, runner) -> None:
        self.world = runner.world

    def after_control(self, runner, t: float) -> None:
        self.ticks.append((runner.time, self.world.snapshot()))

    def replay_seconds(self, end: float | None = None) -> float:
        """Wall time for MuJoCo alone to step each kept tick through to the next, each tick's state restored
        first; only the stepping is timed. The last tick runs to ``end`` (episode time), by default as long as
        the tick before it."""
        if len(self.ticks) < 2 and end is None:
            raise UsageError("replaying an episode needs two control ticks or its end time")
        times = [t for t, _ in self.ticks]
        ends = times[1:] + [times[-1] + (times[-1] - times[-2]) if end is None else end]
        world, wall = self.world, 0.0
        for (start, state), stop in zip(self.ticks, ends):
            world.restore(state)
            steps = round((stop - start) / world.timestep)
            clock = time.perf_counter()
            world.step_bare(steps)
            wall += time.perf_counter() - clock
        return wall


def fastest_timings(repeats: int, timings: Callable[[], tuple[float, ...]]) -> tuple[float, ...]:
    """Each figure of ``timings()`` (wall times), the fastest of ``repeats`` calls made one after the other: on a
    shared machine other work only ever adds time, and the first call also pays for loading code that the
    others find loaded."""
    return tuple(min(column) for column in zip(*(timings() for _ in range(repeats))))


def replayed_stepping_seconds(scenario) -> tuple[float, float]:
    """Wall time for MuJoCo alone to step the motion of ``scenario``'s episode, and the episode's simulated time.

    The episode runs once with the physics state kept at every control tick, after the controller acted; then
    each tick's state is restored and stepped by ``mj_step`` alone through the tick. This is bare stepping of
    the same model through the same contacts and solver work as the walk, so the walk's time over it is what
    the controller and the runner cost. Bare stepping from the standing pose (:func:`bare_stepping_seconds`)
    times a character that falls and then lies still, whose physics costs less or more than walking's.
    """
    from strider.runner import Runner

    ticks = TickStates()
    runner = Runner(scenario, hooks=(ticks,))
    result = runner.run()
    return ticks.replay_seconds(result.sim_seconds), result.sim_seconds


def bare_stepping_task(task: tuple[str, float], context: BenchContext) -> float:
    """Executor task: bare stepping of a character's model; returns its wall time (s)."""
    from strider.sim import CharacterPlacement, Scene

    character, seconds = task
    return bare_stepping_seconds(Scene((CharacterPlacement(context.character(character)),)), seconds)[0]


def _module_of(filename: str, function: str) -> str:
    if filename == "~":
        for lib in ("mujoco", "numpy"):
            if lib in function:
                return f"{lib} (C calls)"
        return "Python built-ins"
    parts = Path(filename).parts
    if "strider" in parts:
        i = len(parts) - 1 - parts[::-1].index("strider")
        return ".".join(parts[i:])[:-3]
    for lib in ("numpy", "scipy", "mujoco"):
        if lib in parts:
            return f"{lib} (Python)"
    return "other Python"


def profile_breakdown(protocol: Protocol, controller: str, seconds: float, context: BenchContext,
                      config: str = "default") -> dict:
    runner = walking_run(protocol, controller, seconds, context, config)
    profiler = cProfile.Profile()
    profiler.enable()
    runner.run()
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    by_module: dict[str, float] = defaultdict(float)
    for (filename, _, function), (_, _, tottime, _, _) in stats.items():
        by_module[_module_of(filename, function)] += tottime
    total = sum(by_module.values())
    ordered = sorted(by_module.items(), key=lambda kv: -kv[1])
    top = {k: v / total for k, v in ordered[:PROFILE_TOP]}
    top["everything else"] = sum(v for _, v in ordered[PROFILE_TOP:]) / total
    cumulative = {f[2]: row[3] for f, row in stats.items()}
    return {"shares": top, "profiled_seconds": total,
            "control_share": cumulative.get("control", 0.0) / total,
            "world_step_share": cumulative.get("step", 0.0) / total}


def _timed_map(executor: Executor, fn, tasks: list) -> tuple[float, list]:
    start = time.perf_counter()
    results = sorted(executor.map(fn, tasks))
    return time.perf_counter() - start, [r for _, r in results]


def scaling(run: BenchRun) -> tuple[dict, list[dict]]:
    protocol, p = run.protocol, run.protocol.params
    # The push grid of issue 3 (push protocol: 600 N, 12 directions x 8 phases), shortened.
    shipped = load_protocol("push")
    grid_protocol = dataclasses.replace(shipped, character=protocol.character, style=protocol.style,
                                        seed=protocol.seed,
                                        params=dataclasses.replace(shipped.params, directions=p.scaling_directions,
                                                                   phases=p.scaling_phases))
    grid = push.grid_trials(grid_protocol, run.controller, grid_protocol.params.force, config=run.config)
    trials = [dataclasses.replace(t, settle_seconds=p.scaling_settle_seconds,
                                  seconds=t.pushes[0].time + t.pushes[0].duration + p.scaling_observe_seconds)
              for t in grid.values()]
    bare = [(protocol.character, p.scaling_bare_seconds)] * p.scaling_bare_tasks
    out: dict = {"grid_trials": len(trials)}
    per_backend: dict[str, list] = {}
    # Both pools are started and warmed first, and the measurements alternate between them (bare stepping
    # before and after the grid), so that a change in the machine's background load hits both alike.
    with Executor("processes", workers=1, setup=BenchContext) as one, \
            Executor("processes", workers=2, setup=BenchContext) as two:
        for ex, n in ((one, 1), (two, 2)):
            list(ex.map(bare_stepping_task, [(protocol.character, 0.01)] * n))
        bare_times = {1: 0.0, 2: 0.0}
        for ex, n in ((one, 1), (two, 2)):
            bare_times[n] += _timed_map(ex, bare_stepping_task, bare)[0]
        for ex, label in ((one, "processes-1"), (two, "processes-2")):
            out[f"grid_{label}_seconds"], per_backend[label] = _timed_map(ex, run_trial, trials)
        for ex, n in ((two, 2), (one, 1)):
            bare_times[n] += _timed_map(ex, bare_stepping_task, bare)[0]
    out["bare_processes-1_seconds"], out["bare_processes-2_seconds"] = bare_times[1], bare_times[2]
    out["bare_speedup_2"] = bare_times[1] / bare_times[2]
    out["grid_speedup_2"] = out["grid_processes-1_seconds"] / out["grid_processes-2_seconds"]
    out["scaling_efficiency"] = out["grid_speedup_2"] / out["bare_speedup_2"]
    out["processes_1_vs_2_identical"] = without_timings(per_backend["processes-1"]) == without_timings(
        per_backend["processes-2"])
    if not p.scaling_ray:
        out["ray_skipped"] = "scaling_ray is false in the protocol"
        return out, per_backend["processes-2"]
    try:
        with Executor("ray", workers=2, setup=BenchContext) as ex:
            list(ex.map(bare_stepping_task, [(protocol.character, 0.01)] * 2))
            out["grid_ray-2_seconds"], per_backend["ray-2"] = _timed_map(ex, run_trial, trials)
        out["ray_identical_to_processes"] = without_timings(per_backend["ray-2"]) == without_timings(
            per_backend["processes-2"])
    except Exception as exc:  # noqa: BLE001 - Ray is optional: the bench reports why it was skipped
        out["ray_skipped"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return out, per_backend["processes-2"]


def run(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    context = BenchContext()
    walks = []     # the same deterministic walk each time

    def timings() -> tuple[float, float, float, float, float]:
        runner = walking_run(protocol, run.controller, p.seconds, context, run.config)
        cpu = time.thread_time()
        walks.append(runner.run())
        walking_cpu = time.thread_time() - cpu
        bare, bare_cpu = bare_stepping_seconds(scene_for(protocol, context), walks[-1].sim_seconds)
        replay, _ = replayed_stepping_seconds(walking_run(protocol, run.controller, p.seconds, context,
                                                          run.config).scenario)
        return walks[-1].wall_seconds, walking_cpu, bare, bare_cpu, replay

    wall, walking_cpu, bare, bare_cpu, replay = fastest_timings(p.timing_repeats, timings)
    walking = dataclasses.replace(walks[-1], wall_seconds=wall)
    overhead, cpu_overhead = (walking.wall_seconds - bare) / bare, (walking_cpu - bare_cpu) / bare_cpu
    replay_overhead = (walking.wall_seconds - replay) / replay
    prof = profile_breakdown(protocol, run.controller, p.profile_seconds, context, run.config)
    summary = {"sim_seconds": walking.sim_seconds, "timings": {"walking_wall_seconds": walking.wall_seconds,
                                                               "bare_wall_seconds": bare,
                                                               "replay_wall_seconds": replay,
                                                               "walking_cpu_seconds": walking_cpu,
                                                               "bare_cpu_seconds": bare_cpu,
                                                               "repeats": p.timing_repeats},
               "realtime_factor": walking.realtime_factor, "bare_realtime_factor": walking.sim_seconds / bare,
               "overhead_ratio": overhead, "replay_overhead_ratio": replay_overhead,
               "cpu_realtime_factor": walking.sim_seconds / walking_cpu,
               "bare_cpu_realtime_factor": walking.sim_seconds / bare_cpu, "cpu_overhead_ratio": cpu_overhead,
               "fell": walking.fell, "profile": prof}
    rows = [Row(f"real-time factor, {p.seconds:g} s walking at {p.speed:g} m/s, one core",
                f"{walking.realtime_factor:.1f}x", protocol.anchor("realtime_factor"),
                protocol.meets("realtime_factor", walking.realtime_factor)),
            Row("bare MuJoCo stepping of the same model, same run", f"{walking.sim_seconds / bare:.1f}x"),
            Row("controller + runner overhead / bare stepping", f"{100 * overhead:.0f}%"),
            Row("controller + runner overhead / bare stepping of the same walk (its ticks replayed)",
                f"{100 * replay_overhead:.0f}%"),
            Row("  the same three in thread CPU time (waiting for a core left out)",
                f"{summary['cpu_realtime_factor']:.1f}x, {summary['bare_cpu_realtime_factor']:.1f}x, "
                f"{100 * cpu_overhead:.0f}%"),
            Row("profile: controller's control() (cumulative)", f"{100 * prof['control_share']:.0f}%"),
            Row("profile: World.step (cumulative)", f"{100 * prof['world_step_share']:.0f}%")]
    rows += [Row(f"  profile: {k}", f"{100 * v:.1f}%") for k, v in prof["shares"].items()]
    figs = {"profile": plots.shares(prof["shares"], f"where the time goes ({run.subject}, cProfile, by module)")}
    trials: list[dict] = []
    notes = [(f"The walk, MuJoCo alone stepping its ticks again, and bare stepping from standing were each timed "
              f"{p.timing_repeats} times, one after the other; each figure is the fastest of its {p.timing_repeats}."),
             "The profile's shares come from a cProfile run, which slows Python code more than MuJoCo's C code."]
    if p.scaling:
        sc, trials = scaling(run)
        summary["timings"]["scaling"] = sc
        summary["scaling_identical"] = {k: sc[k] for k in ("processes_1_vs_2_identical", "ray_identical_to_processes")
                                        if k in sc}
        meaningful = sc["bare_speedup_2"] >= MEANINGFUL_SPEEDUP
        if not meaningful:
            notes.append(f"Bare stepping gained only {sc['bare_speedup_2']:.2f}x from a second process: the machine "
                         "had no free second core during this run, so the scaling share is not judged.")
        rows += [Row("bare stepping speedup, 1 -> 2 processes (the machine's limit)", f"{sc['bare_speedup_2']:.2f}x"),
                 Row(f"push grid speedup, 1 -> 2 worker processes ({sc['grid_trials']} trials)",
                     f"{sc['grid_speedup_2']:.2f}x"),
                 Row("  as a share of bare stepping's speedup", f"{100 * sc['scaling_efficiency']:.0f}%",
                     protocol.anchor("scaling_efficiency"),
                     protocol.meets("scaling_efficiency", sc["scaling_efficiency"]) if meaningful else None),
                 Row("  per-trial results identical on 1 and 2 workers", str(sc["processes_1_vs_2_identical"]), "",
                     sc["processes_1_vs_2_identical"])]
        if "ray_identical_to_processes" in sc:
            rows.append(Row("  Ray backend (2 workers): per-trial results identical",
                            f"{sc['ray_identical_to_processes']} ({sc['grid_ray-2_seconds']:.1f} s vs "
                            f"{sc['grid_processes-2_seconds']:.1f} s on processes)", "",
                            sc["ray_identical_to_processes"]))
        else:
            notes.append(f"Ray comparison skipped: {sc['ray_skipped']}")
    return BenchOutput("speed", run.controller, protocol.as_dict(), trials, summary, rows, notes=notes, plots=figs)
