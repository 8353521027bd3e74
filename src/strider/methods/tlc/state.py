"""The state a task-level policy sees at a foot strike, and the distance between two such states
(Coros 2010, Sec. 4.4.1, Table 4.1).

s = (v, ω0, q1, ω1, ..., qn, ωn): the centre of mass's velocity and the pelvis' angular velocity in the
character frame (x facing, z up), then each tracked joint's relative rotation (child body in its parent's
frame) and relative angular velocity. The joints are named by role: the pelvis-torso link, then the stance
and swing hips and knees. A state with the right foot in stance is mirrored through the sagittal plane, so
the left and right halves of the gait share one set of states (the character is left-right symmetric).

    d(a, b) = w_v |Δv| + Σ_i w_ωi |Δω_i| + Σ_{i>=1} w_qi angle(q_i,a, q_i,b)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider import quat

LINKS = ("torso", "stance_hip", "swing_hip", "stance_knee", "swing_knee")


@dataclass(frozen=True)
class DistanceWeights:
    """Table 4.1's humanoid row (Coros 2010): (w_ω, w_q) per link; other joints weigh 0."""

    velocity: float = 1.0            # w_v: not in the thesis (decision: 1)
    root_rate: float = 1.0           # w_ω0: not in the thesis (decision: 1)
    torso: tuple[float, float] = (1.0, 1.5)    # pelvis-torso
    hip: tuple[float, float] = (0.5, 1.5)
    knee: tuple[float, float] = (0.2, 1.0)

    def per_link(self) -> tuple[np.ndarray, np.ndarray]:
        """(w_ω, w_q) in :data:`LINKS` order."""
        pairs = (self.torso, self.hip, self.hip, self.knee, self.knee)
        return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


# A reflection through the sagittal (x-z) plane flips y of a vector and x, z of an axial vector (a rotation's
# axis, an angular velocity).
_MIRROR_VECTOR = np.array([1.0, -1.0, 1.0])
_MIRROR_AXIAL = np.array([-1.0, 1.0, -1.0])
_MIRROR_QUAT = np.array([1.0, -1.0, 1.0, -1.0])


@dataclass(frozen=True)
class StrikeStates:
    """Many states at once: ``velocity`` (n, 3), ``root_rate`` (n, 3), ``rotations`` (n, links, 4) and
    ``rates`` (n, links, 3), all in the stance-left frame."""

    velocity: np.ndarray
    root_rate: np.ndarray
    rotations: np.ndarray
    rates: np.ndarray

    def __len__(self) -> int:
        return len(self.velocity)

    def packed(self) -> np.ndarray:
        """One row of floats per state (for storing)."""
        n = len(self)
        return np.concatenate([self.velocity, self.root_rate, self.rotations.reshape(n, -1),
                               self.rates.reshape(n, -1)], axis=1)

    @staticmethod
    def unpacked(rows: np.ndarray) -> StrikeStates:
        rows = np.atleast_2d(np.asarray(rows, dtype=float))
        n, links = len(rows), len(LINKS)
        rot_end = 6 + 4 * links
        return StrikeStates(rows[:, 0:3], rows[:, 3:6], rows[:, 6:rot_end].reshape(n, links, 4),
                            rows[:, rot_end:].reshape(n, links, 3))

    def row(self, i: int) -> StrikeStates:
        return StrikeStates(self.velocity[i:i + 1], self.root_rate[i:i + 1], self.rotations[i:i + 1],
                            self.rates[i:i + 1])


PACKED_WIDTH = 6 + 7 * len(LINKS)


def distances(state: StrikeStates, others: StrikeStates, weights: DistanceWeights) -> np.ndarray:
    """d(state, each of ``others``) for one ``state`` (a one-row :class:`StrikeStates`)."""
    w_rate, w_rot = weights.per_link()
    d = weights.velocity * np.linalg.norm(others.velocity - state.velocity, axis=1)
    d += weights.root_rate * np.linalg.norm(others.root_rate - state.root_rate, axis=1)
    d += np.linalg.norm(others.rates - state.rates, axis=2) @ w_rate
    d += quat.angle_between(state.rotations, others.rotations) @ w_rot
    return d


class StateReader:
    """Reads :class:`StrikeStates` off a 3-D character (bound once: body names by role)."""

    def __init__(self, character):
        roles = character.spec.roles
        self.character = character
        self.root = roles.root
        legs = roles.legs
        self._pairs = {side: ((roles.root, roles.torso),
                              (roles.root, legs[side].upper), (roles.root, legs[other].upper),
                              (legs[side].upper, legs[side].lower), (legs[other].upper, legs[other].lower))
                       for side, other in (("left", "right"), ("right", "left"))}

    def read(self, stance: str, heading: float) -> StrikeStates:
        """The state now, ``stance`` being the stance side and ``heading`` the character frame's facing."""
        ch = self.character
        to_frame = quat.about_z(-heading)
        velocity = quat.rotate(to_frame, ch.com_velocity())
        root_rate = quat.rotate(to_frame, ch.body_angular_velocity(self.root))
        rotations, rates = [], []
        for parent, child in self._pairs[stance]:
            qp, qc = ch.body_quat(parent), ch.body_quat(child)
            rotations.append(quat.canonical(quat.mul(quat.conj(qp), qc)))
            relative = ch.body_angular_velocity(child) - ch.body_angular_velocity(parent)
            rates.append(quat.rotate(quat.conj(qp), relative))
        rotations, rates = np.array(rotations), np.array(rates)
        if stance == "right":
            velocity, root_rate = velocity * _MIRROR_VECTOR, root_rate * _MIRROR_AXIAL
            rotations, rates = rotations * _MIRROR_QUAT, rates * _MIRROR_AXIAL
        return StrikeStates(velocity[None], root_rate[None], rotations[None], rates[None])
