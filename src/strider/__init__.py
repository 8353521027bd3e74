"""strider: physics-based character animation on MuJoCo.

The quickest way in::

    import strider
    result = strider.walk(seconds=10, speed=1.0, video="walk.mp4")
    print(result.mean_speed_mps, result.fell, result.realtime_factor)

:func:`walk` and :func:`stand` are the functions behind ``strider walk`` and
``strider stand``. Importing this package is cheap: MuJoCo and the
controllers load on the first run.
"""

from strider.display import prefer_headless_gl

# MuJoCo picks its OpenGL backend when it is first imported; choose a headless one now, while we still can.
prefer_headless_gl()

from strider.api import RunRequest, run, stand, walk  # after the GL choice, on purpose
from strider.errors import ConfigError, StriderError, UsageError

__version__ = "0.1.0"

__all__ = ["ConfigError", "RunRequest", "StriderError", "UsageError", "__version__", "run", "stand", "walk"]
