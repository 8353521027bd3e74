"""Analytic two-link inverse kinematics with a swing-plane twist (seed 000, Sec. 5.3.2).

The middle joint (knee or elbow) stays in the plane through the root and the
target that contains the ``bend`` direction; rotating that plane about the
root-target line by ``twist`` is the style parameter of the source. The triangle
itself (law of cosines) is :mod:`strider.motion.limb_triangle`, which the motion
layer's stance-foot correction shares.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from strider import quat
from strider.control.fastmath import clamp
from strider.motion.limb_triangle import limb_triangle


def two_link(root: np.ndarray, target: np.ndarray, upper: float, lower: float, bend: np.ndarray,
             twist: float = 0.0) -> tuple[np.ndarray, float]:
    """Middle-joint position and the interior bend angle (0 = straight) reaching ``target``.

    Targets out of reach are pulled in along the root-target line, so the limb
    straightens towards them instead of failing.
    """
    middle, angle = two_link_floats(np.asarray(root, dtype=float).tolist(), np.asarray(target, dtype=float).tolist(),
                                    upper, lower, np.asarray(bend, dtype=float).tolist(), twist)
    return np.array(middle), angle


def two_link_floats(root: Sequence[float], target: Sequence[float], upper: float, lower: float,
                    bend: Sequence[float], twist: float = 0.0) -> tuple[tuple[float, float, float], float]:
    """:func:`two_link` on plain floats: the array expressions' operations, in their order, without
    NumPy's per-call cost (a controller solves one leg per update)."""
    rx, ry, rz = root
    tx, ty, tz = target
    ax, ay, az = tx - rx, ty - ry, tz - rz
    dist = math.sqrt(ax * ax + ay * ay + az * az)
    if dist > 1e-9:
        ax, ay, az = ax / dist, ay / dist, az / dist
    else:
        ax, ay, az = 0.0, 0.0, -1.0
    triangle = limb_triangle(upper, lower, dist)
    bx, by, bz = bend
    along = bx * ax + by * ay + bz * az
    bx, by, bz = bx - ax * along, by - ay * along, bz - az * along
    n = math.sqrt(bx * bx + by * by + bz * bz)
    if n > 1e-9:
        bx, by, bz = bx / n, by / n, bz / n
    else:
        bx, by, bz = _any_perpendicular(np.array([ax, ay, az])).tolist()
    if twist:
        axis = np.array([ax, ay, az])
        bx, by, bz = quat.rotate(quat.from_axis_angle(axis, twist), np.array([bx, by, bz])).tolist()
    along, offset = triangle.along, triangle.offset
    middle = (rx + ax * along + bx * offset, ry + ay * along + by * offset, rz + az * along + bz * offset)
    return middle, float(triangle.bend)


def within_reach(root: np.ndarray, target: np.ndarray, reach: float) -> np.ndarray:
    """Bring a target within ``reach`` of ``root``, keeping its height where possible.

    Pulling an out-of-reach foothold in along the root-target line would also
    lower it, so a swing foot aimed far ahead would strike the ground early.
    Shortening the horizontal offset instead keeps the planned clearance.
    """
    target = np.asarray(target, dtype=float)
    out = within_reach_floats(np.asarray(root, dtype=float).tolist(), target.tolist(), reach)
    return target if out is None else np.array(out)


def within_reach_floats(root: Sequence[float], target: Sequence[float],
                        reach: float) -> tuple[float, float, float] | None:
    """:func:`within_reach` on plain floats; None when ``target`` is already within reach (keep it)."""
    rx, ry, rz = root
    ox, oy, oz = target[0] - rx, target[1] - ry, target[2] - rz
    if math.sqrt(ox * ox + oy * oy + oz * oz) <= reach:
        return None
    dz = clamp(oz, -reach, reach)
    h = math.sqrt(ox * ox + oy * oy)
    h_max = math.sqrt(max(reach * reach - dz * dz, 0.0))
    if h > 1e-9:
        ox, oy = ox * (h_max / h), oy * (h_max / h)
    return (rx + ox, ry + oy, rz + dz)


