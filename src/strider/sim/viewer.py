"""Watching a run live in MuJoCo's interactive viewer.

The viewer needs a window, so :func:`require_display` checks for one before
anything is built or simulated. :class:`LiveViewer` is a runner frame sink: on
every frame it hands the new state to the viewer and waits until the wall clock
catches up with simulated time, so the motion plays at real speed. Closing the
window does not abort the run; the rest simply runs unwatched at full speed.
"""

from __future__ import annotations

import time

from strider.display import has_display
from strider.errors import UsageError
from strider.sim.world import World

VIEWER_FPS = 60.0
"""Frames per simulated second handed to the viewer: smooth on ordinary monitors."""


def require_display() -> None:
    """Fail with one clear line when there is no display to open a window on."""
    if not has_display():
        raise UsageError("--viewer needs a display (DISPLAY is not set); on a headless machine use --video out.mp4")
    _require_window_system()


def _require_window_system() -> None:
    """Start GLFW once as a probe: if MuJoCo's viewer thread fails to, it ends the whole process."""
    try:
        import glfw
    except ImportError as exc:
        raise UsageError(f"--viewer needs the glfw package ({exc})") from None
    reporting = glfw.ERROR_REPORTING
    glfw.ERROR_REPORTING = "ignore"  # the failure is reported below, as one line
    try:
        if not glfw.init():
            _, description = glfw.get_error()
            reason = description.decode(errors="replace") if description else "GLFW did not start"
            raise UsageError(f"--viewer cannot open a window: {reason}")
        glfw.terminate()
    finally:
        glfw.ERROR_REPORTING = reporting


class LiveViewer:
    """Shows ``world`` in a passive MuJoCo viewer, the camera following ``track_body``."""

    def __init__(self, world: World, track_body: int | None = None):
        require_display()
        import mujoco
        import mujoco.viewer

        try:
            self.handle = mujoco.viewer.launch_passive(world.model, world.data)
        except (RuntimeError, OSError, ImportError, mujoco.FatalError) as exc:  # all mean "no window here"
            raise UsageError(f"cannot open the MuJoCo viewer: {' '.join(str(exc).split())}") from None
        if track_body is not None:
            self.handle.cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
            self.handle.cam.trackbodyid = track_body
        self._wall_start: float | None = None

    @property
    def is_open(self) -> bool:
        return self.handle.is_running()

    def __call__(self, world: World, t: float) -> None:
        if not self.is_open:
            return
        self.handle.sync()  # takes the viewer's lock itself
        now = time.perf_counter()
        if self._wall_start is None:
            self._wall_start = now - t
        lag = self._wall_start + t - now
        if lag > 0:
            time.sleep(lag)

    def close(self) -> None:
        self.handle.close()
