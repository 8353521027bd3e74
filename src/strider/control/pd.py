"""Quaternion PD tracking (seed 000, Eq. 2.2), run by MuJoCo's servos.

The source's torque is tau = kp * vq(q, qd) - kd * omega. Its sign convention
points away from the target; coros-walking.md, Sec. 4 decides on the restoring
form tau = kp * log(q^-1 qd) - kd * omega, expressed in the child frame.

In strider the PD runs inside the physics step (``strider.sim.build``): a ball
joint's three servos produce kp * (ctrl - r) - kd * omega, where r is the
joint's rotation vector. Setting ctrl = r + log(q^-1 qd) makes the spring term
exactly the quaternion PD error at the moment the controller updates, and the
damping is integrated implicitly at every physics step.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from strider import quat

FLOAT_PATH_MAX_JOINTS = 16   # up to this many joints, servo_command loops on plain floats


def quaternion_error(q: np.ndarray, q_target: np.ndarray) -> np.ndarray:
    """Rotation vector from ``q`` to ``q_target`` in the child frame: log(q^-1 qd)."""
    return quat.log(quat.mul(quat.conj(q), q_target))


def pd_torque(q: np.ndarray, q_target: np.ndarray, omega: np.ndarray, kp: float, kd: float,
              limit: float = np.inf, omega_target: np.ndarray | float = 0.0) -> np.ndarray:
    """The quaternion PD torque (child frame), clamped per axis to ``limit``.

    Used where the torque is applied by the controller itself (the virtual root
    PD); joint servos use :func:`servo_command` instead.
    """
    tau = kp * quaternion_error(q, q_target) - kd * (np.asarray(omega) - omega_target)
    return np.clip(tau, -limit, limit)


def servo_command(q: np.ndarray, q_target: np.ndarray) -> np.ndarray:
    """Servo ``ctrl`` values for ball joint(s) at ``q`` tracking ``q_target``: r + log(q^-1 qd)."""
    q, q_target = np.asarray(q, dtype=float), np.asarray(q_target, dtype=float)
    if q.ndim == 1 and q_target.ndim == 1:
        return np.array(servo_command_floats(q.tolist(), q_target.tolist()))
    if q.ndim == 1 or q.shape != q_target.shape:
        return quat.log(q) + quaternion_error(q, q_target)
    if q.ndim == 2 and len(q) <= FLOAT_PATH_MAX_JOINTS:
        # A character's handful of ball joints: a loop on plain floats beats NumPy's per-call overhead
        # (about 2x for 7 joints), with the same operations, so the same bits.
        return np.array([servo_command_floats(a, b) for a, b in zip(q.tolist(), q_target.tolist())])
    # A large batch: both logarithms in one call (log is elementwise, so the bits do not change).
    both = quat.log(np.concatenate([q, quat.mul(quat.conj(q), q_target)]))
    return both[:len(q)] + both[len(q):]


def servo_commands(q: np.ndarray, q_targets: Sequence[Sequence[float]]) -> np.ndarray:
    """:func:`servo_command` of the ball joints in the rows of ``q``, their targets given as plain floats."""
    if len(q) <= FLOAT_PATH_MAX_JOINTS:
        # What servo_command does for a few joints, without first packing the targets into an array.
        return np.array([servo_command_floats(a, b) for a, b in zip(q.tolist(), q_targets)])
    return servo_command(q, np.array(q_targets))


def servo_command_floats(q: Sequence[float], q_target: Sequence[float]) -> tuple[float, float, float]:
    """:func:`servo_command` of one ball joint on plain floats (the same operations, so the same bits)."""
    w, x, y, z = q
    r = quat.log_floats(q)
    e = quat.log_floats(quat.mul_floats((w, -x, -y, -z), q_target))
    return (r[0] + e[0], r[1] + e[1], r[2] + e[2])
