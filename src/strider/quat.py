"""The one quaternion library: unit quaternions in (w, x, y, z) order, as in MuJoCo.

Every function takes a single quaternion of shape (4,) or a batch of shape
(..., 4) (and vectors of shape (..., 3)) and broadcasts, so a controller
processes all its ball joints in one call and a clip processes every frame in
one call. Single quaternions, which dominate controller code, take scalar fast
paths (and ``*_floats`` variants on plain floats for chains of products) that
give the same bits as the batched formulas. Conversions to and from SciPy's
``Rotation`` (which stores x, y, z, w) are :func:`to_scipy` and
:func:`from_scipy`, the only places that reorder.

It depends on NumPy alone (SciPy only inside the conversions), so every layer
can use it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
SMALL_ANGLE = 1e-9
"""Below this (rad or sine of half-angle), log, exp and slerp take their small-angle limits to avoid 0/0."""

# The Hamilton product term by term: component k of a * b is the sum over n of
# _MUL_SIGNS[k, n] * a[i] * b[j], with 4 * i + j = _MUL_TERMS[k, n], in this order.
_MUL_TERMS = np.array([[0, 5, 10, 15], [1, 4, 11, 14], [2, 7, 8, 13], [3, 6, 9, 12]])
_MUL_SIGNS = np.array([[1.0, -1.0, -1.0, -1.0], [1.0, 1.0, 1.0, -1.0], [1.0, -1.0, 1.0, 1.0], [1.0, 1.0, -1.0, 1.0]])


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a * b: rotate by b, then by a."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim == 1 and b.ndim == 1:
        # Single quaternions dominate controller code; scalar arithmetic is ~10x faster than array ops here.
        return np.array(mul_floats(a.tolist(), b.tolist()))
    # Batches: all sixteen products a_i * b_j in one operation, each term of the product formula gathered
    # with its sign, and the four terms summed left to right, as the written-out formula above does
    # (x - y is x + (-y) exactly). Eight NumPy calls instead of some forty: a controller updates only a
    # handful of joints, so the per-call overhead, not the arithmetic, is the cost.
    products = a[..., :, None] * b[..., None, :]
    terms = np.take(products.reshape(products.shape[:-2] + (16,)), _MUL_TERMS, axis=-1)
    terms *= _MUL_SIGNS
    out = terms[..., 0] + terms[..., 1]
    out += terms[..., 2]
    out += terms[..., 3]
    return out


def mul_floats(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float, float]:
    """Product of two quaternions given as plain floats, for chains of products on one quaternion.

    The same operations in the same order as :func:`mul`, so the results agree bit for bit.
    """
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw)


def conj(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    if q.ndim == 1:
        # Negation is exact, so this equals the batched multiply by (1, -1, -1, -1), signed zeros included.
        w, x, y, z = q.tolist()
        return np.array([w, -x, -y, -z])
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def canonical(q: np.ndarray) -> np.ndarray:
    """The same rotation with w >= 0 (q and -q are one rotation)."""
    q = np.asarray(q, dtype=float)
    return np.where(q[..., :1] < 0, -q, q)


def normalize(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product of 3-vectors (batched on the last axis); much cheaper than ``np.cross`` for small inputs."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim == 1 and b.ndim == 1:
        a0, a1, a2 = a.tolist()
        b0, b1, b2 = b.tolist()
        return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vector(s) ``v`` by unit quaternion(s) ``q``."""
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    if q.ndim == 1 and v.ndim == 1:
        return np.array(rotate_floats(q.tolist(), v.tolist()))
    w = q[..., :1]
    u = q[..., 1:]
    t = 2.0 * cross(u, v)
    return v + w * t + cross(u, t)


