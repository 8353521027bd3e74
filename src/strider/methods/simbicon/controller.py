"""SIMBICON (seed 000, Sec. 2.4; specs/coros-walking.md, Sec. 3.1).

Every control update:

1. the finite-state machine advances: each state of a step lasts its dwell
   time, the last one ends at swing-foot contact; then the legs swap;
2. the swing hip's world-frame target gets the balance feedback of Eq. 2.1,
   theta_d = theta_d0 + cd d + cv v, separately in the sagittal and coronal
   planes, with d the COM's horizontal offset from the stance ankle and v the
   COM velocity (character frame);
3. knees, ankles and arms track parent-relative targets, the spine tracks a
   world-frame (character frame) torso target, all through the PD servos;
4. the stance hip supplies the root torque (Eq. 2.3): a world-frame PD on the
   pelvis through its servo, minus the swing hip's torque as feed-forward.

SIMBICON has no speed control: the gait data sets the speed. The command's
heading is followed by the root target, slewed at ``max_turn_rate``.
"""

from __future__ import annotations

import math

from strider import quat
from strider.control.controller import CommandRange, HeadingTarget, LocomotionCommand, begin_from
from strider.control.falls import FallCriteria, FallJudge
from strider.control.fastmath import clamp
from strider.control.frames import CharacterFrame
from strider.control.leg_geometry import SIDE_SIGN, SIDES
from strider.control.step_fsm import StrikeParams, other
from strider.errors import UsageError
from strider.methods.simbicon.gait import Gait, GaitState, body_of, check_style, load_gait
from strider.methods.simbicon.humanoid import HumanoidBody
from strider.methods.simbicon.planar import PlanarBody
from strider.sim import Character, State, World

CONTROL_PERIOD = 0.005   # s; servos run at the physics rate inside MuJoCo, the FSM and feedback at 200 Hz
MAX_TURN_RATE = 2.0      # rad/s (seed 000, Sec. 5.5.1, shared with GBWC's omega_max)
# SIMBICON has no speed control and no standing state (seed 000, Sec. 2.4): it walks forwards at its gait's speed.
COMMAND_RANGE = CommandRange(speed=(0.0, math.inf), lateral_speed=(0.0, 0.0), max_turn_rate=MAX_TURN_RATE,
                             stands=False, note="SIMBICON walks forwards at the speed its gait gives, and cannot stand")


