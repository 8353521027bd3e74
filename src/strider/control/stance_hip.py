"""Root control through the stance hip (seed 000, Eq. 2.3).

The pelvis has no actuator of its own. A virtual PD on its world orientation
gives the torque it should feel, tau_root; the hips are the only joints acting
on it directly, so the stance hip supplies tau_A = -tau_root - tau_B, where
tau_B is what the swing hip already applies. Hip torques act on the thigh, and
with opposite sign on the pelvis, hence the minus signs.

:func:`root_torque` is the root PD as the source writes it;
:func:`stance_hip_servo_command` produces exactly that torque on the pelvis
through the stance hip's servo, so it runs at the physics rate.
"""

from __future__ import annotations

import numpy as np

from strider import quat
from strider.control.fastmath import floats
from strider.control.pd import pd_torque, servo_command_floats


def root_torque(root_quat: np.ndarray, root_target: np.ndarray, root_omega_world: np.ndarray,
                kp: float, kd: float, limit: float) -> np.ndarray:
    """World-frame torque the pelvis should feel to follow ``root_target``."""
    # PD in the root's own frame, then back to world.
    omega_local = quat.rotate(quat.conj(root_quat), root_omega_world)
    tau_local = pd_torque(root_quat, root_target, omega_local, kp, kd, limit)
    return quat.rotate(root_quat, tau_local)


def stance_hip_servo_command(hip_quat: np.ndarray, root_target: np.ndarray, thigh_quat: np.ndarray,
                             thigh_omega_world: np.ndarray, kp: float, kd: float) -> np.ndarray:
    """Servo ``ctrl`` for a stance hip that holds the pelvis at ``root_target`` with the root PD gains.

    With the thigh where it is, the pelvis is at its target when the hip is at
    q_hip = root_target^-1 * thigh. A hip servo tracking that angle applies,
    through the hip, the root PD's restoring torque to the pelvis. Its damping
    acts on the hip's relative velocity; asking for the thigh's own angular
    velocity as the relative velocity turns it into damping of the pelvis's
    world angular velocity, which is what Eq. 2.3's root PD damps. Because the
    servo runs inside the physics step, the root PD keeps the physics rate even
    when the controller updates less often.
    """
    # On plain floats (the same operations as quat.mul, quat.rotate and pd.servo_command): this runs at every
    # control update, where NumPy's per-call cost would outweigh the arithmetic many times over.
    tw, tx, ty, tz = floats(root_target)
    thigh = floats(thigh_quat)
    hip_target = quat.mul_floats((tw, -tx, -ty, -tz), thigh)
    omega_rel_target = quat.rotate_floats((thigh[0], -thigh[1], -thigh[2], -thigh[3]), floats(thigh_omega_world))
    command = servo_command_floats(floats(hip_quat), hip_target)
    damping = kd / kp    # one ratio, or one per axis
    ratios = damping.tolist() if isinstance(damping, np.ndarray) else [damping] * 3
    return np.array([c + r * w for c, r, w in zip(command, ratios, omega_rel_target)])
