"""``CharacterMotion``: a motion in a strider character's own coordinates, ready to pose a simulated world.

Per frame it holds the root (pelvis) position and orientation and every
joint's coordinates as the character's joints take them: a quaternion for a
ball joint, an angle for a hinge, two angles for the universal ankle. This is
what retargeting produces and what tracking controllers consume; it converts
to a :class:`~strider.motion.clip.Clip` of the character's skeleton for forward
kinematics and BVH export, and back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from strider import quat
from strider.characters.spec import CharacterSpec
from strider.motion.character_skeleton import (
    character_skeleton,
    coordinates_from_rotation,
    joint_centre,
    local_rotations,
)
from strider.motion.clip import Clip


@dataclass(frozen=True, eq=False)
class CharacterMotion:
    spec: CharacterSpec
    fps: float
    root_pos: np.ndarray               # (T, 3) pelvis frame origin, m, world
    root_quat: np.ndarray              # (T, 4) pelvis orientation, world
    coords: Mapping[str, np.ndarray]   # joint name -> (T, 4 | 1 | 2)
    loop: bool = False
    name: str = ""

    @property
    def n_frames(self) -> int:
        return len(self.root_pos)

    @property
    def duration(self) -> float:
        return (self.n_frames - 1) / self.fps

    def frame(self, i: int) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """(root position, root orientation, joint coordinates) of frame i."""
        return self.root_pos[i], self.root_quat[i], {k: v[i] for k, v in self.coords.items()}

    def apply(self, world, i: int, character: str | None = None) -> None:
        """Put a character of ``world`` in frame i's pose, at rest, with derived quantities updated."""
        pos, quats, coords = self.frame(i)
        world.character(character).set_pose(pos, quats, coords)
        world.forward()

    def to_clip(self) -> Clip:
        """The motion as a clip of the character's skeleton (strider axes, metres)."""
        sk = character_skeleton(self.spec)
        local = local_rotations(self.spec, self.coords, self.n_frames)
        rotations = np.empty((self.n_frames, len(sk), 4))
        rotations[:] = quat.IDENTITY
        for i, name in enumerate(sk.names):
            if name in local:
                rotations[:, i] = local[name]
        rotations[:, 0] = self.root_quat
        return Clip.from_root(sk, self.fps, self.root_pos, rotations, loop=self.loop, name=self.name)

    @classmethod
    def from_clip(cls, spec: CharacterSpec, clip: Clip) -> CharacterMotion:
        """Joint coordinates from a clip of the character's skeleton (e.g. a BVH strider wrote), in any axes."""
        clip = clip.to_strider()
        coords = {}
        for b in spec.bodies:
            if b.joint is not None:
                coords[b.joint.name] = coordinates_from_rotation(b.joint, clip.rotations[:, clip.skeleton.index(b.name)])
        return cls(spec, clip.fps, clip.root_pos.copy(), clip.root_rot.copy(), coords, clip.loop, clip.name)

    def shifted(self, offset: np.ndarray) -> CharacterMotion:
        """The motion moved by a world offset (per frame (T, 3), or one 3-vector)."""
        return replace(self, root_pos=self.root_pos + np.asarray(offset, dtype=float))

    def sole_points(self) -> dict[str, np.ndarray]:
        """Per leg ("left", "right"): world positions (T, P, 3) of the corners of its foot and toe boxes."""
        clip = self.to_clip()
        pos, quats = clip.world()
        out = {}
        for side, leg in self.spec.roles.legs.items():
            points = []
            for body in (leg.foot, leg.toes):
                if body is None:
                    continue
                j = clip.skeleton.index(body)
                centre = joint_centre(self.spec, body)
                for g in self.spec.body(body).geoms:
                    for corner in _bottom_points(g):
                        points.append(pos[:, j] + quat.rotate(quats[:, j], corner - centre))
            out[side] = np.stack(points, axis=1)
        return out


def _bottom_points(geom) -> list[np.ndarray]:
    """The points of a geom in its body frame that can be its lowest: a box's eight corners (a foot rolled
    past 90 degrees, as in crouches and rolls, touches with its top face); a sphere's or capsule's bottom
    in the zero pose."""
    if geom.kind == "box":
        lo, hi = np.minimum(geom.start, geom.end), np.maximum(geom.start, geom.end)
        return [np.array([x, y, z]) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    ends = [np.asarray(geom.start, float)] + ([np.asarray(geom.end, float)] if geom.kind == "capsule" else [])
    return [e - np.array([0.0, 0.0, geom.radius]) for e in ends]
