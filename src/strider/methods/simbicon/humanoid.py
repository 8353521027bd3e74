"""SIMBICON's targets on a 3-D humanoid (seed 000, Sec. 2.4): ball hips, a spine, arms.

The swing thigh is placed in the world (character frame) by pitch and roll;
knees and ankles track parent-relative angles; each spine joint takes its
share of the torso's world-frame lean; the arms hang. The stance hip's servo
holds the pelvis on heading and upright (Eq. 2.3), with the swing hip's torque
cancelled by a feed-forward.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider import quat
from strider.control.frames import CharacterFrame
from strider.control.leg_geometry import SIDE_SIGN, SIDES
from strider.control.pd import servo_command_floats
from strider.control.stance_hip import stance_hip_servo_command
from strider.control.step_fsm import other
from strider.methods.simbicon.gait import Gait, GaitState
from strider.sim import Character


@dataclass(frozen=True)
class _TargetSlots:
    """Where one stance side's targets go: every servo ``write_targets`` sets, in the order it computes them,
    and the ball joints' coordinates it reads."""

    servos: np.ndarray                  # actuator ids, one per value written
    swing_hip_qpos: list[int]
    spine_qpos: list[list[int]]         # spine joints then the neck, root outwards
    shoulder_qpos: dict[str, list[int]]


class HumanoidBody:
    def __init__(self, character: Character, gait: Gait):
        self.character, self.gait = character, gait
        self.roles = character.spec.roles
        self._slots = {stance: self._target_slots(other(stance), stance) for stance in SIDES}

    def _target_slots(self, swing_side: str, stance_side: str) -> _TargetSlots:
        ch, roles = self.character, self.roles
        swing, stance = roles.legs[swing_side], roles.legs[stance_side]
        chain = list(roles.spine) + [roles.neck]
        arms = roles.arms
        order = ([swing.hip, swing.knee, stance.knee, swing.ankle, stance.ankle]
                 + ([swing.toe, stance.toe] if swing.toe else []) + chain
                 + [arms[side].shoulder for side in SIDES] + [arms[side].elbow for side in SIDES])
        return _TargetSlots(
            servos=np.concatenate([ch.joints[name].servos for name in order]),
            swing_hip_qpos=ch.joints[swing.hip].qpos.tolist(),
            spine_qpos=[ch.joints[name].qpos.tolist() for name in chain],
            shoulder_qpos={side: ch.joints[arms[side].shoulder].qpos.tolist() for side in SIDES})

    def pose(self) -> None:
        """The arms of a character placed standing hang as the gait has them."""
        ch, g = self.character, self.gait
        targets = ch.servo_targets
        for side in SIDES:
            arm = self.roles.arms[side]
            q = quat.about_x(-SIDE_SIGN[side] * g.arm_down)
            ch.set_joint_position(arm.shoulder, q)
            targets[ch.joints[arm.shoulder].servos] = quat.log(q)
            ch.set_joint_position(arm.elbow, -g.elbow_bend)
            targets[ch.joints[arm.elbow].servos[0]] = -g.elbow_bend

    def write_targets(self, frame: CharacterFrame, st: GaitState, phase: float, sagittal: float, coronal: float,
                      stance_side: str, swing_side: str) -> None:
        # On plain floats, written to the servos in one assignment: a tick's two dozen quaternion products and
        # logarithms cost far less than NumPy's per-call overhead on each (the same operations, so the same bits).
        ch, gait, slots = self.character, self.gait, self._slots[stance_side]
        qpos = ch.qpos.tolist()
        heading_q = quat.about_z_floats(frame.heading)
        root_q = ch.body_quat_floats(self.roles.root)
        # Swing thigh in the world (Sec. 2.4): forward pitch is a rotation about -y, outward roll about +-x.
        thigh = quat.mul_floats(heading_q, quat.mul_floats(quat.about_x_floats(SIDE_SIGN[swing_side] * coronal),
                                                           quat.about_y_floats(-sagittal)))
        values = [*servo_command_floats([qpos[i] for i in slots.swing_hip_qpos],
                                        quat.mul_floats(quat.conj_floats(root_q), thigh)),
                  st.swing_knee(phase), st.stance_knee(phase),
                  # Ankles: positive targets lift the toes, a rotation about -y; inversion held at zero.
                  0.0, -st.swing_ankle(phase), 0.0, -st.stance_ankle(phase)]
        if self.roles.legs[swing_side].toe:
            values += (0.0, 0.0)
        # Torso in the world: each spine joint's share of the lean, relative to its current parent.
        parent_q = root_q
        torso = st.torso(phase)
        spine_joints = len(self.roles.spine)
        for k, addresses in enumerate(slots.spine_qpos):
            q = [qpos[i] for i in addresses]
            lean = torso * min(1.0, (k + 1) / spine_joints)
            target = quat.mul_floats(quat.conj_floats(parent_q), quat.mul_floats(heading_q, quat.about_y_floats(lean)))
            values += servo_command_floats(q, target)
            parent_q = quat.mul_floats(parent_q, q)
        for side in SIDES:
            values += servo_command_floats([qpos[i] for i in slots.shoulder_qpos[side]],
                                           quat.about_x_floats(-SIDE_SIGN[side] * gait.arm_down))
        values += (-gait.elbow_bend, -gait.elbow_bend)
        ch.servo_targets[slots.servos] = values

    def root_control(self, heading: float, kp: float, kd: float, stance_side: str, swing_side: str) -> None:
        """Eq. 2.3: the stance hip holds the pelvis upright and on heading, cancelling the swing hip's torque."""
        ch, roles = self.character, self.roles
        stance, swing = roles.legs[stance_side], roles.legs[swing_side]
        joint = ch.joints[stance.hip]
        ch.servo_targets[joint.servos] = stance_hip_servo_command(
            ch.qpos[joint.qpos].tolist(), quat.about_z_floats(heading), ch.body_quat_floats(stance.upper),
            ch.body_angular_velocity(stance.upper).tolist(), kp, kd)
        swing_world = ch.body_rotation(swing.upper) @ ch.servo_forces[ch.joints[swing.hip].servos]
        ch.set_joint_feedforward(stance.hip, ch.body_rotation(stance.upper).T @ (-swing_world))