class SIMBICON:
    name = "simbicon"
    capabilities: frozenset[str] = frozenset()

    def __init__(self, command: LocomotionCommand | None = None, gait: Gait | str | None = None,
                 falls: FallCriteria | None = None, strike: StrikeParams | None = None,
                 early_touchdown: float | None = None):
        """``gait`` is a :class:`Gait`, or a style name or file loaded for the character's body at ``reset``
        (None: ``walk``).

        ``early_touchdown`` (strider's; None is the source's FSM, whose timed states always run their dwell): a
        swing foot that lands in a timed state, at least this many seconds into the step, ends the step there.
        Without it, a step longer than the first state's dwell lands with the swing knee still at the first
        state's bend, and the leg folds under the load until the dwell runs out."""
        self.command = command or LocomotionCommand()
        self.style = gait if isinstance(gait, Gait) else check_style("walk" if gait is None else gait)
        self.falls = falls or FallCriteria()
        self.strike = strike or StrikeParams()
        if early_touchdown is not None and not early_touchdown >= 0:
            raise UsageError(f"early_touchdown must be a time >= 0 s or None, got {early_touchdown}")
        self.early_touchdown = early_touchdown
        self.control_period = CONTROL_PERIOD
        self.command_range = COMMAND_RANGE

    # --- setup ------------------------------------------------------------------------------------
    def reset(self, world: World, character: Character, start: State | str | None = None) -> None:
        """Bind to ``character`` and begin from ``start`` (the controller contract): None poses the arms of the
        standing character; ``AS_IS`` or a physics state take it as it is."""
        place = begin_from(world, start)
        self.world, self.character = world, character
        spec = character.spec
        self.roles = spec.roles
        body = body_of(spec)
        self.gait = self.style if isinstance(self.style, Gait) else load_gait(self.style, body)
        if self.gait.body != body:
            raise UsageError(f"SIMBICON gait {self.gait.name!r} drives a {self.gait.body} character; "
                             f"{spec.name!r} is {body}")
        if character.planar and self.command.heading not in (None, 0.0):
            raise UsageError(f"a planar walker cannot turn: {spec.name!r} walks along x (heading 0), "
                             f"not {self.command.heading:g} rad")
        self.body = PlanarBody(character, self.gait) if character.planar else HumanoidBody(character, self.gait)
        for j in spec.joints():
            if j.gains in self.gait.gains:
                character.set_servo_gains(j.name, *self.gait.gains[j.gains])
        self.root_gains = self.gait.root_gains or (spec.root_gains.kp, spec.root_gains.kd)
        self._hip_gains = {s: character.servo_gains(self.roles.legs[s].hip) for s in SIDES}
        self._feet = {s: [character.body(b) for b in (self.roles.legs[s].foot, self.roles.legs[s].toes) if b]
                      for s in SIDES}
        self.weight = character.mass * world.scene.gravity
        self.heading = quat.yaw(character.body_quat(self.roles.root))
        heading = self.command.heading
        self.target_heading = HeadingTarget(self.heading if heading is None else heading)
        self._fall_judge = FallJudge(world, character, self.falls)
        self.stance = "left"
        self.state_index = 0
        self.state_time = 0.0
        self.step_time = 0.0
        self.steps = 0
        self.fallen = False
        if place:
            self.body.pose()
            world.forward()
        self._begin_step()

    @property
    def swing(self) -> str:
        return other(self.stance)

    @property
    def state(self) -> GaitState:
        return self.gait.states[self.state_index]

    def _begin_step(self) -> None:
        """The stance hip's servo carries the root PD; the swing hip gets its own gains back."""
        ch = self.character
        kp, kd = self._hip_gains[self.swing]
        ch.set_servo_gains(self.roles.legs[self.swing].hip, kp, kd)
        ch.set_servo_gains(self.roles.legs[self.stance].hip, *self.root_gains)
        self.lifted = False
        self.step_time = 0.0

    # --- the controller protocol ------------------------------------------------------------------
    def has_fallen(self) -> bool:
        return self.fallen

    def set_command(self, command: LocomotionCommand) -> None:
        self.command = command
        self.target_heading.follow(command)

    def set_gait(self, gait: Gait) -> None:
        """Track ``gait`` from now on: a step planner changes the targets at each foot strike (Coros 2010,
        Sec. 3.3.1), when the step's first state begins. The gait must be for the same body, with as many
        states."""
        if gait.body != self.gait.body or len(gait.states) != len(self.gait.states):
            raise UsageError(f"gait {gait.name!r} ({gait.body}, {len(gait.states)} states) cannot replace "
                             f"{self.gait.name!r} ({self.gait.body}, {len(self.gait.states)} states)")
        self.gait = gait
        self.body.gait = gait

    def info(self) -> dict:
        return {"stance": self.stance, "state": self.state_index, "steps": self.steps, "heading": self.heading,
                "target_heading": self.target_heading.value}

    def control(self, t: float) -> None:
        ch = self.character
        dt = self.control_period
        self._check_fall()
        self._advance(dt)
        turn = quat.wrap_angle(self.target_heading.advance(self.command, dt) - self.heading)
        self.heading = quat.wrap_angle(self.heading + clamp(turn, -MAX_TURN_RATE * dt, MAX_TURN_RATE * dt))
        com, com_vel = ch.com_position(), ch.com_velocity()
        frame = CharacterFrame(self.heading, com)
        d = frame.to_local_floats((com - ch.joint_anchor(self.roles.legs[self.stance].ankle)).tolist())
        v = frame.to_local_floats(com_vel.tolist())
        st, fb = self.state, self.gait.feedback
        phase = st.phase(self.state_time)
        out = SIDE_SIGN[self.swing]   # lateral directions count positive towards the swing side
        sagittal = st.swing_hip(phase) + fb.cd_sagittal * d[0] + fb.cv_sagittal * v[0]
        coronal = (st.swing_hip_lateral(phase) + self.gait.step_width + fb.cd_coronal * out * d[1]
                   + fb.cv_coronal * out * v[1])
        self.body.write_targets(frame, st, phase, sagittal, coronal, self.stance, self.swing)
        self.body.root_control(self.heading, *self.root_gains, self.stance, self.swing)

    # --- finite-state machine ---------------------------------------------------------------------
    def _advance(self, dt: float) -> None:
        self.state_time += dt
        self.step_time += dt
        swing_force = self.character.contact_normal_force(self._feet[self.swing])
        loaded = swing_force > self.strike.force_fraction * self.weight
        self.lifted = self.lifted or not loaded
        st = self.state
        done = self.state_time >= st.dwell and (st.ends_on == "time" or (loaded and self.lifted))
        if (not done and self.early_touchdown is not None and st.ends_on == "time" and loaded and self.lifted
                and self.step_time >= self.early_touchdown):
            self.state_index, done = len(self.gait.states) - 1, True
        if not done:
            return
        self.state_time = 0.0
        self.state_index += 1
        if self.state_index == len(self.gait.states):
            self.state_index = 0
            self.stance = self.swing
            self.steps += 1
            self._begin_step()

    def _check_fall(self) -> None:
        if self._fall_judge():
            self.fallen = True


def build(command: LocomotionCommand, style: str) -> SIMBICON:
    """The registry's factory: ``style`` names a gait (``walk``, ``run``: the character's body's own) or is a path
    to a gait file."""
    return SIMBICON(command, style)