def rotate_floats(q: Sequence[float], v: Sequence[float]) -> tuple[float, float, float]:
    """:func:`rotate` of one vector on plain floats: the batched formula, operation for operation."""
    w, ux, uy, uz = q
    vx, vy, vz = v
    tx, ty, tz = 2.0 * (uy * vz - uz * vy), 2.0 * (uz * vx - ux * vz), 2.0 * (ux * vy - uy * vx)
    return (vx + w * tx + (uy * tz - uz * ty), vy + w * ty + (uz * tx - ux * tz),
            vz + w * tz + (ux * ty - uy * tx))


def from_axis_angle(axis: np.ndarray, angle: np.ndarray | float) -> np.ndarray:
    axis = np.asarray(axis, dtype=float)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    half = 0.5 * np.asarray(angle, dtype=float)[..., None]
    return np.concatenate([np.cos(half), np.sin(half) * axis], axis=-1)


def about_z(angle: float) -> np.ndarray:
    return np.array(about_z_floats(angle))


def about_z_floats(angle: float) -> tuple[float, float, float, float]:
    """:func:`about_z` as plain floats, to feed :func:`mul_floats`."""
    return (math.cos(angle / 2), 0.0, 0.0, math.sin(angle / 2))


def about_y(angle: float) -> np.ndarray:
    return np.array(about_y_floats(angle))


def about_y_floats(angle: float) -> tuple[float, float, float, float]:
    return (math.cos(angle / 2), 0.0, math.sin(angle / 2), 0.0)


def about_x(angle: float) -> np.ndarray:
    return np.array(about_x_floats(angle))


def about_x_floats(angle: float) -> tuple[float, float, float, float]:
    return (math.cos(angle / 2), math.sin(angle / 2), 0.0, 0.0)


def conj_floats(q: Sequence[float]) -> tuple[float, float, float, float]:
    """:func:`conj` of one quaternion on plain floats (negation is exact: the same bits)."""
    w, x, y, z = q
    return (w, -x, -y, -z)


def log(q: np.ndarray) -> np.ndarray:
    """Rotation vector (axis * angle) of unit quaternion(s), taking the shorter way round."""
    q = np.asarray(q, dtype=float)
    if q.ndim == 1:
        return np.array(log_floats(q.tolist()))
    q = canonical(q)
    x, y, z = q[..., 1], q[..., 2], q[..., 3]
    # Written out rather than np.linalg.norm (same sum order, so the same bits) to save its overhead.
    s = np.sqrt(x * x + y * y + z * z)
    angle = 2.0 * np.arctan2(s, q[..., 0])
    # angle/s -> 2 as s -> 0; the series keeps the small-angle case exact to rounding.
    big = s > SMALL_ANGLE
    scale = np.where(big, angle / np.where(big, s, 1.0), 2.0)
    return q[..., 1:] * scale[..., None]


def log_floats(q: Sequence[float]) -> tuple[float, float, float]:
    """:func:`log` of one quaternion on plain floats (the same bits)."""
    w, x, y, z = q
    if w < 0:
        w, x, y, z = -w, -x, -y, -z
    s = math.sqrt(x * x + y * y + z * z)
    scale = 2.0 * math.atan2(s, w) / s if s > SMALL_ANGLE else 2.0
    return (x * scale, y * scale, z * scale)


def exp(r: np.ndarray) -> np.ndarray:
    """Unit quaternion(s) of rotation vector(s)."""
    r = np.asarray(r, dtype=float)
    angle = np.linalg.norm(r, axis=-1, keepdims=True)
    half = 0.5 * angle
    small = angle <= SMALL_ANGLE
    sinc = np.where(small, 0.5, np.sin(half) / np.where(small, 1.0, angle))
    return np.concatenate([np.cos(half), r * sinc], axis=-1)


