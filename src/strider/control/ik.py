"""Analytic two-link inverse kinematics with a swing-plane twist (seed 000, Sec. 5.3.2).

The middle joint (knee or elbow) stays in the plane through the root and the
target that contains the ``bend`` direction; rotating that plane about the
root-target line by ``twist`` is the style parameter of the source.
"""

from __future__ import annotations

import numpy as np

from strider.control import quat


def two_link(root: np.ndarray, target: np.ndarray, upper: float, lower: float, bend: np.ndarray,
             twist: float = 0.0) -> tuple[np.ndarray, float]:
    """Middle-joint position and the interior bend angle (0 = straight) reaching ``target``.

    Targets out of reach are pulled in along the root-target line, so the limb
    straightens towards them instead of failing.
    """
    root, target = np.asarray(root, dtype=float), np.asarray(target, dtype=float)
    axis = target - root
    dist = float(np.linalg.norm(axis))
    axis = axis / dist if dist > 1e-9 else np.array([0.0, 0.0, -1.0])
    reach = min(max(dist, abs(upper - lower) + 1e-6), upper + lower - 1e-6)
    # Law of cosines: distance along the axis to the middle joint's projection, and its offset.
    along = (upper**2 - lower**2 + reach**2) / (2 * reach)
    offset = np.sqrt(max(upper**2 - along**2, 0.0))
    bend = np.asarray(bend, dtype=float)
    bend = bend - axis * np.dot(bend, axis)
    n = np.linalg.norm(bend)
    bend = bend / n if n > 1e-9 else _any_perpendicular(axis)
    if twist:
        bend = quat.rotate(quat.from_axis_angle(axis, twist), bend)
    middle = root + axis * along + bend * offset
    cos_inner = (upper**2 + lower**2 - reach**2) / (2 * upper * lower)
    return middle, float(np.pi - np.arccos(np.clip(cos_inner, -1.0, 1.0)))


def within_reach(root: np.ndarray, target: np.ndarray, reach: float) -> np.ndarray:
    """Bring a target within ``reach`` of ``root``, keeping its height where possible.

    Pulling an out-of-reach foothold in along the root-target line would also
    lower it, so a swing foot aimed far ahead would strike the ground early.
    Shortening the horizontal offset instead keeps the planned clearance.
    """
    root, target = np.asarray(root, dtype=float), np.asarray(target, dtype=float)
    offset = target - root
    if float(np.linalg.norm(offset)) <= reach:
        return target
    dz = float(np.clip(offset[2], -reach, reach))
    horizontal = offset[:2]
    h = float(np.linalg.norm(horizontal))
    h_max = float(np.sqrt(max(reach * reach - dz * dz, 0.0)))
    if h > 1e-9:
        horizontal = horizontal * (h_max / h)
    return root + np.array([horizontal[0], horizontal[1], dz])


def _any_perpendicular(v: np.ndarray) -> np.ndarray:
    a = np.array([1.0, 0.0, 0.0]) if abs(v[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    p = quat.cross(v, a)
    return p / np.linalg.norm(p)


def orient_segment(direction_local: np.ndarray, axis_local: np.ndarray, direction: np.ndarray,
                   axis: np.ndarray) -> np.ndarray:
    """World orientation taking a segment's local long axis and hinge axis onto world ones.

    ``direction`` is honoured exactly; ``axis`` is made perpendicular to it.
    """
    def frame(d, a):
        d = d / np.linalg.norm(d)
        a = a - d * np.dot(a, d)
        a = a / np.linalg.norm(a)
        return np.column_stack([d, a, quat.cross(d, a)])

    rot = frame(np.asarray(direction, float), np.asarray(axis, float)) @ \
        frame(np.asarray(direction_local, float), np.asarray(axis_local, float)).T
    return quat.from_matrix(rot)


def universal_angles(relative: np.ndarray, first_sign: float = 1.0) -> tuple[float, float]:
    """Angles (about x, then about y) of a universal joint best matching a relative rotation.

    ``first_sign`` is -1 when the joint's first axis is -x (the right ankle).
    Solves R = Rx(a) Ry(b) from the matrix entries that determine it.
    """
    r = quat.to_matrix(relative)
    b = float(np.arcsin(np.clip(r[0, 2], -1.0, 1.0)))
    a = float(np.arctan2(-r[1, 2], r[2, 2]))
    return first_sign * a, b
