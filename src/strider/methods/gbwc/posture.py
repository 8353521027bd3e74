"""GBWC's motion generator (seed 000, Sec. 5.3.1): the style's targets for the upper body, the stance and
standing legs and the feet, the start pose, and writing every target to the servos.

A part of :class:`strider.methods.gbwc.controller.GBWC`, which holds the state these methods share.
"""

from __future__ import annotations

import numpy as np

from strider import quat
from strider.control.frames import CharacterFrame
from strider.control.ik import (
    universal_angles,
)
from strider.control.leg_geometry import SIDE_SIGN, SIDES
from strider.control.pd import servo_commands

STANDING_COM_AHEAD_OF_ANKLES = 0.03   # m: the ankle sits behind the middle of the foot


class Posture:
    """The posture part of GBWC (see the module docstring)."""

    def _pose_initial(self) -> None:
        """Start from the standing pose (arms down, knees soft), feet on the ground, at rest."""
        style = self.params.style
        self._set_joint_quat(self.roles.arms["left"].shoulder, quat.about_x(-style.arm_down))
        self._set_joint_quat(self.roles.arms["right"].shoulder, quat.about_x(style.arm_down))
        self._set_hinge(self.roles.arms["left"].elbow, -style.elbow_bend)
        self._set_hinge(self.roles.arms["right"].elbow, -style.elbow_bend)
        self.world.forward()

    def _set_joint_quat(self, joint: str, q: np.ndarray) -> None:
        self.character.set_joint_position(joint, q)
        self.character.servo_targets[self.character.joints[joint].servos] = quat.log(q)

    def _set_hinge(self, joint: str, angle: float) -> None:
        self.character.set_joint_position(joint, angle)
        self.character.servo_targets[self.character.joints[joint].servos[0]] = angle

    def _ankle_position(self, side: str) -> np.ndarray:
        return self.character.joint_anchor(self.roles.legs[side].ankle)

    def _upper_body_targets(self, frame: CharacterFrame, targets: dict, hinges: dict) -> None:
        style, roles = self.params.style, self.roles
        chain, arm_down = self._upper_body_constants(style)
        heading_q = quat.about_z_floats(frame.heading)
        qpos = self.character.qpos
        # The chain of products runs on plain floats (quat.mul_floats, the same arithmetic as quat.mul);
        # targets are kept as float tuples, which _write_servos takes as they are.
        parent_q = self.character.body_quat(roles.root).tolist()
        for joint, q0, bend_q in chain:
            world_target = quat.mul_floats(heading_q, bend_q)
            pw, px, py, pz = parent_q
            targets[joint] = quat.mul_floats((pw, -px, -py, -pz), world_target)
            parent_q = quat.mul_floats(parent_q, qpos[q0:q0 + 4].tolist())
        swing = 0.0
        if self.mode != "standing":
            sign = 1.0 if self.fsm.stance == "left" else -1.0
            swing = style.arm_swing * (2.0 * self.fsm.phase - 1.0) * sign
        arms = roles.arms
        targets[arms["left"].shoulder] = quat.mul_floats(quat.about_y_floats(-swing), arm_down["left"])
        targets[arms["right"].shoulder] = quat.mul_floats(quat.about_y_floats(swing), arm_down["right"])
        hinges[arms["left"].elbow] = -style.elbow_bend
        hinges[arms["right"].elbow] = -style.elbow_bend
        if self.hand_targets is not None:
            self._arm_reach_targets(frame, targets, hinges)

    def _upper_body_constants(self, style) -> tuple[list, dict[str, np.ndarray]]:
        """Per style, computed once: each spine/neck joint's qpos index and its share of the body bend
        (lower back, upper back and head pitch by 1/3, 2/3 and all of it, coros-walking.md, Sec. 4),
        and the arms' hanging rotations."""
        if self._upper_body_cache is None or self._upper_body_cache[0] is not style:
            ch, roles = self.character, self.roles
            names = list(roles.spine) + [roles.neck]
            chain = [(joint, int(ch.joints[joint].qpos[0]),
                      quat.about_y(style.body_bend * ((k + 1) / len(names))).tolist())
                     for k, joint in enumerate(names)]
            arm_down = {"left": quat.about_x(-style.arm_down).tolist(), "right": quat.about_x(style.arm_down).tolist()}
            self._upper_body_cache = (style, chain, arm_down)
        return self._upper_body_cache[1], self._upper_body_cache[2]

    def _foot_flat_target(self, frame: CharacterFrame, side: str) -> tuple[float, float, float, float]:
        toe_out = self.params.style.toe_out * SIDE_SIGN[side]
        return quat.about_z_floats(frame.heading + toe_out)

    def _ankle_hinges(self, side: str, shank_q: list[float], foot_q: tuple, hinges: dict) -> None:
        """The ankle angles turning the shank at ``shank_q`` into the foot at ``foot_q`` (plain floats)."""
        leg = self.roles.legs[side]
        sw, sx, sy, sz = shank_q
        a, b = universal_angles(quat.mul_floats((sw, -sx, -sy, -sz), foot_q), self.legs[side].ankle_sign)
        hinges[(leg.ankle, 0)] = a
        hinges[(leg.ankle, 1)] = b
        if leg.toe:
            hinges[leg.toe] = 0.0

    def _stance_leg_targets(self, frame: CharacterFrame, v_local: np.ndarray, targets: dict, hinges: dict) -> None:
        side = self.fsm.stance
        leg = self.roles.legs[side]
        hinges[leg.knee] = self.params.style.stance_knee + self._downhill_knee(frame, v_local)
        shank_q = self.character.body_quat(leg.lower).tolist()
        self._ankle_hinges(side, shank_q, self._foot_flat_target(frame, side), hinges)

    def _downhill_knee(self, frame: CharacterFrame, v_local: np.ndarray) -> float:
        """Extra stance-knee bend (rad) while the body moves down the ground under the stance foot.

        Beyond the source. Walking (or taking recovery steps) down a slope, the straight stance leg holds the hip
        so high above the lower ground ahead that the swing leg cannot reach forward of the body: the foothold is
        cut back to under the hip, nothing brakes the fall, and the gait runs away. Bending the stance knee by
        ``downhill_knee`` per unit of the ground's fall along the sagittal motion (capped at ``downhill_max_fall``)
        lowers the hip so the inverted-pendulum foothold lies within reach again. 0 on level ground and uphill.
        """
        p = self.params
        if p.downhill_knee == 0.0 or self.mode == "standing" or self.mode == "starting":
            return 0.0
        fx, fy, _ = frame.forward_floats
        (rise,) = self._stance_ground_rise(((fx, fy),))
        if rise == 0.0:
            return 0.0
        fall = -rise
        # Walking, down the commanded way (a start up a steep slope may slide back); stepping to a stop, down the motion.
        if (self.desired_speed if self.mode == "walking" else v_local[0]) < 0.0:
            fall = -fall
        if fall <= 0.0:
            return 0.0
        return p.downhill_knee * min(fall, p.downhill_max_fall)

    def _standing_leg_targets(self, frame: CharacterFrame, targets: dict, hinges: dict) -> None:
        for side in SIDES:
            leg = self.roles.legs[side]
            hinges[leg.knee] = self.params.style.stance_knee
            self._ankle_hinges(side, self.character.body_quat(leg.lower).tolist(), self._foot_flat_target(frame, side),
                               hinges)

    def _write_servos(self, targets: dict, hinges: dict) -> None:
        ch = self.character
        ctrl = ch.servo_targets
        # The ball joints among the targets, in the character's order, looked up once per set of targets.
        rows = self._ball_rows.get(tuple(targets))
        if rows is None:
            names = tuple(n for n in self._ball if n in targets)
            idx = np.array([self._ball_index[n] for n in names], dtype=int)
            rows = self._ball_rows[tuple(targets)] = (names, self._ball_qpos[idx], self._ball_servos[idx])
        names, qpos_rows, servo_rows = rows
        if names:
            ctrl[servo_rows] = servo_commands(ch.qpos[qpos_rows], [targets[n] for n in names])
        servo = self._hinge_servo
        for key, angle in hinges.items():
            ctrl[servo[key]] = angle
