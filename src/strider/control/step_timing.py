"""Step timing from the capture point: land the swing foot before the body runs away from the stance foot.

Beyond the source. GBWC (seed 000, Sec. 5.3.2) keeps the step period fixed and
relies on foot placement alone. After a hard push the body can topple past any
reachable foothold before the nominal strike. The linear inverted pendulum
over the stance foot p gives the capture point xi = x + v / omega, with
omega = sqrt(g / h), which runs away as xi(t) - p = (xi(0) - p) exp(omega t).
The swing foot can still catch the body while |xi - p| stays within what one
step reaches, so the step must end by

    t_catch = ln(R / |xi(0) - p|) / omega,

evaluated per axis of the character frame with that axis' reach R. The rest
of the step is then run in min(nominal remainder, max(t_catch, t_min)).

Sideways the swing foot reaches only to its own side: a capture point that
runs out past the stance foot's outer edge (a push towards the stance side)
can only be caught by the stance foot itself, one step later. Its reach on
that side is short, so the step ends early and frees that foot.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StepTimingParams:
    enabled: bool = True
    sagittal_reach: float = 0.75   # of leg length: the farthest capture point one step catches, forwards/back
    lateral_reach: float = 0.45    # of leg length, sideways (away from the stance foot)
    min_remaining: float = 0.12    # s: the swing foot needs this long to come down from mid-swing
    # Of leg length: how far the capture point may pass the stance ankle on its outer side, where the swing
    # foot cannot follow without crossing; in steady walking it stays 0.02-0.04 m on the inner side (measured).
    outward_reach: float = 0.12


def time_to_catch(offset: Sequence[float], velocity: Sequence[float], height: float, gravity: float,
                  reach: Sequence[float]) -> float:
    """Seconds until the capture point leaves ``reach`` (per axis) of the stance foot; inf if it never does.

    ``offset`` is COM minus stance foot and ``velocity`` the COM velocity, both
    horizontal (2-vectors) in the character frame.
    """
    # On plain floats (this runs every control update): the elementwise array arithmetic it replaces,
    # math.sqrt for np.sqrt (both correctly rounded); np.log is kept, as math.log may round differently.
    omega = math.sqrt(gravity / max(height, 1e-3))
    out = math.inf
    for o, v, r in zip(offset, velocity, reach):
        c = abs(o + v / omega)
        if c > 1e-9:
            out = min(out, max(float(np.log(r / c)), 0.0) / omega)
    return out


def remaining_step_time(offset: Sequence[float], velocity: Sequence[float], height: float, gravity: float,
                        leg_length: float, params: StepTimingParams, outer_side: float = 0.0) -> float | None:
    """How long the rest of the step may take (s), or None to keep the nominal timing.

    ``outer_side`` is +1 when the stance foot's outer side is the frame's +y (a left stance foot), -1 for
    a right one, 0 to treat both sides alike.
    """
    if not params.enabled:
        return None
    reach = [leg_length * params.sagittal_reach, leg_length * params.lateral_reach]
    if outer_side:
        omega = math.sqrt(gravity / max(height, 1e-3))
        if outer_side * (offset[1] + velocity[1] / omega) > 0.0:
            reach[1] = leg_length * params.outward_reach
    t = time_to_catch(offset, velocity, height, gravity, reach)
    return None if not math.isfinite(t) else max(t, params.min_remaining)
