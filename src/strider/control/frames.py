"""The character frame (seed 000, Sec. 5.3.1): z up, x along the character's facing direction.

Many GBWC targets (waist, back, neck, ankles, foot placement) are expressed in
this heading-aligned frame so that they do not change as the body tilts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider.control import quat


@dataclass(frozen=True)
class CharacterFrame:
    """A heading-aligned frame at ``origin`` rotated by ``heading`` about z."""

    heading: float
    origin: np.ndarray

    @staticmethod
    def of(root_quat: np.ndarray, origin: np.ndarray) -> CharacterFrame:
        return CharacterFrame(quat.yaw(root_quat), np.asarray(origin, dtype=float))

    @property
    def quat(self) -> np.ndarray:
        return quat.about_z(self.heading)

    @property
    def forward(self) -> np.ndarray:
        return np.array([np.cos(self.heading), np.sin(self.heading), 0.0])

    @property
    def left(self) -> np.ndarray:
        return np.array([-np.sin(self.heading), np.cos(self.heading), 0.0])

    def to_local(self, v: np.ndarray) -> np.ndarray:
        """A world-frame vector in this frame's axes (a direction, no origin shift)."""
        c, s = np.cos(self.heading), np.sin(self.heading)
        return np.array([c * v[0] + s * v[1], -s * v[0] + c * v[1], v[2]])

    def to_world(self, v: np.ndarray) -> np.ndarray:
        c, s = np.cos(self.heading), np.sin(self.heading)
        return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])

    def point_to_world(self, p: np.ndarray) -> np.ndarray:
        return self.origin + self.to_world(p)
