"""A motion skeleton: named joints in a tree, their rest offsets, and how a BVH file animates them.

Joints are listed parents first (``parents[i] < i``; the root is joint 0 with
parent -1). An *end site* is a joint with no rotation of its own, marking where
a chain ends (a toe tip, the top of the head), as BVH's ``End Site``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ROOT_CHANNELS = ("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation")
JOINT_CHANNELS = ("Zrotation", "Yrotation", "Xrotation")
"""Channel sets a skeleton gets when none are given: those of the CMU BVH release."""


@dataclass(frozen=True, eq=False)
class Skeleton:
    names: tuple[str, ...]
    parents: tuple[int, ...]
    offsets: np.ndarray                      # (J, 3): each joint's rest position in its parent's frame
    sites: tuple[bool, ...] = ()             # end sites; default: none
    channels: tuple[tuple[str, ...], ...] = ()  # BVH channels per joint; default: ROOT_CHANNELS / JOINT_CHANNELS

    def __post_init__(self) -> None:
        n = len(self.names)
        offsets = np.asarray(self.offsets, dtype=float).reshape(n, 3)
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "parents", tuple(int(p) for p in self.parents))
        if not self.sites:
            object.__setattr__(self, "sites", (False,) * n)
        if not self.channels:
            object.__setattr__(self, "channels", tuple(
                () if s else (ROOT_CHANNELS if i == 0 else JOINT_CHANNELS) for i, s in enumerate(self.sites)))
        if n == 0:
            raise ValueError("a skeleton needs at least one joint")
        if len(self.parents) != n or len(self.sites) != n or len(self.channels) != n:
            raise ValueError("names, parents, sites and channels must have one entry per joint")
        if self.parents[0] != -1 or any(not 0 <= p < i for i, p in enumerate(self.parents) if i):
            raise ValueError("joints must be listed parents first, with the root (parent -1) first")
        if len(set(self.names)) != n:
            raise ValueError("joint names must be unique")
        if self.sites[0]:
            raise ValueError("the root cannot be an end site")

    def __len__(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no joint named {name!r}") from None

    def children(self, joint: int) -> list[int]:
        return [i for i, p in enumerate(self.parents) if p == joint]

    def path_to_root(self, joint: int) -> list[int]:
        out = [joint]
        while self.parents[out[-1]] >= 0:
            out.append(self.parents[out[-1]])
        return out

    def rest_positions(self) -> np.ndarray:
        """World positions of every joint in the rest pose (all rotations identity), root at the origin."""
        out = np.zeros((len(self), 3))
        for i in range(1, len(self)):
            out[i] = out[self.parents[i]] + self.offsets[i]
        return out

    def same_structure(self, other: Skeleton) -> bool:
        return self.names == other.names and self.parents == other.parents

    def transformed(self, matrix: np.ndarray, scale: float = 1.0) -> Skeleton:
        """The skeleton with offsets rotated by ``matrix`` (3 x 3) and scaled."""
        return Skeleton(self.names, self.parents, scale * self.offsets @ np.asarray(matrix).T, self.sites,
                        self.channels)

    def with_offsets(self, offsets: np.ndarray) -> Skeleton:
        return Skeleton(self.names, self.parents, offsets, self.sites, self.channels)
