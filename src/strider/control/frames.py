"""The character frame (seed 000, Sec. 5.3.1): z up, x along the character's facing direction.

Many GBWC targets (waist, back, neck, ankles, foot placement) are expressed in
this heading-aligned frame so that they do not change as the body tilts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from strider import quat


@dataclass(frozen=True)
class CharacterFrame:
    """A heading-aligned frame at ``origin`` rotated by ``heading`` about z."""

    heading: float
    origin: np.ndarray
    # cos and sin of the heading, computed once: a controller maps many vectors through one frame.
    _cos: float = field(init=False, repr=False, compare=False)
    _sin: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_cos", float(np.cos(self.heading)))
        object.__setattr__(self, "_sin", float(np.sin(self.heading)))

    @staticmethod
    def of(root_quat: np.ndarray, origin: np.ndarray) -> CharacterFrame:
        return CharacterFrame(quat.yaw(root_quat), np.asarray(origin, dtype=float))

    @property
    def quat(self) -> np.ndarray:
        return quat.about_z(self.heading)

    @property
    def forward(self) -> np.ndarray:
        return np.array([self._cos, self._sin, 0.0])

    @property
    def forward_floats(self) -> tuple[float, float, float]:
        return (self._cos, self._sin, 0.0)

    @property
    def left(self) -> np.ndarray:
        return np.array([-self._sin, self._cos, 0.0])

    def to_local(self, v: np.ndarray) -> np.ndarray:
        """A world-frame vector in this frame's axes (a direction, no origin shift)."""
        return np.array(self.to_local_floats(v.tolist() if isinstance(v, np.ndarray) else v))

    def to_world(self, v: np.ndarray) -> np.ndarray:
        return np.array(self.to_world_floats(v.tolist() if isinstance(v, np.ndarray) else v))

    # The same maps on plain floats, for controllers that keep a tick's few 3-vectors out of NumPy.
    def to_local_floats(self, v: Sequence[float]) -> tuple[float, float, float]:
        c, s = self._cos, self._sin
        x, y, z = v
        return (c * x + s * y, -s * x + c * y, z)

    def to_world_floats(self, v: Sequence[float]) -> tuple[float, float, float]:
        c, s = self._cos, self._sin
        x, y, z = v
        return (c * x - s * y, s * x + c * y, z)

    def point_to_world(self, p: np.ndarray) -> np.ndarray:
        return self.origin + self.to_world(p)

    def point_to_local(self, p: np.ndarray) -> np.ndarray:
        """A world point in this frame (shifted to its origin, then turned)."""
        return self.to_local(np.asarray(p, dtype=float) - self.origin)

    def orientation_to_local(self, q: np.ndarray) -> np.ndarray:
        """A world orientation relative to this frame."""
        return quat.mul(quat.conj(self.quat), q)
