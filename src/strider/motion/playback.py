"""Kinematic playback: a retargeted motion posed frame by frame in a world, rendered to video.

The world is stepped by nothing: each frame sets the character's pose
(:meth:`CharacterMotion.apply`) and renders it. With ``show_source``, the
source skeleton (in strider axes, scaled as the character follows it) is
drawn beside the character, so the retargeting can be judged by eye.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from strider.motion.retarget import Retargeted

SOURCE_OFFSET = np.array([-1.0, 0.0, 0.0])
"""Where the source skeleton is drawn relative to the character, m: one step behind it along x, so the
follow camera (looking along +y) shows both side by side."""
MIN_SEGMENT = 1e-6


@dataclass(frozen=True)
class Playback:
    path: Path
    frames: int
    fps: float


def source_segments(retargeted: Retargeted, offset: np.ndarray = SOURCE_OFFSET) -> np.ndarray:
    """Per frame, the source skeleton's bones as segments (T, B, 2, 3), shifted by ``offset``."""
    clip = retargeted.source
    pos = clip.world_positions() + offset
    bones = [j for j in range(1, len(clip.skeleton))
             if np.linalg.norm(clip.skeleton.offsets[j]) > MIN_SEGMENT]
    parents = [clip.skeleton.parents[j] for j in bones]
    return np.stack([pos[:, parents], pos[:, bones]], axis=2)


def play(retargeted: Retargeted, path: str | Path, width: int = 640, height: int = 360,
         show_source: bool = False) -> Playback:
    """Render the retargeted motion at its own frame rate to an MP4 at ``path``."""
    from strider.sim import CharacterPlacement, Scene, World
    from strider.sim.render import VideoRecorder

    motion = retargeted.motion
    world = World(Scene((CharacterPlacement(motion.spec),)))
    segments = source_segments(retargeted) if show_source else None
    recorder = VideoRecorder(world, path, motion.fps, width, height)
    try:
        for i in range(motion.n_frames):
            motion.apply(world, i)
            frame = recorder.renderer.render(None if segments is None else segments[i])
            recorder.writer.append(frame)
    finally:
        recorder.close()
    return Playback(Path(path), motion.n_frames, motion.fps)
