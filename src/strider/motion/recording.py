"""Recording a simulated character as a clip of its skeleton, written out as BVH (a runner frame sink)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from strider import quat
from strider.motion.axes import BVH_EXPORT_AXES
from strider.motion.bvh import write_bvh
from strider.motion.character_skeleton import character_skeleton
from strider.motion.clip import Clip


class BvhRecorder:
    """Called by the runner on every frame; on :meth:`close`, writes the recorded motion to ``path``.

    Each frame stores the root body's position and every body's rotation
    relative to its parent, read from the simulated world, so the BVH holds
    exactly the simulated pose. The file is written Y up, facing +Z, in metres
    (:data:`~strider.motion.axes.BVH_EXPORT_AXES`), as animation tools expect.
    """

    def __init__(self, character, path: str | Path, fps: float):
        self.character = character
        self.path = Path(path)
        self.fps = fps
        self.skeleton = character_skeleton(character.spec)
        self._bodies = [(i, name) for i, name in enumerate(self.skeleton.names) if not self.skeleton.sites[i]]
        self._root: list[np.ndarray] = []
        self._world: list[np.ndarray] = []

    def __call__(self, world, t: float) -> None:
        ch = self.character
        self._root.append(ch.root_pose()[0])
        self._world.append(np.array([ch.body_quat(name) for _, name in self._bodies]))

    @property
    def frames(self) -> int:
        return len(self._root)

    def clip(self) -> Clip:
        """The recorded motion in strider axes."""
        sk = self.skeleton
        frames = len(self._root)
        world = np.empty((frames, len(sk), 4))
        world[:] = quat.IDENTITY
        world[:, [i for i, _ in self._bodies]] = np.array(self._world)
        for i in range(len(sk)):
            if sk.sites[i]:
                world[:, i] = world[:, sk.parents[i]]
        local = world.copy()
        local[:, 1:] = quat.mul(quat.conj(world[:, list(sk.parents[1:])]), world[:, 1:])
        return Clip.from_root(sk, self.fps, np.array(self._root), quat.canonical(local),
                              name=self.character.spec.name)

    def close(self) -> None:
        if self._root:
            write_bvh(self.clip().to_axes(BVH_EXPORT_AXES), self.path)
