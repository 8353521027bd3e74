"""GBWC's joint torques (seed 000, Sec. 5.3.3-5.3.4, Eq. 2.3): gravity compensation, velocity tuning through
the stance leg(s) with the ankle kept within the sole, and the root control through the stance hip.

A part of :class:`strider.methods.gbwc.controller.GBWC`, which holds the state these methods share.
"""

from __future__ import annotations

import numpy as np

from strider import quat
from strider.control.fastmath import clamp
from strider.control.frames import CharacterFrame
from strider.control.gravity import lifting_torques
from strider.control.leg_geometry import SIDES
from strider.control.pd import servo_command
from strider.control.stance_hip import stance_hip_servo_command
from strider.control.step_fsm import other
from strider.control.velocity_tuning import lateral_force, lateral_target, sagittal_force, standing_sagittal_force
from strider.control.virtual_force import com_relative_to_foot, jacobian_transpose
from strider.methods.gbwc.posture import STANDING_COM_AHEAD_OF_ANKLES

MIN_LEVER_HEIGHT = 0.1                # m: floor on the COM height used to turn the weight moment into a force


class JointTorques:
    """The torques part of GBWC (see the module docstring)."""

    def _gravity_compensation(self, support: tuple[str, ...]) -> np.ndarray:
        ch = self.character
        com, _ = ch.dof_subtree()
        tau = lifting_torques(ch.dof_axes(), ch.dof_anchors(), com, self._lift)
        for s in support:
            tau[self._stance_leg_mask[s]] = 0.0
        return tau

    def _velocity_tuning(self, com: np.ndarray, v_local: np.ndarray, frame: CharacterFrame,
                         support: tuple[str, ...], foot_force: dict, torques: np.ndarray) -> dict[str, np.ndarray]:
        """Add velocity-tuning torques on the supporting legs; return each support hip's share (local)."""
        vt = self.params.velocity_tuning
        if self.mode in ("standing", "starting"):
            mid = 0.5 * sum(frame.to_local(self._ankle_position(s) - com) for s in SIDES)
            if self.mode == "starting":
                mid[1] = frame.to_local(self._ankle_position(self.fsm.stance) - com)[1]
            # The stance legs get no gravity compensation (Sec. 5.3.4), so without this the ankles would
            # hold the body's weight moment only through the COM PD, which then droops ahead of its target
            # (and, with the feet staggered after a stop, crept on until the character stepped again).
            # The moment m g x becomes a force at the COM's height above the ankles (-mid[2]).
            weight_lean_force = self.mass * self.gravity * mid[0] / max(-mid[2], MIN_LEVER_HEIGHT)
            mid[0] += STANDING_COM_AHEAD_OF_ANKLES
            f_sag = standing_sagittal_force(self.mass, mid[0], v_local[0], vt) + weight_lean_force
            f_lat = lateral_force(self.mass, mid[1], v_local[1], vt)
        else:
            f_sag = sagittal_force(self.desired_speed, v_local[0], vt)
            ax, ay, az = self._ankles[self.fsm.stance]
            cx, cy, cz = com.tolist()
            offset = frame.to_local_floats((cx - ax, cy - ay, cz - az))[1]
            # The COM target ends over the stance foot: step width W = 0 (coros-walking.md, Sec. 4).
            goal = lateral_target(self._lateral_strike, 0.0, self.fsm.phase)
            f_lat = lateral_force(self.mass, goal - offset, v_local[1] - self.desired_lateral_speed, vt, walking=True)
        if len(support) > 1:
            sagittal = frame.to_world(np.array([f_sag, 0.0, 0.0]))
            lateral = frame.to_world(np.array([0.0, f_lat, 0.0]))
            hips = self._double_support_push(lateral, support, foot_force, torques)
            total = sum(max(foot_force[s], 1e-6) for s in support)
            for s in support:
                share = max(foot_force[s], 1e-6) / total
                hips[s] = hips[s] + self._stance_leg_push(s, com, share * sagittal, foot_force[s], torques)
            return hips
        side = support[0]
        force = frame.to_world(np.array([f_sag, f_lat, 0.0]))
        return {side: self._stance_leg_push(side, com, force, foot_force[side], torques)}

    def _stance_leg_push(self, side: str, com: np.ndarray, force: np.ndarray, normal_force: float,
                         torques: np.ndarray) -> np.ndarray:
        """tau = J_V^T F through a planted leg; adds knee and ankle torques, returns the hip's (local)."""
        ch = self.character
        leg = self.roles.legs[side]
        # Only the leg's own columns of J_V: the knee's, the ankle's and the hip's, in that order.
        columns = self._leg_dof_columns[side]
        j_v = com_relative_to_foot(ch.com_jacobian()[:, columns], ch.point_jacobian(leg.foot, com)[:, columns])
        knee, ankle, hip = self._leg_dof_slots[side]
        if self.params.velocity_tuning_knee:
            self._add(torques, leg.knee, jacobian_transpose(j_v, force, knee))
        ankle_torque = self._ankle_torque_supported(side, jacobian_transpose(j_v, force, ankle), normal_force)
        self._add(torques, leg.ankle, ankle_torque)
        return jacobian_transpose(j_v, force, hip)

    def _double_support_push(self, force: np.ndarray, support: tuple[str, ...], foot_force: dict,
                             torques: np.ndarray) -> dict[str, np.ndarray]:
        """With both feet down, each leg pushes the ground with its share of -F (Sec. 5.5.1).

        Horizontal ground forces at both feet move the COM sideways without
        asking the ankles for torques the narrow soles cannot hold.
        """
        ch = self.character
        total = sum(max(foot_force[s], 1e-6) for s in support)
        hip_share: dict[str, np.ndarray] = {}
        for s in support:
            leg = self.roles.legs[s]
            share = max(foot_force[s], 1e-6) / total
            j_foot = ch.point_jacobian(leg.foot, ch.joint_anchor(leg.ankle))
            push = -share * force
            knee_dofs = ch.joints[leg.knee].dof
            self._add(torques, leg.knee, jacobian_transpose(j_foot, push, knee_dofs))
            hip_share[s] = jacobian_transpose(j_foot, push, ch.joints[leg.hip].dof)
        return hip_share

    def _add(self, torques: np.ndarray, joint: str, values: np.ndarray) -> None:
        torques[self._slots[joint]] += values

    def _ankle_torque_supported(self, side: str, tau: np.ndarray, normal_force: float) -> np.ndarray:
        """Clip an ankle's (inversion, flexion) torque to what the sole can push against.

        The source zeroes the ankle term once the toe lifts or the foot spins
        (Sec. 5.3.3); keeping the centre of pressure inside the sole is the same
        rule applied before the foot tips rather than after.
        """
        geo = self.legs[side]
        margin = self.params.sole_margin
        half_width, front, back = (x * margin for x in geo.support.tolist())
        f = max(normal_force, 0.0)
        inversion = clamp(tau[0], -f * half_width, f * half_width)
        # Positive flexion pitches the foot toes-down about +y, pressing on the toes.
        flexion = clamp(tau[1], -f * back, f * front)
        return np.array([inversion, flexion])

    def _root_control(self, root_q: np.ndarray, support: tuple[str, ...], foot_force: dict,
                      hip_vt: dict[str, np.ndarray], torques: np.ndarray) -> None:
        """Eq. 2.3 through the stance hip servo(s), so the root PD runs at the physics rate.

        Each supporting hip's servo tracks the hip angle that would put the pelvis
        at its target with the thigh where it is, with the root gains (split by
        load in double support). The swing hip's torque, which also acts on the
        pelvis, is cancelled as a feed-forward term, as in Eq. 2.3.

        Beyond the source: in a recovery step the stance foot may still hang in the air (a side push lifts
        the foot on its side, and the step is taken with the other). Through an unloaded foot the root PD
        and the feed-forward only swing the leg, which then lands moving and slides, so there they get the
        foot's load share of ``recovery_stance_load`` times body weight, and the rest of the hip servo holds
        the hip angle the step began with, bringing the foot down where it was. After a push backwards that
        lifted the stance foot without a crossover (:meth:`recovery_step`), the body falls away from that foot
        as it lands, and the whole recovery runs its stance hip at ``recovery_backward_hip_scale`` of the gains
        and feed-forward: through the full ones the pelvis' righting pushed the lightly loaded foot past friction.
        """
        ch = self.character
        target = quat.about_z_floats(self.heading)
        swing_world = np.zeros(3)
        if len(support) == 1:
            swing = other(support[0])
            j = ch.joints[self.roles.legs[swing].hip]
            local = ch.servo_forces[j.servos] + torques[self._slots[self.roles.legs[swing].hip]]
            swing_world = ch.body_rotation(self.roles.legs[swing].upper) @ local
        total = sum(max(foot_force[s], 1e-6) for s in support)
        for s in support:
            share = max(foot_force[s], 1e-6) / total if len(support) > 1 else 1.0
            leg = self.roles.legs[s]
            joint = ch.joints[leg.hip]
            thigh_q = ch.body_quat(leg.upper)
            hip_q = ch.qpos[joint.qpos]
            thigh_omega = ch.body_angular_velocity(leg.upper)
            kp, kd = self._root_axis_gains[(s, bool(self.command.walking))]
            command = stance_hip_servo_command(hip_q, target, thigh_q, thigh_omega, kp, kd)
            load = self._recovery_load(s, support, foot_force)
            # 1.0 (an exact factor) outside a softened recovery (recovery_step).
            soft = self.params.recovery_backward_hip_scale if self._soft_recovery(support) else 1.0
            if load < 1.0:
                own = self._hip_gains[s]
                k_root, k_hold = load * kp, (1.0 - load) * own.kp
                ch.set_servo_gains(leg.hip, soft * (k_root + k_hold), soft * (load * kd + (1.0 - load) * own.kd))
                hold = servo_command(hip_q, self._stance_hold)
                ch.servo_targets[joint.servos] = (k_root * command + k_hold * hold) / (k_root + k_hold)
            else:
                ch.set_servo_gains(leg.hip, soft * (share * kp), soft * (share * kd))
                ch.servo_targets[joint.servos] = command
            rot = ch.body_rotation(leg.upper)
            feedforward = rot.T @ (-share * swing_world) + hip_vt[s]
            torques[self._slots[leg.hip]] = soft * (feedforward if load == 1.0 else load * feedforward)
