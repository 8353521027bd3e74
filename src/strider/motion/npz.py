"""strider's own clip file: one ``.npz`` holding a :class:`Clip` exactly, with its skeleton and axes.

Arrays: ``rotations`` (T, J, 4), ``positions`` (T, J, 3), ``offsets`` (J, 3),
``parents`` (J,), ``sites`` (J,); strings: ``names``, ``channels`` (one
space-separated string per joint), ``up``, ``forward``, ``name``; scalars
``fps``, ``unit``, ``loop`` and ``format_version``. Loading never unpickles.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from strider.motion.axes import AXIS_NAMES, Axes
from strider.motion.clip import Clip
from strider.motion.errors import MotionFormatError
from strider.motion.skeleton import Skeleton

FORMAT_VERSION = 1
_FIELDS = ("format_version", "names", "parents", "offsets", "sites", "channels", "fps", "rotations",
           "positions", "loop", "up", "forward", "unit", "name")


def write_npz(clip: Clip, path: str | Path) -> Path:
    sk = clip.skeleton
    path = Path(path)
    with path.open("wb") as f:
        np.savez_compressed(
            f, format_version=np.int64(FORMAT_VERSION), names=np.array(sk.names, dtype=str),
            parents=np.array(sk.parents, dtype=np.int64), offsets=sk.offsets, sites=np.array(sk.sites, dtype=bool),
            channels=np.array([" ".join(c) for c in sk.channels], dtype=str), fps=np.float64(clip.fps),
            rotations=clip.rotations, positions=clip.positions, loop=np.bool_(clip.loop),
            up=np.array(clip.axes.up), forward=np.array(clip.axes.forward), unit=np.float64(clip.axes.unit),
            name=np.array(clip.name))
    return path


def read_npz(path: str | Path) -> Clip:
    path = Path(path)
    source = str(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise MotionFormatError(source, f"not a strider .npz clip ({' '.join(str(exc).split())[:80]})") from None
    missing = [k for k in _FIELDS if k not in arrays]
    if missing:
        raise MotionFormatError(source, "missing array", field=missing[0])

    def check(key: str, ok: bool, problem: str) -> None:
        if not ok:
            raise MotionFormatError(source, problem, field=key)

    version = arrays["format_version"]
    check("format_version", version.shape == () and int(version) == FORMAT_VERSION,
          f"unsupported version {version!r} (this strider reads version {FORMAT_VERSION})")
    names = arrays["names"]
    check("names", names.ndim == 1 and names.dtype.kind == "U" and len(names) > 0, "expected a list of joint names")
    j = len(names)
    for key, shape, kind in (("parents", (j,), "i"), ("offsets", (j, 3), "f"), ("sites", (j,), "b"),
                             ("channels", (j,), "U")):
        check(key, arrays[key].shape == shape and arrays[key].dtype.kind == kind,
              f"expected shape {shape} of kind {kind!r}, got {arrays[key].shape} {arrays[key].dtype}")
    rotations, positions = arrays["rotations"], arrays["positions"]
    check("rotations", rotations.ndim == 3 and rotations.shape[1:] == (j, 4) and rotations.shape[0] > 0
          and rotations.dtype.kind == "f", f"expected (frames, {j}, 4) floats, got {rotations.shape}")
    check("positions", positions.shape == rotations.shape[:2] + (3,) and positions.dtype.kind == "f",
          f"expected {rotations.shape[:2] + (3,)} floats, got {positions.shape}")
    for key in ("offsets", "rotations", "positions"):
        check(key, bool(np.isfinite(arrays[key]).all()), "holds values that are not finite")
    check("rotations", bool((np.linalg.norm(rotations, axis=-1) > 1e-6).all()), "holds a zero quaternion")
    for key in ("fps", "unit"):
        value = arrays[key]
        check(key, value.shape == () and value.dtype.kind == "f" and np.isfinite(value) and value > 0,
              f"expected a positive number, got {value!r}")
    for key in ("up", "forward"):
        check(key, arrays[key].shape == () and str(arrays[key]) in AXIS_NAMES,
              f"expected one of {', '.join(AXIS_NAMES)}, got {arrays[key]!r}")
    check("forward", str(arrays["up"])[1] != str(arrays["forward"])[1], "must differ from the up axis")
    channels = tuple(tuple(c.split()) for c in arrays["channels"])
    try:
        skeleton = Skeleton(tuple(str(n) for n in names), tuple(int(p) for p in arrays["parents"]),
                            arrays["offsets"], tuple(bool(s) for s in arrays["sites"]), channels)
    except ValueError as exc:
        raise MotionFormatError(source, str(exc), field="parents") from None
    axes = Axes(str(arrays["up"]), str(arrays["forward"]), float(arrays["unit"]))
    return Clip(skeleton, float(arrays["fps"]), rotations, positions, loop=bool(arrays["loop"]), axes=axes,
                name=str(arrays["name"]))
