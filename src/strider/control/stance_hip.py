"""Root control through the stance hip (seed 000, Eq. 2.3).

The pelvis has no actuator of its own. A virtual PD on its world orientation
gives the torque it should feel, tau_root; the hips are the only joints acting
on it directly, so the stance hip supplies tau_A = -tau_root - tau_B, where
tau_B is what the swing hip already applies. Hip torques act on the thigh, and
with opposite sign on the pelvis, hence the minus signs.
"""

from __future__ import annotations

import numpy as np

from strider.control import quat
from strider.control.pd import pd_torque


def root_torque(root_quat: np.ndarray, root_target: np.ndarray, root_omega_world: np.ndarray,
                kp: float, kd: float, limit: float) -> np.ndarray:
    """World-frame torque the pelvis should feel to follow ``root_target``."""
    # PD in the root's own frame, then back to world.
    omega_local = quat.rotate(quat.conj(root_quat), root_omega_world)
    tau_local = pd_torque(root_quat, root_target, omega_local, kp, kd, limit)
    return quat.rotate(root_quat, tau_local)


def stance_hip_torque(tau_root_world: np.ndarray, swing_hip_torque_world: np.ndarray) -> np.ndarray:
    """World-frame torque the stance hip applies to its thigh (Eq. 2.3)."""
    return -np.asarray(tau_root_world) - np.asarray(swing_hip_torque_world)
