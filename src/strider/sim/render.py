"""Headless rendering of a world to RGB frames, and MP4 writing.

Rendering uses EGL when the machine has it and falls back to OSMesa. MuJoCo
reads ``MUJOCO_GL`` once, when ``mujoco`` is first imported, so the choice has
to be made before that: ``import strider`` does it (see
:func:`strider.display.prefer_headless_gl`). :func:`select_gl_backend` reports the choice,
and a renderer that still cannot get an OpenGL context fails with one clear
message instead of MuJoCo's traceback.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from strider.display import has_display, headless_gl_backend
from strider.errors import UsageError
from strider.outputs import check_writable
from strider.sim.framing import CameraPose, FramingParams, frame_points, glide

MUJOCO_DEFAULT_GL = "glfw"
SEGMENT_RADIUS = 0.02                   # m: extra drawn segments (a source skeleton beside a character)
SEGMENT_RGBA = (0.95, 0.8, 0.2, 1.0)


def select_gl_backend() -> str:
    """Pick MUJOCO_GL: the user's choice if set, GLFW with a display, else EGL if it loads, else OSMesa.

    Setting it only takes effect if ``mujoco`` has not been imported yet;
    ``import strider`` makes the same choice early enough.
    """
    chosen = os.environ.get("MUJOCO_GL")
    if chosen:
        return chosen
    if has_display():
        return MUJOCO_DEFAULT_GL
    backend = headless_gl_backend()
    if backend is None:
        raise UsageError("no headless OpenGL found: install EGL (libegl1) or OSMesa (libosmesa6) to render video")
    os.environ["MUJOCO_GL"] = backend
    os.environ.setdefault("PYOPENGL_PLATFORM", backend)
    return backend


def _active_gl_backend(mujoco, requested: str) -> str:
    """The backend MuJoCo actually loaded, which is fixed at its import and may differ from MUJOCO_GL now."""
    context = getattr(mujoco, "GLContext", None)
    return context.__module__.rpartition(".")[2] if context is not None else requested


class FrameRenderer:
    """Renders frames of a world. By default a camera frames the first character, standing or lying
    (:mod:`strider.sim.framing`); ``camera`` names one of the model's cameras instead (each character carries a
    ``NAME/follow`` camera that keeps a fixed offset from its centre of mass)."""

    def __init__(self, world, width: int = 640, height: int = 360, camera: str | None = None,
                 framing: FramingParams | None = None):
        backend = select_gl_backend()
        import mujoco

        self._mujoco = mujoco
        self.world = world
        max_width, max_height = world.model.vis.global_.offwidth, world.model.vis.global_.offheight
        if not (0 < width <= max_width and 0 < height <= max_height):
            raise UsageError(f"video size {width}x{height} must be within the scene's offscreen buffer, "
                             f"{max_width}x{max_height} pixels")
        self.framing = framing or FramingParams()
        self._pose: CameraPose | None = None
        self._aspect = width / height
        self._framed = camera is None
        if self._framed:
            self.camera = mujoco.MjvCamera()
            self.camera.type = mujoco.mjtCamera.mjCAMERA_FREE
            self._bodies = world.character().all_bodies
            # the tops of the character's geoms too: a body's centre can sit far below the top of its shape (the
            # 5-link walker's trunk reaches 0.45 m above its centre of mass)
            self._geoms = np.flatnonzero(np.isin(world.model.geom_bodyid, self._bodies))
            self._geom_tops = np.outer(world.model.geom_rbound[self._geoms], (0.0, 0.0, 1.0))
        else:
            self.camera = mujoco.mj_name2id(world.model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
            if self.camera < 0:
                raise UsageError(f"no camera named {camera!r} in the scene")
        try:
            with warnings.catch_warnings():  # GLFW warns as well as failing; the failure is reported below
                warnings.simplefilter("ignore")
                self.renderer = mujoco.Renderer(world.model, height=height, width=width)
        except (mujoco.FatalError, RuntimeError, ImportError, OSError) as exc:
            raise UsageError(
                f"cannot render with MuJoCo's {_active_gl_backend(mujoco, backend)} OpenGL backend: "
                f"{' '.join(str(exc).split())}; set MUJOCO_GL=egl or osmesa before Python imports mujoco") from None
        self.options = mujoco.MjvOption()

    def render(self, segments: np.ndarray | None = None, radius: float = SEGMENT_RADIUS,
               rgba: tuple[float, float, float, float] = SEGMENT_RGBA) -> np.ndarray:
        """One frame; ``segments`` (N, 2, 3) are extra capsules drawn between world points (e.g. a skeleton)."""
        if segments is not None:
            segments = np.asarray(segments, dtype=float)
        if self._framed:
            self._frame(segments)
        self.renderer.update_scene(self.world.data, camera=self.camera, scene_option=self.options)
        if segments is not None:
            self._add_segments(segments, radius, np.asarray(rgba, dtype=np.float32))
        return self.renderer.render().copy()

    def _frame(self, segments: np.ndarray | None) -> None:
        """Point the free camera at the character (and any drawn segments), gliding from the last frame."""
        points = np.concatenate([self.world.data.xipos[self._bodies],
                                 self.world.data.geom_xpos[self._geoms] + self._geom_tops])
        if segments is not None and len(segments):
            points = np.concatenate([points, segments.reshape(-1, 3)])
        target = frame_points(points, float(self.world.model.vis.global_.fovy), self._aspect, self.framing)
        self._pose = glide(self._pose, target, self.framing)
        self.camera.lookat[:] = self._pose.lookat
        self.camera.distance = self._pose.distance
        self.camera.elevation = self._pose.elevation
        self.camera.azimuth = self.framing.azimuth

    def _add_segments(self, segments: np.ndarray, radius: float, rgba: np.ndarray) -> None:
        mujoco, scene = self._mujoco, self.renderer.scene
        for a, b in segments:
            if scene.ngeom >= scene.maxgeom:
                break
            geom = scene.geoms[scene.ngeom]
            mujoco.mjv_initGeom(geom, mujoco.mjtGeom.mjGEOM_CAPSULE, np.zeros(3), np.zeros(3), np.zeros(9), rgba)
            mujoco.mjv_connector(geom, mujoco.mjtGeom.mjGEOM_CAPSULE, radius, a, b)
            scene.ngeom += 1

    def close(self) -> None:
        self.renderer.close()


MP4_SUFFIXES = (".mp4", ".m4v", ".mov")
MP4_QUALITY = 7           # imageio's 0-10 scale; 7 keeps a 640x360 walk at a few hundred kB per 10 s
MACRO_BLOCK_SIZE = 2      # H.264 with 4:2:0 chroma needs even sizes; larger blocks would rescale frames


def check_video_path(path: str | Path) -> Path:
    """Fail early, before any simulation, if ``path`` cannot take an MP4."""
    path = check_writable(path)
    if path.suffix.lower() not in MP4_SUFFIXES:
        raise UsageError(f"cannot write {path}: a video file name must end in {', '.join(MP4_SUFFIXES)}")
    return path


class Mp4Writer:
    """Streams frames into an H.264 MP4 as they arrive, so a long video never sits in memory.

    The file is complete once :meth:`close` returns.
    """

    def __init__(self, path: str | Path, fps: float):
        import imageio.v2 as imageio

        self.path = check_video_path(path)
        self.fps = fps
        self.frames = 0
        self._writer = imageio.get_writer(str(self.path), fps=fps, codec="libx264", quality=MP4_QUALITY,
                                          macro_block_size=MACRO_BLOCK_SIZE, ffmpeg_log_level="error")

    def append(self, frame: np.ndarray) -> None:
        self._writer.append_data(frame)
        self.frames += 1

    def close(self) -> None:
        self._writer.close()


class VideoRecorder:
    """A runner frame sink: renders the world on every frame and streams it to an MP4.

    Construct it after the world exists and before simulating, so that a
    missing OpenGL or an unwritable file fails before any work is done.
    """

    def __init__(self, world, path: str | Path, fps: float, width: int = 640, height: int = 360):
        self.renderer = FrameRenderer(world, width, height)
        try:
            self.writer = Mp4Writer(path, fps)
        except BaseException:
            self.renderer.close()
            raise

    @property
    def path(self) -> Path:
        return self.writer.path

    @property
    def frames(self) -> int:
        return self.writer.frames

    def __call__(self, world, t: float) -> None:
        self.writer.append(self.renderer.render())

    def close(self) -> None:
        try:
            self.writer.close()
        finally:
            self.renderer.close()


def write_mp4(path: str | Path, frames: list[np.ndarray], fps: float) -> Path:
    """Encode frames (H x W x 3, uint8) as an H.264 MP4 with the ffmpeg shipped by imageio-ffmpeg."""
    if not frames:
        raise UsageError("no frames to write")
    writer = Mp4Writer(path, fps)
    try:
        for f in frames:
            writer.append(f)
    finally:
        writer.close()
    return writer.path
