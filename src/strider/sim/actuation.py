"""Stable PD servos (Tan, Liu and Turk 2011), computed by the world before every physics step.

Explicit PD, τ = kp (q̂ − q) − kd q̇, becomes unstable once kp h² or kd h grows against a segment's inertia: a
stiff servo on a light foot diverges at a 5 ms step. Stable PD evaluates the spring at the next step's
position and the damper at the next step's velocity,

    τ = kp (q̂ − q − h q̇) − kd (q̇ + h q̈),

with q̈ from the whole body's dynamics with that torque in it: (M + h Kd) q̈ = −h_bias + τ_passive + τ_applied
+ Kp (q̂ − q − h q̇) − Kd q̇ (contacts are left out of the prediction, as in the source). The resulting
torque goes to motor actuators, so limits and everything downstream are MuJoCo's own.

Targets and gains live on the same axes as position servos (one per hinge, three per ball joint about the
child's axes, the target being the rotation vector component), so a controller sets them the same way in
``position`` and ``spd`` mode.
"""

from __future__ import annotations

import mujoco
import numpy as np


class StablePD:
    """The stable-PD servos of one character: targets and gains per actuator (indexed by actuator id)."""

    def __init__(self, model: mujoco.MjModel, actuators: np.ndarray, kp: np.ndarray, kd: np.ndarray):
        self.actuators = np.asarray(actuators, dtype=int)
        # The DOF each actuator turns: a hinge's own, or a ball joint's axis picked by the unit gear.
        joints = model.actuator_trnid[self.actuators, 0]
        axes = np.argmax(np.abs(model.actuator_gear[self.actuators, :3]), axis=1)
        is_ball = model.jnt_type[joints] == mujoco.mjtJoint.mjJNT_BALL
        self.dofs = model.jnt_dofadr[joints] + np.where(is_ball, axes, 0)
        nu = model.nu
        self.targets = np.zeros(nu)
        self.kp = np.zeros(nu)
        self.kd = np.zeros(nu)
        self.kp[self.actuators] = kp
        self.kd[self.actuators] = kd
        self._mass = np.zeros((model.nv, model.nv))
        self._diagonal = (self.dofs, self.dofs)

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Write this step's torques into the motors' ctrl; call between ``mj_step1`` and ``mj_step2``."""
        a, dofs, h = self.actuators, self.dofs, model.opt.timestep
        kp, kd = self.kp[a], self.kd[a]
        velocity = data.actuator_velocity[a]
        spring = kp * (self.targets[a] - data.actuator_length[a] - h * velocity)
        mujoco.mj_fullM(model, data, self._mass)
        self._mass[self._diagonal] += h * kd
        rhs = data.qfrc_passive - data.qfrc_bias + data.qfrc_applied
        rhs[dofs] += spring - kd * velocity
        qacc = np.linalg.solve(self._mass, rhs)
        data.ctrl[a] = spring - kd * (velocity + h * qacc[dofs])

    def state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a = self.actuators
        return self.targets[a].copy(), self.kp[a].copy(), self.kd[a].copy()

    def set_state(self, state: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        a = self.actuators
        self.targets[a], self.kp[a], self.kd[a] = state
