"""SIMBICON's targets on a 3-D humanoid (seed 000, Sec. 2.4): ball hips, a spine, arms.

The swing thigh is placed in the world (character frame) by pitch and roll;
knees and ankles track parent-relative angles; each spine joint takes its
share of the torso's world-frame lean; the arms hang. The stance hip's servo
holds the pelvis on heading and upright (Eq. 2.3), with the swing hip's torque
cancelled by a feed-forward.
"""

from __future__ import annotations

from strider import quat
from strider.control.frames import CharacterFrame
from strider.control.leg_geometry import SIDE_SIGN, SIDES
from strider.control.pd import servo_command
from strider.control.stance_hip import stance_hip_servo_command
from strider.methods.simbicon.gait import Gait, GaitState
from strider.sim import Character


class HumanoidBody:
    def __init__(self, character: Character, gait: Gait):
        self.character, self.gait = character, gait
        self.roles = character.spec.roles

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
        ch, roles = self.character, self.roles
        ctrl, qpos = ch.servo_targets, ch.qpos
        heading_q = frame.quat
        swing, stance = roles.legs[swing_side], roles.legs[stance_side]
        # Swing thigh in the world (Sec. 2.4): forward pitch is a rotation about -y, outward roll about +-x.
        thigh = quat.mul(heading_q, quat.mul(quat.about_x(SIDE_SIGN[swing_side] * coronal), quat.about_y(-sagittal)))
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

    def root_control(self, heading: float, kp: float, kd: float, stance_side: str, swing_side: str) -> None:
        """Eq. 2.3: the stance hip holds the pelvis upright and on heading, cancelling the swing hip's torque."""
        ch, roles = self.character, self.roles
        stance, swing = roles.legs[stance_side], roles.legs[swing_side]
        joint = ch.joints[stance.hip]
        ch.servo_targets[joint.servos] = stance_hip_servo_command(
            ch.qpos[joint.qpos], quat.about_z(heading), ch.body_quat(stance.upper),
            ch.body_angular_velocity(stance.upper), kp, kd)
        swing_world = ch.body_rotation(swing.upper) @ ch.servo_forces[ch.joints[swing.hip].servos]
        ch.set_joint_feedforward(stance.hip, ch.body_rotation(stance.upper).T @ (-swing_world))
