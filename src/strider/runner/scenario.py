"""Scenarios and the runner: a world, a character, a controller and a perturbation schedule, run for T seconds.

The runner is the one loop every command and benchmark shares. It steps the
physics, calls the controller every ``control_period``, applies scheduled
pushes and command changes, records metrics (and frames or poses when asked),
and returns a :class:`Result`.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from strider import quat
from strider.control.controller import Controller
from strider.control.falls import FallCriteria, FallJudge
from strider.control.snapshot import controller_kind, controller_state, restore_controller_state
from strider.errors import ControlDiverged, UsageError
from strider.runner.frame_clock import FrameClock
from strider.runner.hooks import EpisodeHook, TraceRecorder
from strider.runner.perturbation import PUSHED_BODIES, Push, PushOutcome
from strider.runner.progress import PathProgress
from strider.sim import Scene, State, World


@dataclass(frozen=True)
class CommandChange:
    """At time ``t``, change command fields (e.g. ``{"speed": 1.0}``): the runner hands the controller its command
    with these fields replaced (the plan's command schedule)."""

    t: float
    changes: dict

    def applied_to(self, command):
        if command is None:
            raise UsageError(f"a plan changes the command at {self.t:g} s, but the controller takes no command")
        return command.changed(self.changes)


@dataclass
class Scenario:
    scene: Scene
    controller: Controller
    seconds: float = 10.0
    pushes: tuple[Push, ...] = ()
    script: tuple[CommandChange, ...] = ()
    character: str | None = None
    settle_seconds: float = 0.0  # run before t = 0 is counted (not recorded, no pushes)
    seed: int = 0  # for random sources; stored in the Result so a run can be repeated exactly
    start: State | str | None = None  # handed to the controller's reset: None, a physics state, or AS_IS

    def __post_init__(self) -> None:
        if not (self.seconds > 0 and math.isfinite(self.seconds)):
            raise UsageError(f"--seconds must be a positive number, got {self.seconds}")


@dataclass
class Result:
    sim_seconds: float
    wall_seconds: float
    distance_m: float
    mean_speed_mps: float      # along the walked path (the facing at each tick), over the whole run
    lateral_drift_m: float     # net sideways of the walked path (the facing at each tick), m
    heading_error_deg: float
    fell: bool
    falls: int
    fall_time: float | None
    steps: int
    pushes: list[PushOutcome]
    nan: bool = False
    # The engine blew up (a non-finite state, or MuJoCo's own bad-state warning, after which it resets the
    # state): the run ends there and counts as a fall. When, and the warning in the engine's words.
    unstable: bool = False
    unstable_time: float | None = None
    unstable_warning: str | None = None
    steady_speed_mps: float | None = None   # the same over the run's last half; None if it ended before
    frames: list[np.ndarray] = field(default_factory=list, repr=False)
    poses: list[np.ndarray] = field(default_factory=list, repr=False)
    trace: dict = field(default_factory=dict, repr=False)
    final_state: np.ndarray | None = field(default=None, repr=False)
    seed: int = 0
    command: dict = field(default_factory=dict)  # the arguments that asked for this run, for reports
    throws: list = field(default_factory=list)   # ThrowOutcome per ball thrown (strider.runner.throws)
    controller: dict = field(default_factory=dict)   # the controller's own report at the end (its ``info()``)

    @property
    def realtime_factor(self) -> float:
        return self.sim_seconds / self.wall_seconds if self.wall_seconds > 0 else float("inf")

    def as_dict(self) -> dict:
        return {
            "sim_seconds": self.sim_seconds, "wall_seconds": self.wall_seconds,
            "realtime_factor": self.realtime_factor, "distance_m": self.distance_m,
            "mean_speed_mps": self.mean_speed_mps, "steady_speed_mps": self.steady_speed_mps,
            "lateral_drift_m": self.lateral_drift_m,
            "heading_error_deg": self.heading_error_deg, "fell": self.fell, "falls": self.falls,
            "fall_time": self.fall_time, "steps": self.steps, "nan": self.nan, "unstable": self.unstable,
            "unstable_time": self.unstable_time, "unstable_warning": self.unstable_warning,
            "pushes": [p.as_dict() for p in self.pushes],
            "throws": [t.as_dict() for t in self.throws],
            "seed": self.seed, "command": dict(self.command), "controller": dict(self.controller),
        }


FrameSink = Callable[[World, float], None]


@dataclass(frozen=True)
class EpisodeSnapshot:
    """A whole episode at one instant: physics (with the solver's warm start, applied forces and servo
    settings), the controller's own state, pushes still to come, the plan's position, fall bookkeeping and
    the episode's RNG. Restoring it and giving the same commands continues bit for bit."""

    physics: State
    controller_kind: str
    controller: bytes
    steps: int
    t0: float
    start_com: np.ndarray      # where the episode's figures (distance, speed, steps) are measured from
    start_heading: float
    steps_start: int
    pending_pushes: tuple[Push, ...]
    script_index: int
    fall_time: float | None
    falls: int
    stopped: bool
    rng: dict
    progress: PathProgress
    unstable: tuple[float, str] | None = None


class Runner:
    """Runs a :class:`Scenario`. ``frame_rate`` > 0 calls ``on_frame`` that often (for video or BVH).

    ``run()`` does the whole episode. The same loop can be driven piece by piece: ``start()``, then
    ``advance(seconds)`` as often as wanted, then ``finish()`` for the :class:`Result`. Between two
    pieces, ``snapshot()`` captures the whole episode (physics, controller, pending pushes and plan,
    fall bookkeeping, RNG) and ``restore()`` puts it back, here or in a runner built from the same
    scenario in another process, and the episode continues bit for bit.
    """

    def __init__(self, scenario: Scenario, frame_rate: float = 0.0, on_frame: FrameSink | None = None,
                 record_trace: bool = False, stop_on_fall: bool = False, hooks: tuple[EpisodeHook, ...] = (),
                 fall_judge: FallCriteria | None = None, world: World | None = None):
        """``hooks`` are called at fixed points of every control tick (:mod:`strider.runner.hooks`).
        ``fall_judge`` judges falls by the shared definition (:mod:`strider.control.falls`) instead of asking the
        controller, whatever it believes. ``world`` reuses a world built from this scenario's scene (a worker
        keeps one), as it stands; by default a fresh one is built."""
        self.scenario = scenario
        self.frame_rate = frame_rate
        self.on_frame = on_frame
        self.stop_on_fall = stop_on_fall
        self._recorder = TraceRecorder() if record_trace else None
        self.hooks = tuple(hooks) + ((self._recorder,) if self._recorder is not None else ())
        self.world = World(scenario.scene) if world is None else world
        self.character = self.world.character(scenario.character)
        scenario.controller.reset(self.world, self.character, start=scenario.start)
        # Made after the reset, so it measures the standing height in the controller's start pose.
        self._judge = FallJudge(self.world, self.character, fall_judge) if fall_judge is not None else None
        self.rng = np.random.default_rng(scenario.seed)
        self._started = False

    def run(self) -> Result:
        self.start()
        self.advance(self.scenario.seconds)
        return self.finish()

    # --- the episode, piece by piece -----------------------------------------------------------
    def start(self, settled: EpisodeSnapshot | None = None) -> None:
        """Settle (if the scenario asks) and start the clock; the episode's time 0 is now.

        ``settled`` is a :meth:`snapshot` taken right after another runner's ``start()`` whose settling was the
        same (controller, configuration, command, character, ground, settle time): its physics and controller
        state replace the settling, bit for bit, while the episode's own pushes and plan are kept. Sweeps that
        branch many episodes from one settled walk pay for the settling once.
        """
        sc, world = self.scenario, self.world
        self._prepare()
        ctrl, per_control = sc.controller, self._per_control
        if settled is not None:
            if settled.controller_kind != controller_kind(ctrl):
                raise UsageError(f"cannot start a {controller_kind(ctrl)} episode from a settled "
                                 f"{settled.controller_kind} one")
            world.restore(settled.physics)
            restore_controller_state(ctrl, settled.controller)
            self._begin()
            return
        own_settle = getattr(ctrl, "settle_seconds", 0.0)
        if own_settle > 0:
            # The controller's start pose comes to rest first (the contract's optional ``settle``).
            self._advance_settle(round(own_settle / ctrl.control_period) * per_control, per_control, ctrl.settle)
        if sc.settle_seconds > 0:
            self._advance_settle(round(sc.settle_seconds / world.timestep), per_control, ctrl.control)
        self._begin()

    def _prepare(self) -> None:
        """What the loop needs that depends only on the scenario."""
        sc, world = self.scenario, self.world
        dt = world.timestep
        self._per_control = max(1, round(sc.controller.control_period / dt))
        self._wall0 = time.perf_counter()
        roles = self.character.spec.roles
        self._pushed = {role: self.character.body(getattr(roles, role)) for role in PUSHED_BODIES
                        if getattr(roles, role)}
        missing = sorted({p.body for p in self.scenario.pushes} - set(self._pushed))
        if missing:
            raise UsageError(f"character {self.character.spec.name!r} has no {missing[0]} to push")
        self._script = sorted(sc.script, key=lambda c: c.t)
        self._total = round(sc.seconds / dt)
        self._frames = FrameClock(self.frame_rate, dt) if self.frame_rate > 0 else None

    def _begin(self) -> None:
        """Time 0 of the episode: the state the result is measured from, and fresh bookkeeping."""
        sc, world = self.scenario, self.world
        self._t0 = world.time
        self._start_com = self.character.com_position()
        self._start_heading = self.facing()
        self._progress = PathProgress.begin(self._start_com, sc.seconds)
        self._pending_pushes = sorted(sc.pushes, key=lambda p: p.time)
        self._fall_time = None
        self._falls = 0
        self._steps_start = self._steps()
        self._n = 0
        self._script_i = 0
        self._stopped = False
        self._unstable: tuple[float, str] | None = None
        self._started = True
        for hook in self.hooks:
            hook.begin(self)

    def stop(self) -> None:
        """End the episode at the end of this control tick (for hooks)."""
        self._stopped = True

    def _fallen(self) -> bool:
        return self._judge() if self._judge is not None else self.scenario.controller.has_fallen()

    @property
    def time(self) -> float:
        """Seconds since the episode's start."""
        return self._n * self.world.timestep if self._started else 0.0

    @property
    def fall_time(self) -> float | None:
        """Seconds into the episode when the controller first reported a fall, or None."""
        return self._fall_time if self._started else None

    @property
    def unstable(self) -> tuple[float, str] | None:
        """When the engine blew up in this episode and MuJoCo's words for it, or None (the run stopped there)."""
        return self._unstable if self._started else None

    @property
    def done(self) -> bool:
        return self._started and (self._stopped or self._n >= self._total)

    def advance(self, seconds: float) -> None:
        """Run the episode on by ``seconds`` (or to its end, or until it stops on a fall or blows up)."""
        if not self._started:
            self.start()
        self._advance_to(min(self._total, self._n + round(seconds / self.world.timestep)))

    def record_video(self, path: str, fps: float):
        """Write this episode's frames to an MP4 at ``path`` from now on; returns the recorder (close it to
        finish the file)."""
        from strider.sim.render import VideoRecorder

        recorder = VideoRecorder(self.world, path, fps)
        self.frame_rate, self.on_frame = fps, recorder
        return recorder

    def advance_until(self, reached: Callable[[], bool], max_seconds: float, tick: float) -> bool:
        """Run on ``tick`` seconds at a time until ``reached()``; False if the episode fell, ended or took
        longer than ``max_seconds`` first (a step controller's "to the next foot strike")."""
        start = self.time
        while not reached():
            self.advance(tick)
            if self.fall_time is not None or self.done or self.time - start > max_seconds:
                return False
        return True

    def _advance_to(self, end: int) -> None:
        world, ctrl, dt = self.world, self.scenario.controller, self.world.timestep
        per_control, frames, t0 = self._per_control, self._frames, self._t0
        script, pending, hooks = self._script, self._pending_pushes, self.hooks
        while self._n < end and not self._stopped:
            n = self._n
            while self._script_i < len(script) and script[self._script_i].t <= n * dt + 1e-9:
                ctrl.set_command(script[self._script_i].applied_to(ctrl.command))
                self._script_i += 1
            if n % per_control == 0:
                # Push directions are relative to where the character faces when the push comes.
                while pending and pending[0].time < (n + per_control) * dt - 1e-9:
                    push = pending.pop(0)
                    world.apply_force(self._pushed[push.body], push.force_vector(self.facing()), duration=push.duration,
                                      start=t0 + push.time)
                t = world.time - t0
                self._progress.update(self.character.com_position(), self.facing(), t)
                for hook in hooks:
                    hook.before_control(self, t)
                if self._stopped:
                    break
                try:
                    ctrl.control(t)
                except ControlDiverged as exc:
                    exc.state, exc.time = world.full_physics(), t
                    raise
                if self._fall_time is None and self._fallen():
                    self._fall_time = t
                    self._falls += 1
                    if self.stop_on_fall:
                        self._stopped = True
                        break
                for hook in hooks:
                    hook.after_control(self, t)
            if frames is not None and self.on_frame is not None and frames.is_frame(n):
                self.on_frame(world, world.time - t0)
            # Chunk boundaries: control ticks, frames, and where this piece ends.
            chunk = per_control - (n % per_control)
            if frames is not None:
                chunk = min(chunk, frames.next_after(n) - n)
            chunk = min(chunk, end - n)
            world.step(chunk)
            self._n = n + chunk
            # Every state World.step leaves has passed the engine's checks, which warn on a NaN, infinite or huge
            # qpos, qvel, acceleration or ctrl (and reset the state, or leave the controls out): the engine's verdict
            # covers a non-finite state.
            problem = world.instability()
            if problem is not None:
                self._unstable = (self._n * dt, problem)
                self._stopped = True

    def finish(self) -> Result:
        wall = time.perf_counter() - self._wall0
        for hook in self.hooks:
            hook.end(self)
        trace = self._recorder.arrays() if self._recorder is not None else {}
        return self._result(self._t0, self._start_com, self._start_heading, wall, self._fall_time, self._falls,
                            self._steps_start, trace)

    # --- branching ------------------------------------------------------------------------------
    def snapshot(self) -> EpisodeSnapshot:
        """The whole episode now, immutable and picklable (see :class:`EpisodeSnapshot`)."""
        if not self._started:
            self.start()
        ctrl = self.scenario.controller
        return EpisodeSnapshot(
            physics=self.world.snapshot(), controller_kind=controller_kind(ctrl),
            controller=controller_state(ctrl), steps=self._n, t0=self._t0, start_com=self._start_com.copy(),
            start_heading=self._start_heading, steps_start=self._steps_start,
            pending_pushes=tuple(self._pending_pushes), script_index=self._script_i, fall_time=self._fall_time,
            falls=self._falls, stopped=self._stopped, rng=self.rng.bit_generator.state,
            progress=copy.deepcopy(self._progress), unstable=self._unstable)

    def restore(self, snap: EpisodeSnapshot) -> None:
        """Put the episode back where ``snap`` was taken (this runner's scenario must be the snapshot's)."""
        ctrl = self.scenario.controller
        if snap.controller_kind != controller_kind(ctrl):
            raise UsageError(f"cannot restore a snapshot of a {snap.controller_kind} controller into a "
                             f"{controller_kind(ctrl)} one")
        self.world.restore(snap.physics)
        restore_controller_state(ctrl, snap.controller)
        if not self._started:
            self._prepare()   # no settling: the snapshot's state replaces it
            self._started = True
        self._n, self._t0 = snap.steps, snap.t0
        self._start_com, self._start_heading, self._steps_start = (snap.start_com.copy(), snap.start_heading,
                                                                   snap.steps_start)
        self._pending_pushes = list(snap.pending_pushes)
        self._script_i, self._fall_time, self._falls, self._stopped = (snap.script_index, snap.fall_time,
                                                                      snap.falls, snap.stopped)
        self.rng.bit_generator.state = snap.rng
        self._progress = copy.deepcopy(snap.progress)
        self._unstable = snap.unstable

    def facing(self) -> float:
        """The character's facing now: its root's yaw, rad."""
        return quat.yaw(self.character.body_quat_floats(self.character.spec.roles.root))

    def _advance_settle(self, nsteps: int, per_control: int, act: Callable[[float], None]) -> None:
        world = self.world
        n = 0
        while n < nsteps:
            act(world.time)
            k = min(per_control, nsteps - n)
            world.step(k)
            n += k

    def _steps(self) -> int:
        info = self.scenario.controller.info()
        return int(info.get("steps", 0))

    def _result(self, t0, start_com, start_heading, wall, fall_time, falls, steps_start, trace) -> Result:
        world, ch, ctrl = self.world, self.character, self.scenario.controller
        unstable = self.unstable
        if unstable is None and not world.is_finite():
            unstable = (world.time - t0, "non-finite state")
        # MuJoCo's reset after a bad-state warning also resets its clock: the episode's own count says when.
        sim = world.time - t0 if unstable is None else unstable[0]
        if unstable is not None and fall_time is None:
            fall_time, falls = unstable[0], falls + 1
        end_com = ch.com_position() if unstable is None else start_com
        disp = end_com - start_com
        final_heading = self.facing() if unstable is None else start_heading
        progress = copy.deepcopy(self._progress)
        if unstable is None:
            progress.update(end_com, final_heading, sim)
        report = _plain(ctrl.info())
        target_heading = report.get("target_heading", start_heading)
        heading_err = math.degrees(abs(quat.wrap_angle(final_heading - target_heading)))
        pushes = []
        ordered = sorted(self.scenario.pushes, key=lambda p: p.time)
        for i, push in enumerate(ordered):
            # A push is survived unless the character fell (or the engine blew up) before the next push.
            next_time = ordered[i + 1].time if i + 1 < len(ordered) else math.inf
            survived = fall_time is None or fall_time >= next_time
            pushes.append(PushOutcome(push, survived))
        return Result(
            sim_seconds=sim, wall_seconds=wall,
            distance_m=float(np.linalg.norm(disp[:2])),
            mean_speed_mps=progress.mean_speed(sim), steady_speed_mps=progress.steady_speed(sim),
            lateral_drift_m=abs(progress.sideways),
            heading_error_deg=heading_err, fell=fall_time is not None, falls=falls,
            fall_time=fall_time, steps=int(report.get("steps", 0)) - steps_start, pushes=pushes,
            nan=not world.is_finite(),
            unstable=unstable is not None, unstable_time=unstable[0] if unstable is not None else None,
            unstable_warning=unstable[1] if unstable is not None else None, trace=trace,
            final_state=world.state_vector(), seed=self.scenario.seed, controller=report)


def _plain(info: dict) -> dict:
    """A controller's report with NumPy scalars as Python numbers, so that a result is plain JSON."""
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in info.items()}
