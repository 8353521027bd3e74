"""Vectorized unit-quaternion helpers in strider's (w, x, y, z) order.

Every function takes arrays of shape (..., 4) (and (..., 3) for vectors) and
broadcasts, so a whole clip is processed in one call. Conversions to and from
Euler angles go through ``scipy.spatial.transform.Rotation``, which stores
(x, y, z, w); :func:`to_scipy` and :func:`from_scipy` are the only places that
reorder.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
SMALL_ANGLE = 1e-9
"""Below this (rad), slerp falls back to normalized linear interpolation to avoid 0/0."""


def to_scipy(q: np.ndarray) -> Rotation:
    q = np.asarray(q, dtype=float).reshape(-1, 4)
    return Rotation.from_quat(q[:, [1, 2, 3, 0]])


def from_scipy(r: Rotation) -> np.ndarray:
    q = np.atleast_2d(r.as_quat())
    return canonical(q[:, [3, 0, 1, 2]])


def canonical(q: np.ndarray) -> np.ndarray:
    """The same rotation with w >= 0 (q and -q are one rotation)."""
    q = np.asarray(q, dtype=float)
    return np.where(q[..., :1] < 0, -q, q)


def normalize(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a ⊗ b: rotate by b, then by a."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a, dtype=float), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, dtype=float), -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def conjugate(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors v by unit quaternions q."""
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    w, u = q[..., :1], q[..., 1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def from_axis_angle(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    axis = np.asarray(axis, dtype=float)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    half = 0.5 * np.asarray(angle, dtype=float)[..., None]
    return np.concatenate([np.cos(half), np.sin(half) * axis], axis=-1)


def log(q: np.ndarray) -> np.ndarray:
    """Rotation vectors (axis times angle, rad) of unit quaternions, angle in [0, pi]."""
    q = canonical(q)
    s = np.linalg.norm(q[..., 1:], axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    scale = np.where(s > SMALL_ANGLE, angle / np.maximum(s, SMALL_ANGLE), 2.0)
    return q[..., 1:] * scale


def exp(v: np.ndarray) -> np.ndarray:
    """Unit quaternions of rotation vectors."""
    v = np.asarray(v, dtype=float)
    angle = np.linalg.norm(v, axis=-1, keepdims=True)
    half = 0.5 * angle
    scale = np.where(angle > SMALL_ANGLE, np.sin(half) / np.maximum(angle, SMALL_ANGLE), 0.5)
    return np.concatenate([np.cos(half), v * scale], axis=-1)


def angle_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation angle (rad) taking a to b (accurate for tiny angles too, unlike an arccos of the dot product)."""
    d = multiply(conjugate(a), b)
    return 2.0 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))


def slerp(a: np.ndarray, b: np.ndarray, u: np.ndarray | float) -> np.ndarray:
    """Spherical interpolation from a (u = 0) to b (u = 1) along the shorter arc.

    ``u`` broadcasts against ``a.shape[:-1]``.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    u = np.asarray(u, dtype=float)
    dot = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(dot < 0, -b, b)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin_theta = np.sin(theta)
    small = sin_theta < SMALL_ANGLE
    safe = np.where(small, 1.0, sin_theta)
    u = u[..., None]
    wa = np.where(small, 1.0 - u, np.sin((1.0 - u) * theta) / safe)
    wb = np.where(small, u, np.sin(u * theta) / safe)
    return normalize(wa * a + wb * b)


def between_vectors(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The smallest rotation taking direction a onto direction b."""
    a = np.asarray(a, dtype=float) / np.linalg.norm(a, axis=-1, keepdims=True)
    b = np.asarray(b, dtype=float) / np.linalg.norm(b, axis=-1, keepdims=True)
    w = 1.0 + np.sum(a * b, axis=-1, keepdims=True)
    v = np.cross(a, b)
    opposite = (w < 1e-12)[..., 0]
    if np.any(opposite):
        # 180 degrees: any axis perpendicular to a will do.
        helper = np.where(np.abs(a[..., :1]) < 0.9, np.array([1.0, 0, 0]), np.array([0, 1.0, 0]))
        perp = np.cross(a, helper)
        v = np.where(opposite[..., None], perp, v)
        w = np.where(opposite[..., None], 0.0, w)
    return normalize(np.concatenate([w, v], axis=-1))


def twist_angle(q: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Angle (rad) of the twist part of q about ``axis`` (swing-twist decomposition)."""
    q = np.asarray(q, dtype=float)
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    along = q[..., 1:] @ axis
    angle = 2.0 * np.arctan2(along, q[..., 0])
    return (angle + np.pi) % (2.0 * np.pi) - np.pi


def matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of unit quaternions."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1),
    ], axis=-2)


def from_matrix(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=float)
    out = from_scipy(Rotation.from_matrix(m.reshape(-1, 3, 3)))
    return out.reshape(m.shape[:-2] + (4,))
