"""GBWC one step at a time: the step controllers a task-level policy chooses between (Coros 2010, Ch. 4).

An action is one GBWC step (decision: per-step controllers are GBWC commands, blended as commands): desired
speed V_d, a change of heading and the step period T, from one foot strike to the next. A
:class:`TaskStepper` walks a 3-D character with GBWC, stops at every foot strike and reports the strike's
state (:mod:`strider.methods.tlc.state`), the centre of mass's shift and the heading's turn since the last
strike. Everything is in the stance-left frame: from a right-foot strike the action is mirrored before it is
taken and its outcome mirrored back, so a policy sees one kind of strike. Exploration branches at strikes
(:meth:`snapshot` / :meth:`restore`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider import quat
from strider.errors import UsageError
from strider.methods.tlc.state import StateReader, StrikeStates
from strider.runner.strikes import StrikeEpisode
from strider.runner.throws import Throw, ball_props, launch_ball, park_ball, touching_character


@dataclass(frozen=True)
class StepAction:
    speed: float           # m/s: V_d
    turn: float = 0.0      # rad: heading change commanded at the strike, positive to the left
    period: float = 0.5    # s: T

    def mirrored(self) -> StepAction:
        return StepAction(self.speed, -self.turn, self.period)

    @staticmethod
    def mix(actions: list[StepAction], weights) -> StepAction:
        """The commands of ``actions`` averaged by ``weights`` (which sum to 1)."""
        rows = np.array([[a.speed, a.turn, a.period] for a in actions])
        return StepAction(*(float(x) for x in np.asarray(weights, dtype=float) @ rows))


@dataclass(frozen=True)
class StepperParams:
    walk_in_speed: float = 0.4      # m/s: from standing into a walk, before the first strike a task sees
    walk_in_steps: int = 4
    max_step_seconds: float = 1.5   # a step that has not struck by then has stalled: treated as a fall


@dataclass(frozen=True)
class Strike:
    """A foot strike: the state, where the centre of mass is, the character frame's heading (what GBWC steers)
    and the pelvis's own facing, which lags the frame's through a turn."""

    state: StrikeStates
    stance: str
    com: np.ndarray        # world, m
    heading: float         # rad
    time: float
    facing: float          # rad: the pelvis's yaw


@dataclass(frozen=True)
class StepOutcome:
    """One step: ``strike`` is None after a fall. ``shift`` (m, forward and left) and ``turn`` (rad) are
    measured in the starting strike's frame, stance-left."""

    strike: Strike | None
    shift: np.ndarray
    turn: float
    duration: float
    hit: bool = False      # a thrown ball touched the character during the step

    @property
    def fell(self) -> bool:
        return self.strike is None


def _canonical(values: np.ndarray, stance: str) -> np.ndarray:
    """(forward, left) in the stance-left frame."""
    return values * np.array([1.0, -1.0]) if stance == "right" else values


class TaskStepper(StrikeEpisode):
    """A GBWC walker on flat ground (or ``course``) stopped at foot strikes."""

    def __init__(self, character: str = "bipv3", style: str = "default", seed: int = 0,
                 params: StepperParams | None = None, video: str | None = None, fps: float = 30.0,
                 balls: tuple[Throw, ...] = (), hooks: tuple = ()):
        """``balls``: one ball in the scene per throw (its mass and radius), parked until :meth:`step` throws it;
        ``hooks``: the runner's episode hooks (what a benchmark adds to the walk)."""
        from strider.characters import load_character
        from strider.control.controller import LocomotionCommand
        from strider.methods.gbwc.controller import GBWC
        from strider.methods.gbwc.params import GBWCParams, load_style
        from strider.runner import Runner, Scenario
        from strider.sim import CharacterPlacement, Scene, Terrain

        self.params = params = params or StepperParams()
        spec = load_character(character)
        if spec.root == "planar":
            raise UsageError(f"task-level control walks a 3-D character with GBWC, not the planar {character!r}")
        self.controller = GBWC(LocomotionCommand(speed=params.walk_in_speed),
                               GBWCParams(style=load_style(style)))
        scene = Scene((CharacterPlacement(spec),), terrain=Terrain(), props=ball_props(balls))
        self.runner = Runner(Scenario(scene, self.controller, 1e6, seed=seed), stop_on_fall=True, hooks=hooks)
        self.video = self.runner.record_video(video, fps) if video is not None else None
        self.runner.start()
        self.world, self.character = self.runner.world, self.runner.character
        self.reader = StateReader(self.character)
        self._flying: int | None = None     # the ball thrown and not parked since
        fsm = self.controller.fsm
        if not self.runner.advance_until(lambda: fsm.steps >= params.walk_in_steps and
                                         self.controller.mode == "walking",
                                         params.max_step_seconds * (params.walk_in_steps + 2),
                                         self.controller.control_period):
            raise RuntimeError(f"GBWC fell walking in on {character!r}")
        self.last = self._strike()

    def _strike(self) -> Strike:
        ctrl = self.controller
        heading = ctrl.heading
        return Strike(self.reader.read(ctrl.fsm.stance, heading), ctrl.fsm.stance, self.character.com_position(),
                      heading, self.time, self.runner.facing())

    def step(self, action: StepAction, throw: Throw | None = None, ball: int = 0) -> StepOutcome:
        """Take one step with ``action`` (stance-left frame) until the next foot strike or a fall. With ``throw``,
        ball ``ball`` leaves ``throw.time`` s after the strike this step starts from, if no strike comes first."""
        from strider.control.controller import LocomotionCommand

        ctrl, start = self.controller, self.last
        taken = action.mirrored() if start.stance == "right" else action
        ctrl.command_step(LocomotionCommand(speed=taken.speed, period=taken.period,
                                            heading=quat.wrap_angle(ctrl.target_heading.value + taken.turn)))
        steps = ctrl.fsm.steps
        hit = False

        def struck_now() -> bool:
            nonlocal hit
            if self._flying is not None and not hit:
                hit = bool(touching_character(self.runner, self._flying))
            return ctrl.fsm.steps != steps

        limit, tick = self.params.max_step_seconds, ctrl.control_period
        if throw is not None:
            launch = start.time + throw.time
            if self.runner.advance_until(lambda: struck_now() or self.time >= launch - 1e-9, limit, tick) \
                    and not struck_now():
                launch_ball(self.runner, ball, throw)
                self._flying = ball
        struck = self.runner.advance_until(struck_now, limit - (self.time - start.time), tick)
        duration = self.time - start.time
        end = self._strike() if struck and not ctrl.has_fallen() else None
        if end is None:
            return StepOutcome(None, np.zeros(2), 0.0, duration, hit)
        self.last = end
        c, s = np.cos(start.heading), np.sin(start.heading)
        dx, dy = (end.com - start.com)[:2]
        shift = _canonical(np.array([c * dx + s * dy, -s * dx + c * dy]), start.stance)
        turn = quat.wrap_angle(end.heading - start.heading)
        return StepOutcome(end, shift, -turn if start.stance == "right" else turn, duration, hit)

    def park_ball(self) -> None:
        """Put the thrown ball back out of the way, at rest; steps no longer watch it."""
        if self._flying is not None:
            park_ball(self.runner, self._flying)
            self._flying = None

    def snapshot(self):
        return super().snapshot(), self._flying

    def restore(self, snap) -> None:
        episode, self._flying = snap
        super().restore(episode)
