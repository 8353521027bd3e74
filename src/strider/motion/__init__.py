"""Motion data: clips, BVH / DeepMimic / ``.npz`` files, retargeting to strider characters, playback.

>>> from strider.motion import load_clip
>>> clip = load_clip("walk.bvh")                       # doctest: +SKIP
>>> clip.to_strider().sample(0.5)                      # doctest: +SKIP
"""

from strider.motion.axes import STRIDER_AXES, Axes
from strider.motion.bvh import read_bvh, write_bvh
from strider.motion.clip import Clip, Velocities, blend
from strider.motion.deepmimic import read_deepmimic
from strider.motion.errors import MotionFormatError
from strider.motion.files import load_clip, save_clip
from strider.motion.mocap import mocap_dir
from strider.motion.npz import read_npz, write_npz
from strider.motion.skeleton import Skeleton

__all__ = [
    "STRIDER_AXES",
    "Axes",
    "Clip",
    "MotionFormatError",
    "Skeleton",
    "Velocities",
    "blend",
    "load_clip",
    "mocap_dir",
    "read_bvh",
    "read_deepmimic",
    "read_npz",
    "save_clip",
    "write_bvh",
    "write_npz",
]
