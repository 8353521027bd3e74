"""Headless rendering of a world to RGB frames, and MP4 writing.

Rendering uses EGL when the machine has it and falls back to OSMesa. The
backend has to be chosen before MuJoCo's GL context is created, so
:func:`select_gl_backend` runs before the first renderer is made.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from strider.errors import UsageError

_GL_CHOICES = ("egl", "osmesa")


def select_gl_backend() -> str:
    """Pick MUJOCO_GL: the user's choice if set, else EGL if it loads, else OSMesa."""
    chosen = os.environ.get("MUJOCO_GL")
    if chosen:
        return chosen
    for backend in _GL_CHOICES:
        if _backend_loads(backend):
            os.environ["MUJOCO_GL"] = backend
            os.environ.setdefault("PYOPENGL_PLATFORM", backend)
            return backend
    raise UsageError("no headless OpenGL found: install EGL (libegl1) or OSMesa (libosmesa6) to render video")


def _backend_loads(backend: str) -> bool:
    import ctypes.util

    lib = {"egl": "EGL", "osmesa": "OSMesa"}[backend]
    return ctypes.util.find_library(lib) is not None


class FrameRenderer:
    """Renders frames of a world from its character-following camera."""

    def __init__(self, world, width: int = 640, height: int = 360, camera: str | None = None):
        select_gl_backend()
        import mujoco

        self._mujoco = mujoco
        self.world = world
        self.renderer = mujoco.Renderer(world.model, height=height, width=width)
        name = camera or f"{world.scene.characters[0].name}/follow"
        self.camera = mujoco.mj_name2id(world.model, mujoco.mjtObj.mjOBJ_CAMERA, name)
        opt = mujoco.MjvOption()
        self.options = opt

    def render(self) -> np.ndarray:
        self.renderer.update_scene(self.world.data, camera=self.camera, scene_option=self.options)
        return self.renderer.render().copy()

    def close(self) -> None:
        self.renderer.close()


def check_writable(path: str | Path) -> Path:
    """Fail early, before any simulation, if an output file cannot be written."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise UsageError(f"cannot write {path}: folder {parent} does not exist")
    if path.is_dir():
        raise UsageError(f"cannot write {path}: it is a folder")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"cannot write {path}: permission denied")
    return path


def write_mp4(path: str | Path, frames: list[np.ndarray], fps: float) -> Path:
    """Encode frames (H x W x 3, uint8) as an H.264 MP4 with the ffmpeg shipped by imageio-ffmpeg."""
    import imageio.v2 as imageio

    path = check_writable(path)
    if not frames:
        raise UsageError("no frames to write")
    with imageio.get_writer(str(path), fps=fps, codec="libx264", quality=7, macro_block_size=8,
                            ffmpeg_log_level="error") as writer:
        for f in frames:
            writer.append_data(f)
    return path