def to_matrix(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    if q.ndim == 1:
        w, x, y, z = q.tolist()
        return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def from_matrix(m: np.ndarray) -> np.ndarray:
    """Unit quaternion(s), w >= 0, of rotation matrices (..., 3, 3): one matrix by Shepperd's method, batches
    through SciPy."""
    m = np.asarray(m, dtype=float)
    if m.ndim > 2:
        return from_scipy(_scipy_rotation().from_matrix(m.reshape(-1, 3, 3))).reshape(m.shape[:-2] + (4,))
    # On Python floats: np.trace sums the diagonal in this order and np.sqrt rounds as math.sqrt does,
    # so the result has the same bits as the array version at a fraction of the cost.
    (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = m.tolist()
    tr = m00 + m11 + m22
    if tr > 0:
        s = 2.0 * math.sqrt(tr + 1.0)
        q = [0.25 * s, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s]
    elif m00 > m11 and m00 > m22:
        s = 2.0 * math.sqrt(1.0 + m00 - m11 - m22)
        q = [(m21 - m12) / s, 0.25 * s, (m01 + m10) / s, (m02 + m20) / s]
    elif m11 > m22:
        s = 2.0 * math.sqrt(1.0 + m11 - m00 - m22)
        q = [(m02 - m20) / s, (m01 + m10) / s, 0.25 * s, (m12 + m21) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + m22 - m00 - m11)
        q = [(m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, 0.25 * s]
    q = np.array(q)
    return q if q[0] >= 0 else -q


def yaw(q: np.ndarray | Sequence[float]) -> float:
    """Heading angle of a body: the direction its x axis points, projected on the ground. Plain floats give the
    same bits as an array, faster."""
    w, x, y, z = q
    fx = 1 - 2 * (y * y + z * z)
    fy = 2 * (x * y + w * z)
    return float(np.arctan2(fy, fx))


def slerp(a: np.ndarray, b: np.ndarray, u: np.ndarray | float) -> np.ndarray:
    """Spherical interpolation from a (u = 0) to b (u = 1) along the shorter arc; ``u`` broadcasts against
    ``a.shape[:-1]``."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    u = np.asarray(u, dtype=float)
    dot = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(dot < 0, -b, b)
    theta = np.arccos(np.clip(np.abs(dot), -1.0, 1.0))
    sin_theta = np.sin(theta)
    small = sin_theta < SMALL_ANGLE
    safe = np.where(small, 1.0, sin_theta)
    u = u[..., None]
    wa = np.where(small, 1.0 - u, np.sin((1.0 - u) * theta) / safe)
    wb = np.where(small, u, np.sin(u * theta) / safe)
    return normalize(wa * a + wb * b)


def angle_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation angle (rad) taking a to b (accurate for tiny angles too, unlike an arccos of the dot product)."""
    d = mul(conj(a), b)
    return 2.0 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))


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
    """Angle (rad) of the twist part of q about ``axis`` (swing-twist decomposition), in [-pi, pi)."""
    q = np.asarray(q, dtype=float)
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    along = q[..., 1:] @ axis
    angle = 2.0 * np.arctan2(along, q[..., 0])
    return (angle + np.pi) % (2.0 * np.pi) - np.pi


def _scipy_rotation():
    from scipy.spatial.transform import Rotation  # imported on use: most callers never convert

    return Rotation


def to_scipy(q: np.ndarray):
    """SciPy ``Rotation`` of quaternions (for Euler angles and other conversions)."""
    q = np.asarray(q, dtype=float).reshape(-1, 4)
    return _scipy_rotation().from_quat(q[:, [1, 2, 3, 0]])


def from_scipy(r) -> np.ndarray:
    """Quaternions (n, 4), w >= 0, of a SciPy ``Rotation``."""
    q = np.atleast_2d(r.as_quat())
    return canonical(q[:, [3, 0, 1, 2]])


def wrap_angle(a: float) -> float:
    """Angle wrapped to [-pi, pi)."""
    return float((a + np.pi) % (2 * np.pi) - np.pi)


def wrap_angles(a: np.ndarray) -> np.ndarray:
    """Angles wrapped to [-pi, pi), elementwise."""
    return (np.asarray(a, dtype=float) + np.pi) % (2 * np.pi) - np.pi
