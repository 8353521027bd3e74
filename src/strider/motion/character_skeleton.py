"""A strider character as a motion skeleton, and its joint coordinates as clip rotations (and back).

The skeleton has one joint per body, at the body's joint centre (the root at
the pelvis's frame origin), and an end site beyond each leaf body (at the far
side of its centre of mass from its joint). Its rest pose is the character's
zero pose, so a clip of it holds each body's rotation relative to its parent,
which is exactly what the character's joints produce:

- a ball joint: that quaternion;
- a hinge: the rotation about its axis by its angle (from any rotation, the
  twist about the axis, i.e. the projection onto the hinge);
- the two-hinge (universal) ankle: R = R(a0, q0) R(a1, q1), with the angles
  taken so that the axis normal to both hinges (the sole's normal) comes out
  exactly, dropping the twist about it that the ankle cannot make.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from strider import quat
from strider.characters.spec import CharacterSpec, JointSpec
from strider.motion.bvh import SITE_SUFFIX
from strider.motion.skeleton import Skeleton

SITE_REACH = 2.0
"""End sites sit this many times the joint-to-centre-of-mass distance from a leaf body's joint."""


def joint_centre(spec: CharacterSpec, body: str) -> np.ndarray:
    """The body's own joint centre in its frame (the origin for the root)."""
    b = spec.body(body)
    return np.zeros(3) if b.joint is None else np.asarray(b.joint.anchor_child, dtype=float)


def character_skeleton(spec: CharacterSpec) -> Skeleton:
    children: dict[str, list[str]] = {}
    for b in spec.bodies:
        if b.parent is not None:
            children.setdefault(b.parent, []).append(b.name)
    names, parents, offsets, sites = [], [], [], []
    stack = [(spec.bodies[0].name, -1)]
    while stack:
        body, parent = stack.pop()
        b = spec.body(body)
        index = len(names)
        names.append(body)
        parents.append(parent)
        sites.append(False)
        offsets.append(np.zeros(3) if b.joint is None else
                       np.subtract(b.joint.anchor_parent, joint_centre(spec, b.parent)))
        kids = children.get(body, [])
        if not kids:
            names.append(body + SITE_SUFFIX)
            parents.append(index)
            sites.append(True)
            offsets.append(-SITE_REACH * joint_centre(spec, body))
        stack.extend((k, index) for k in reversed(kids))
    return Skeleton(tuple(names), tuple(parents), np.array(offsets), tuple(sites))


def _universal_basis(joint: JointSpec) -> np.ndarray:
    e0 = np.asarray(joint.axes[0], dtype=float)
    e1 = np.asarray(joint.axes[1], dtype=float)
    e0, e1 = e0 / np.linalg.norm(e0), e1 / np.linalg.norm(e1)
    if abs(e0 @ e1) > 1e-9:
        raise ValueError(f"joint {joint.name}: a universal joint's two axes must be perpendicular")
    return np.stack([e0, e1, np.cross(e0, e1)], axis=1)


def coordinates_from_rotation(joint: JointSpec, q: np.ndarray) -> np.ndarray:
    """Joint coordinates (T, 4 | 1 | 2) nearest to local rotations q (T, 4)."""
    if joint.kind == "ball":
        return quat.canonical(q)
    if joint.kind == "hinge":
        return quat.twist_angle(q, joint.axes[0])[:, None]
    basis = _universal_basis(joint)
    normal = quat.rotate(q, basis[:, 2]) @ basis          # the sole normal, in the hinge basis
    second = np.arcsin(np.clip(normal[:, 0], -1.0, 1.0))
    first = np.arctan2(-normal[:, 1], normal[:, 2])
    return np.stack([first, second], axis=1)


def rotation_from_coordinates(joint: JointSpec, coords: np.ndarray) -> np.ndarray:
    """Local rotations (T, 4) that joint coordinates (T, k) produce."""
    coords = np.asarray(coords, dtype=float)
    if joint.kind == "ball":
        return quat.normalize(coords)
    if joint.kind == "hinge":
        return quat.from_axis_angle(joint.axes[0], coords[:, 0])
    return quat.mul(quat.from_axis_angle(joint.axes[0], coords[:, 0]),
                        quat.from_axis_angle(joint.axes[1], coords[:, 1]))


def local_rotations(spec: CharacterSpec, coords: Mapping[str, np.ndarray], frames: int) -> dict[str, np.ndarray]:
    """Body name -> rotation relative to its parent, from joint coordinates (missing joints stay at zero)."""
    out = {}
    for b in spec.bodies:
        if b.joint is None:
            continue
        if b.joint.name in coords:
            out[b.name] = rotation_from_coordinates(b.joint, coords[b.joint.name])
        else:
            out[b.name] = np.broadcast_to(quat.IDENTITY, (frames, 4)).copy()
    return out