def reachable_share(base: tuple[float, float], extra: tuple[float, float], radius: float) -> float:
    """The largest s in [0, 1] with |base + s * extra| <= max(radius, |base|).

    Horizontal offsets from the limb's root: ``base`` is the part of a target
    that must be kept, ``extra`` the part that may be given up when the limb
    cannot reach both (for a foothold: balance first, speed tracking second).
    The extra part never takes the target out of reach, nor further out than
    ``base`` alone already is; where it brings the target closer it is kept.
    """
    bx, by = base
    ex, ey = extra
    a = ex * ex + ey * ey
    if a <= 1e-12:
        return 1.0
    c = min(bx * bx + by * by - radius * radius, 0.0)
    b = bx * ex + by * ey
    # a s^2 + 2 b s + c = 0 with c <= 0: the larger root is >= 0.
    s = (-b + math.sqrt(b * b - a * c)) / a
    return float(min(s, 1.0))


def _any_perpendicular(v: np.ndarray) -> np.ndarray:
    a = np.array([1.0, 0.0, 0.0]) if abs(v[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    p = quat.cross(v, a)
    return p / np.linalg.norm(p)


def segment_frame(direction: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Orthonormal frame (as rows: direction, hinge axis, their cross product) of a segment.

    ``direction`` is honoured exactly; ``axis`` is made perpendicular to it. A controller
    computes the frame of a segment's fixed local axes once and passes it to
    :func:`orient_frame` on every update.
    """
    # On Python floats, in the order the array expressions d / |d|, a - d (a . d), a / |a|, d x a take.
    dx, dy, dz = np.asarray(direction, dtype=float).tolist()
    ax, ay, az = np.asarray(axis, dtype=float).tolist()
    n = math.sqrt(dx * dx + dy * dy + dz * dz)
    dx, dy, dz = dx / n, dy / n, dz / n
    along = ax * dx + ay * dy + az * dz
    ax, ay, az = ax - dx * along, ay - dy * along, az - dz * along
    n = math.sqrt(ax * ax + ay * ay + az * az)
    ax, ay, az = ax / n, ay / n, az / n
    return np.array([[dx, dy, dz], [ax, ay, az], [dy * az - dz * ay, dz * ax - dx * az, dx * ay - dy * ax]])


def orient_frame(local_frame: np.ndarray, direction: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """World orientation taking a segment whose local axes have ``local_frame`` onto ``direction``/``axis``."""
    return quat.from_matrix(segment_frame(direction, axis).T @ local_frame)


def orient_segment(direction_local: np.ndarray, axis_local: np.ndarray, direction: np.ndarray,
                   axis: np.ndarray) -> np.ndarray:
    """World orientation taking a segment's local long axis and hinge axis onto world ones.

    ``direction`` is honoured exactly; ``axis`` is made perpendicular to it.
    """
    return orient_frame(segment_frame(direction_local, axis_local), direction, axis)


def universal_angles(relative: np.ndarray, first_sign: float = 1.0) -> tuple[float, float]:
    """Angles (about x, then about y) of a universal joint best matching a relative rotation.

    ``first_sign`` is -1 when the joint's first axis is -x (the right ankle).
    Solves R = Rx(a) Ry(b) from the matrix entries that determine it.
    """
    # On plain floats: the three entries of quat.to_matrix(relative) the angles need, computed as it computes them.
    w, x, y, z = np.asarray(relative, dtype=float).tolist() if isinstance(relative, np.ndarray) else relative
    r02, r12, r22 = 2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)
    # np.arcsin/np.arctan2 rather than math's: numpy's own implementations round differently.
    b = float(np.arcsin(clamp(r02, -1.0, 1.0)))
    a = float(np.arctan2(-r12, r22))
    return first_sign * a, b
