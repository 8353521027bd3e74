"""One step at a time: a SIMBICON walker stepped from foot strike to foot strike, with branching.

A :class:`StepRunner` walks a planar or 3-D character along +x on a course
with SIMBICON and stops at every foot strike. At a strike it reports where the
new stance heel landed (its x, and the foot's lateral place) and the reduced
state of the step-to-step model (seed 000, Sec. 3.4): ŝ = (d, v, torso pitch,
stance hip, swing hip), with d and v the centre of mass's position and velocity
along the walking direction relative to the stance ankle. A 3-D character's
state is "taken in a sagittal projection" (Sec. 3.4): in the SIMBICON heading
frame, the torso's forward lean and each thigh's forward pitch relative to the
pelvis. Offline synthesis branches the episode at strikes (:meth:`snapshot` /
:meth:`restore`) to try actions; the planner uses the strikes to plan the next
step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider.control.frames import CharacterFrame
from strider.errors import UsageError
from strider.methods.cw.actions import ActionSpace, action_space
from strider.methods.simbicon.gait import Gait, body_of, load_gait
from strider.runner.strikes import StrikeEpisode

STATE_NAMES = ("d", "v", "torso", "stance_hip", "swing_hip")
MAX_STEP_SECONDS = 1.5      # a step that has not struck by then has stalled: treated as a fall


@dataclass(frozen=True)
class Strike:
    """What a foot strike tells the planner."""

    time: float
    heel: float                # m: x of the new stance foot's heel
    state: np.ndarray          # the reduced state (STATE_NAMES)
    stance: str
    lateral: float = 0.0       # m: y of the new stance foot's sole centre (0 for a planar walker)


@dataclass(frozen=True)
class StepOutcome:
    fell: bool
    strike: Strike | None      # None after a fall


def check_walker(spec) -> None:
    """Refuse, before anything runs, a character CW cannot walk: one SIMBICON cannot drive, or whose feet have no
    box soles to measure a heel on."""
    from strider.methods.registry import CONTROLLERS

    CONTROLLERS["simbicon"].check_character("simbicon", spec)
    for leg in spec.roles.legs.values():
        if not any(g.kind == "box" for g in spec.body(leg.foot).geoms):
            raise UsageError(f"CW measures where a heel lands on a box foot; character {spec.name!r}'s "
                             f"{leg.foot!r} has none")


def _lean(rotation: np.ndarray, frame: CharacterFrame) -> float:
    """How far a body's up axis (its z, up in the standing pose) leans forward in the heading frame (rad)."""
    up = frame.to_local(rotation[:, 2])
    return float(np.arctan2(up[0], up[2]))


class StepRunner(StrikeEpisode):
    """A SIMBICON walker (planar or 3-D) standing at x = ``start_x`` on ``ground`` (None: flat), stopped at foot
    strikes; ``early_touchdown`` is SIMBICON's switch of that name; ``hooks`` watch the episode (see
    :mod:`strider.runner.hooks`)."""

    def __init__(self, character: str = "planar7", gait: Gait | str = "walk", ground=None, seed: int = 0,
                 video: str | None = None, fps: float = 30.0, early_touchdown: float | None = None,
                 start_x: float = 0.0, hooks: tuple = ()):
        from strider.characters import load_character
        from strider.courses import Course
        from strider.methods.simbicon.controller import SIMBICON
        from strider.runner import Runner, Scenario
        from strider.sim import CharacterPlacement, Scene, Terrain

        spec = load_character(character)
        check_walker(spec)
        self.actions: ActionSpace = action_space(spec)
        self.base = gait if isinstance(gait, Gait) else load_gait(gait, body_of(spec))
        course = ground if isinstance(ground, Course) else None
        terrain = Terrain() if course is not None or ground is None else ground
        self.controller = SIMBICON(gait=self.base, early_touchdown=early_touchdown)
        scene = Scene((CharacterPlacement(spec, x=start_x),), terrain=terrain, course=course)
        self.runner = Runner(Scenario(scene, self.controller, 1e6, seed=seed), stop_on_fall=True, hooks=hooks)
        self.video = self.runner.record_video(video, fps) if video is not None else None
        self.runner.start()
        self.world, self.character = self.runner.world, self.runner.character
        self.period = self.controller.control_period
        legs = spec.roles.legs
        self._feet = {side: legs[side].foot for side in legs}
        self._hips = {side: self.character.joints[legs[side].hip] for side in legs}
        self._ankles = {side: legs[side].ankle for side in legs}
        self._thighs = {side: legs[side].upper for side in legs}
        self._roles = spec.roles
        self.last: Strike = self._strike()
        corners = self.character.sole_corners(self._feet[self.last.stance])[:, 0]
        self.foot_length = float(corners.max() - corners.min())

    def heel(self, side: str) -> float:
        return float(self.character.sole_corners(self._feet[side])[:, 0].min())

    def _strike(self) -> Strike:
        ch, ctrl = self.character, self.controller
        stance, swing = ctrl.stance, ctrl.swing
        com, vel = ch.com_position(), ch.com_velocity()
        if ch.planar:
            q = ch.data.qpos
            state = np.array([com[0] - ch.joint_anchor(self._ankles[stance])[0], vel[0], ch.root_pitch()[0],
                              q[self._hips[stance].qpos[0]], q[self._hips[swing].qpos[0]]])
            return Strike(self.time, self.heel(stance), state, stance)
        frame = CharacterFrame(ctrl.heading, com)
        pelvis = _lean(ch.body_rotation(self._roles.root), frame)
        # A thigh swung forward leans its up axis back; the hip angle is the swing relative to the pelvis, which
        # is the planar walker's hip coordinate.
        hip = {side: pelvis - _lean(ch.body_rotation(self._thighs[side]), frame) for side in (stance, swing)}
        state = np.array([frame.to_local(com - ch.joint_anchor(self._ankles[stance]))[0], frame.to_local(vel)[0],
                          _lean(ch.body_rotation(self._roles.torso), frame), hip[stance], hip[swing]])
        sole = ch.sole_corners(self._feet[stance]).mean(axis=0)
        return Strike(self.time, self.heel(stance), state, stance, float(sole[1]))

    def step(self, action: np.ndarray | None = None) -> StepOutcome:
        """Walk one step with ``action`` (None: the base gait's) until the next foot strike or a fall."""
        ctrl = self.controller
        ctrl.set_gait(self.base if action is None else self.actions.apply(self.base, action))
        steps = ctrl.steps
        if not self.runner.advance_until(lambda: ctrl.steps != steps, MAX_STEP_SECONDS, self.period):
            return StepOutcome(True, None)
        self.last = self._strike()
        return StepOutcome(False, self.last)

    def warm_up(self, steps: int) -> bool:
        """Walk ``steps`` steps of the base gait (from standing into its rhythm); False if it fell."""
        return not any(self.step().fell for _ in range(steps))
