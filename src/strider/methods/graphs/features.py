"""What a control fragment sees and is scored on: one readout of the character, the 18-D feature vector of
Liu et al. 2015 (Sec. 4) and the quantities of the SAMCON cost, all in facing frames.

The facing frame (control-graphs.md Sec. 4, "Facing frame") turns with the root's yaw q_yaw =
normalize(w, 0, 0, z) of the root quaternion and sits at the root's ground projection: x forward, y left,
z up. A feature vector is

    s = (q0* (2), h0, c (3), ċ (3), d_l (3), d_r (3), L (3))

with q0* the horizontal components of log(q_yaw⁻¹ ⊗ q0), h0 the root height, c and ċ the centre of mass
and its velocity, d the vectors from the centre of mass to each foot's centre (its ankle body's centre of
mass) and L the angular momentum about the centre of mass, in SI units, unnormalized.

:func:`mirror_features` reflects a feature vector through the sagittal plane (control-graphs.md Sec. 4,
"Mirroring"): polar vectors negate y, axial vectors negate x and z, and the feet swap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider import quat
from strider.control.frames import CharacterFrame
from strider.sim.character import Character
from strider.sim.dynamics import Dynamics

FEATURES = 18
FOOT_BODIES = ("left_ankle", "right_ankle")
EFFECTOR_BODIES = ("left_ankle", "right_ankle", "left_elbow", "right_elbow")
"""Bodies whose heights time the contacts (E_e): the feet and the forearms, which carry the merged hands."""


def facing_yaw(root_quat: np.ndarray) -> float:
    """The yaw of normalize(w, 0, 0, z) of a root quaternion (control-graphs.md Sec. 4)."""
    return float(2.0 * np.arctan2(root_quat[3], root_quat[0]))


@dataclass(frozen=True)
class Readout:
    """One look at the character (world frame), everything the features and the cost need."""

    root_pos: np.ndarray
    root_quat: np.ndarray
    com: np.ndarray
    com_velocity: np.ndarray
    angular_momentum: np.ndarray
    feet: np.ndarray          # (2, 3): left, right foot centres
    effectors: np.ndarray     # (4, 3): EFFECTOR_BODIES
    joints: dict              # joint name -> coordinates (quaternion or angle)

    @property
    def facing(self) -> CharacterFrame:
        """The facing frame: turned by the root's yaw, at the root's ground projection."""
        return CharacterFrame(facing_yaw(self.root_quat), np.array([self.root_pos[0], self.root_pos[1], 0.0]))


def read(character: Character, dynamics: Dynamics) -> Readout:
    """The character's readout in the world's current (forwarded) state."""
    momentum = dynamics.momentum(character.root_body)
    pos, q = character.root_pose()
    return Readout(pos, q, momentum.com, momentum.linear / momentum.mass, momentum.angular,
                   np.array([character.body_position(b) for b in FOOT_BODIES]),
                   np.array([character.body_position(b) for b in EFFECTOR_BODIES]),
                   character.joint_coordinates())


def features(r: Readout) -> np.ndarray:
    """The 18-D state s of Liu et al. 2015, Sec. 4, in the readout's own facing frame."""
    frame = r.facing
    tilt = quat.log(frame.orientation_to_local(r.root_quat))[:2]
    return np.concatenate([tilt, [r.root_pos[2]], frame.point_to_local(r.com), frame.to_local(r.com_velocity),
                           frame.to_local(r.feet[0] - r.com), frame.to_local(r.feet[1] - r.com),
                           frame.to_local(r.angular_momentum)])


# Sign flips of the mirror image: polar vectors (c, ċ, d) negate y; axial ones (q0*, L) negate x and z.
_POLAR, _AXIAL = np.array([1.0, -1.0, 1.0]), np.array([-1.0, 1.0, -1.0])
_MIRROR_SIGNS = np.concatenate([_AXIAL[:2], [1.0], _POLAR, _POLAR, _POLAR, _POLAR, _AXIAL])
_MIRROR_ORDER = np.concatenate([np.arange(9), np.arange(12, 15), np.arange(9, 12), np.arange(15, 18)])


def mirror_features(s: np.ndarray) -> np.ndarray:
    """Feature vector(s) (..., 18) of the mirror image: left and right feet swap, signs as the vectors' kind."""
    return np.asarray(s)[..., _MIRROR_ORDER] * _MIRROR_SIGNS
