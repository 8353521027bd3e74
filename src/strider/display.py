"""Whether this process can open windows, and which OpenGL backend MuJoCo should use.

MuJoCo chooses its OpenGL backend once, from ``MUJOCO_GL``, when ``mujoco`` is
first imported; its default (GLFW) needs a display. On a headless machine a
video would then fail long after the run started. This module imports nothing
heavy, so ``import strider`` can call :func:`prefer_headless_gl` before any
strider module imports ``mujoco``.
"""

from __future__ import annotations

import ctypes.util
import os
import sys

HEADLESS_GL_LIBRARIES = (("egl", "EGL"), ("osmesa", "OSMesa"))
"""MUJOCO_GL values for rendering without a display, best first, with the library each needs."""


def has_display() -> bool:
    """True when windows can be opened: always on macOS and Windows, on Linux when X11 or Wayland is set."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def headless_gl_backend() -> str | None:
    """The first headless backend whose library is installed, or None."""
    for backend, library in HEADLESS_GL_LIBRARIES:
        if ctypes.util.find_library(library) is not None:
            return backend
    return None


def prefer_headless_gl() -> None:
    """Default MUJOCO_GL to a headless backend on a Linux machine without a display.

    The user's own MUJOCO_GL always wins, and with a display nothing changes,
    so the interactive viewer keeps GLFW.
    """
    if os.environ.get("MUJOCO_GL") or has_display():
        return
    backend = headless_gl_backend()
    if backend is not None:
        os.environ["MUJOCO_GL"] = backend
        os.environ.setdefault("PYOPENGL_PLATFORM", backend)
