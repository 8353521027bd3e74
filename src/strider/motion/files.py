"""Reading and writing clips by file name: BVH, DeepMimic and strider's ``.npz``."""

from __future__ import annotations

from pathlib import Path

from strider.errors import UsageError
from strider.motion.axes import Axes
from strider.motion.bvh import read_bvh, write_bvh
from strider.motion.clip import Clip
from strider.motion.deepmimic import read_deepmimic
from strider.motion.errors import MotionFormatError
from strider.motion.npz import read_npz, write_npz

READ_SUFFIXES = {".bvh": "BVH", ".npz": "strider clip", ".txt": "DeepMimic", ".json": "DeepMimic"}
WRITE_SUFFIXES = (".bvh", ".npz")
SNIFF_BYTES = 64


def load_clip(path: str | Path, axes: Axes | None = None) -> Clip:
    """Read any supported clip; BVH axes are guessed unless given."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"clip file {str(path)!r} does not exist")
    if path.is_dir():
        raise UsageError(f"clip {str(path)!r} is a folder, not a file")
    suffix = path.suffix.lower()
    if suffix not in READ_SUFFIXES:
        try:
            head = path.open("rb").read(SNIFF_BYTES).lstrip()
        except OSError as exc:
            raise MotionFormatError(str(path), f"cannot read file ({exc.strerror})") from None
        suffix = ".bvh" if head.upper().startswith(b"HIERARCHY") else ".txt" if head.startswith(b"{") else \
            ".npz" if head.startswith(b"PK") else ""
        if not suffix:
            raise MotionFormatError(str(path), "unknown motion format (expected BVH, a DeepMimic .txt clip, "
                                               "or a strider .npz clip)")
    if suffix == ".bvh":
        return read_bvh(path, axes)
    if suffix == ".npz":
        return read_npz(path)
    return read_deepmimic(path)


def save_clip(clip: Clip, path: str | Path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in WRITE_SUFFIXES:
        raise UsageError(f"cannot write {str(path)!r}: clips are written as {' or '.join(WRITE_SUFFIXES)}")
    return write_bvh(clip, path) if path.suffix.lower() == ".bvh" else write_npz(clip, path)
