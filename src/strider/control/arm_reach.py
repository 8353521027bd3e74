"""Reaching with an arm: its geometry read from the character spec, and the analytic two-link IK that puts the
hand on a point (seed 000, Sec. 5.5.4: "inverse kinematics provides required joint angles, which are then
tracked using low-gain PD-controllers and augmented by the gravity-compensation torques").

The arm is the leg's chain turned to the shoulder: a ball joint, a hinge, and the hand as the far end of the
lower arm (the hands are not animated, Sec. 5.5.4). The elbow stays in the plane through the shoulder and the
hand that contains the caller's ``bend`` direction, as the knee does (:mod:`strider.control.ik`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider import quat
from strider.characters.spec import CharacterSpec
from strider.control.ik import orient_frame, segment_frame, two_link_floats


@dataclass(frozen=True)
class ArmGeometry:
    """Lengths and rest directions of one arm, read from the character spec (frames as in ``LegGeometry``)."""

    upper: float
    lower: float               # elbow to the hand point
    upper_dir: np.ndarray      # shoulder -> elbow in the upper arm's frame (unit)
    lower_dir: np.ndarray      # elbow -> hand in the lower arm's frame (unit)
    elbow_axis: np.ndarray     # the elbow hinge's axis (the upper and lower arm frames agree at a zero angle)
    hand: np.ndarray           # the hand point in the lower arm's frame: the centre of its far end
    upper_body: str
    lower_body: str

    @staticmethod
    def of(spec: CharacterSpec, side: str) -> ArmGeometry:
        arm = spec.roles.arms[side]
        lower = next(b for b in spec.bodies if b.joint is not None and b.joint.name == arm.elbow)
        upper = spec.body(lower.parent)
        elbow = np.asarray(lower.joint.anchor_child, dtype=float)
        ends = [np.asarray(p, dtype=float) for g in lower.geoms for p in (g.start, g.end)]
        hand = max(ends, key=lambda p: float(np.linalg.norm(p - elbow)))
        shoulder_to_elbow = np.subtract(lower.joint.anchor_parent, upper.joint.anchor_child)
        elbow_to_hand = hand - elbow
        return ArmGeometry(upper=float(np.linalg.norm(shoulder_to_elbow)), lower=float(np.linalg.norm(elbow_to_hand)),
                           upper_dir=shoulder_to_elbow / np.linalg.norm(shoulder_to_elbow),
                           lower_dir=elbow_to_hand / np.linalg.norm(elbow_to_hand),
                           elbow_axis=np.asarray(lower.joint.axes[0], dtype=float), hand=hand,
                           upper_body=upper.name, lower_body=lower.name)

    @property
    def reach(self) -> float:
        return self.upper + self.lower


def arm_reach_targets(arm: ArmGeometry, shoulder, target, bend, parent_q) -> tuple[np.ndarray, float]:
    """Joint targets putting the hand on ``target`` (world): the shoulder's rotation relative to its parent body
    (whose world orientation is ``parent_q``) and the elbow's hinge angle. ``bend`` (world) is the way the elbow
    points. A target out of reach straightens the arm towards it.

    The elbow's hinge turns the lower arm by minus the interior bend about the elbow axis; with the hand on the
    far side of the bend, that axis is (shoulder -> hand) x bend, normalised.
    """
    shoulder = np.asarray(shoulder, dtype=float).tolist()
    target = np.asarray(target, dtype=float).tolist()
    elbow, interior = two_link_floats(shoulder, target, arm.upper, arm.lower, np.asarray(bend, dtype=float).tolist())
    to_hand = np.subtract(target, shoulder)
    axis = quat.cross(to_hand / max(float(np.linalg.norm(to_hand)), 1e-9), np.asarray(bend, dtype=float))
    norm = float(np.linalg.norm(axis))
    if norm < 1e-9:   # the bend lies along the arm: any axis across it serves
        axis = quat.cross(np.asarray(to_hand), np.array([0.0, 0.0, 1.0]))
        norm = float(np.linalg.norm(axis)) or 1.0
    axis = axis / norm
    upper_q = orient_frame(segment_frame(arm.upper_dir, arm.elbow_axis), np.subtract(elbow, shoulder), axis)
    relative = quat.mul(quat.conj(np.asarray(parent_q, dtype=float)), upper_q)
    return relative, -float(interior)


def hand_point_world(arm: ArmGeometry, lower_position, lower_q) -> np.ndarray:
    """Where the hand point is, given the lower arm body's world position and orientation."""
    return np.asarray(lower_position, dtype=float) + quat.rotate(np.asarray(lower_q, dtype=float), arm.hand)
