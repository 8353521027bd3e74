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

import numpy as np

from strider import quat
from strider.control.controller import CommandRange, HeadingTarget, LocomotionCommand, begin_from
from strider.control.falls import FallCriteria, FallJudge
from strider.control.frames import CharacterFrame
from strider.control.leg_geometry import SIDE_SIGN, SIDES
from strider.control.pd import servo_command
from strider.control.stance_hip import stance_hip_servo_command
from strider.control.step_fsm import StrikeParams, other
from strider.methods.simbicon.gait import Gait, GaitState, load_gait
from strider.sim import Character, State, World

CONTROL_PERIOD = 0.005   # s; servos run at the physics rate inside MuJoCo, the FSM and feedback at 200 Hz
MAX_TURN_RATE = 2.0      # rad/s (seed 000, Sec. 5.5.1, shared with GBWC's omega_max)
# SIMBICON has no speed control and no standing state (seed 000, Sec. 2.4): it walks forwards at its gait's speed.
COMMAND_RANGE = CommandRange(speed=(0.0, math.inf), lateral_speed=(0.0, 0.0), max_turn_rate=MAX_TURN_RATE,
                             stands=False, note="SIMBICON walks forwards at the speed its gait gives, and cannot stand")


class SIMBICON:
    name = "simbicon"
    capabilities: frozenset[str] = frozenset()

    def __init__(self, command: LocomotionCommand | None = None, gait: Gait | None = None,
                 falls: FallCriteria | None = None, strike: StrikeParams | None = None):
        self.command = command or LocomotionCommand()
        self.gait = gait or load_gait("walk")
        self.falls = falls or FallCriteria()
        self.strike = strike or StrikeParams()
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
        for j in spec.joints():
            if j.gains in self.gait.gains:
                character.set_servo_gains(j.name, *self.gait.gains[j.gains])
        self.root_gains = self.gait.root_gains or (spec.root_gains.kp, spec.root_gains.kd)
        self._hip_gains = {s: character.servo_gains(self.roles.legs[s].hip) for s in SIDES}
        self._ankle_sign = {s: float(np.sign(next(j.axes[0][0] for j in spec.joints()
                                                  if j.name == self.roles.legs[s].ankle)) or 1.0) for s in SIDES}
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
        self.steps = 0
        self.fallen = False
        if place:
            self._pose_arms()
        self._begin_step()

    def _pose_arms(self) -> None:
        ch, g = self.character, self.gait
        targets = ch.servo_targets
        for side in SIDES:
            arm = self.roles.arms[side]
            q = quat.about_x(-SIDE_SIGN[side] * g.arm_down)
            ch.set_joint_position(arm.shoulder, q)
            targets[ch.joints[arm.shoulder].servos] = quat.log(q)
            ch.set_joint_position(arm.elbow, -g.elbow_bend)
            targets[ch.joints[arm.elbow].servos[0]] = -g.elbow_bend
        self.world.forward()

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
        self.lifted = False

    # --- the controller protocol ------------------------------------------------------------------
    def has_fallen(self) -> bool:
        return self.fallen

    def set_command(self, command: LocomotionCommand) -> None:
        self.command = command
        self.target_heading.follow(command)

    def info(self) -> dict:
        return {"stance": self.stance, "state": self.state_index, "steps": self.steps, "heading": self.heading,
                "target_heading": self.target_heading.value}

    def control(self, t: float) -> None:
        ch = self.character
        dt = self.control_period
        self._check_fall()
        self._advance(dt)
        turn = quat.wrap_angle(self.target_heading.advance(self.command, dt) - self.heading)
        self.heading = quat.wrap_angle(self.heading + float(np.clip(turn, -MAX_TURN_RATE * dt, MAX_TURN_RATE * dt)))
        com, com_vel = ch.com_position(), ch.com_velocity()
        frame = CharacterFrame(self.heading, com)
        d = frame.to_local(com - ch.joint_anchor(self.roles.legs[self.stance].ankle))
        v = frame.to_local(com_vel)
        st, fb = self.state, self.gait.feedback
        phase = st.phase(self.state_time)
        out = SIDE_SIGN[self.swing]   # lateral directions count positive towards the swing side
        sagittal = st.swing_hip(phase) + fb.cd_sagittal * d[0] + fb.cv_sagittal * v[0]
        coronal = (st.swing_hip_lateral(phase) + self.gait.step_width + fb.cd_coronal * out * d[1]
                   + fb.cv_coronal * out * v[1])
        self._write_targets(frame, st, phase, sagittal, coronal)
        self._root_control()

    # --- finite-state machine ---------------------------------------------------------------------
    def _advance(self, dt: float) -> None:
        self.state_time += dt
        forces = self.character.contact_normal_forces()
        swing_force = float(forces[self._feet[self.swing]].sum())
        loaded = swing_force > self.strike.force_fraction * self.weight
        self.lifted = self.lifted or not loaded
        st = self.state
        done = self.state_time >= st.dwell and (st.ends_on == "time" or (loaded and self.lifted))
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

    # --- targets ----------------------------------------------------------------------------------
    def _write_targets(self, frame: CharacterFrame, st: GaitState, phase: float, sagittal: float,
                       coronal: float) -> None:
        ch, roles = self.character, self.roles
        ctrl, qpos = ch.servo_targets, ch.qpos
        heading_q = frame.quat
        swing, stance = roles.legs[self.swing], roles.legs[self.stance]
        # Swing thigh in the world (Sec. 2.4): forward pitch is a rotation about -y, outward roll about +-x.
        thigh = quat.mul(heading_q, quat.mul(quat.about_x(SIDE_SIGN[self.swing] * coronal), quat.about_y(-sagittal)))
        hip = ch.joints[swing.hip]
        ctrl[hip.servos] = servo_command(qpos[hip.qpos], quat.mul(quat.conj(ch.body_quat(roles.root)), thigh))
        ctrl[ch.joints[swing.knee].servos[0]] = st.swing_knee(phase)
        ctrl[ch.joints[stance.knee].servos[0]] = st.stance_knee(phase)
        # Ankles: positive targets lift the toes, a rotation about -y; inversion held at zero.
        ctrl[ch.joints[swing.ankle].servos] = (0.0, -st.swing_ankle(phase))
        ctrl[ch.joints[stance.ankle].servos] = (0.0, -st.stance_ankle(phase))
        if swing.toe:
            ctrl[ch.joints[swing.toe].servos[0]] = 0.0
            ctrl[ch.joints[stance.toe].servos[0]] = 0.0
        # Torso in the world: each spine joint's share of the lean, relative to its current parent.
        parent_q = ch.body_quat(roles.root)
        chain = list(roles.spine) + [roles.neck]
        torso = st.torso(phase)
        for k, name in enumerate(chain):
            j = ch.joints[name]
            lean = torso * min(1.0, (k + 1) / len(roles.spine))
            target = quat.mul(quat.conj(parent_q), quat.mul(heading_q, quat.about_y(lean)))
            ctrl[j.servos] = servo_command(qpos[j.qpos], target)
            parent_q = quat.mul(parent_q, qpos[j.qpos])
        for side in SIDES:
            arm = roles.arms[side]
            j = ch.joints[arm.shoulder]
            ctrl[j.servos] = servo_command(qpos[j.qpos], quat.about_x(-SIDE_SIGN[side] * self.gait.arm_down))
            ctrl[ch.joints[arm.elbow].servos[0]] = -self.gait.elbow_bend

    def _root_control(self) -> None:
        """Eq. 2.3: the stance hip holds the pelvis upright and on heading, cancelling the swing hip's torque."""
        ch, roles = self.character, self.roles
        kp, kd = self.root_gains
        stance, swing = roles.legs[self.stance], roles.legs[self.swing]
        joint = ch.joints[stance.hip]
        ch.set_servo_gains(stance.hip, kp, kd)
        target = quat.about_z(self.heading)
        ch.servo_targets[joint.servos] = stance_hip_servo_command(
            ch.qpos[joint.qpos], target, ch.body_quat(stance.upper), ch.body_angular_velocity(stance.upper),
            kp, kd)
        swing_world = ch.body_rotation(swing.upper) @ ch.servo_forces[ch.joints[swing.hip].servos]
        feedforward = ch.body_rotation(stance.upper).T @ (-swing_world)
        torques = np.zeros(ch.nv)
        torques[joint.dof] = feedforward
        ch.set_feedforward_torques(torques[ch.internal_dofs])


def build(command: LocomotionCommand, style: str) -> SIMBICON:
    """The registry's factory: ``style`` names a gait file (``walk``, ``run``) or is a path to one."""
    return SIMBICON(command, load_gait(style))
