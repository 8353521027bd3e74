"""Inverted-pendulum foot placement (seed 000, Sec. 5.3.2).

Energy conservation of an inverted pendulum, 1/2 m v^2 + m g h = 1/2 m v'^2 + m g h'
with v' = 0 and h' = sqrt(h^2 + d^2), gives the step offset d at which the
pendulum comes to rest over the new foot. The source keeps the linear term,
d = v sqrt(h/g); the exact solution is d = v sqrt(h/g + v^2 / (4 g^2)).
The offset is then shortened by alpha * Vd so the body keeps moving (Sec. 5.3.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from strider.control.fastmath import clamp


@dataclass(frozen=True)
class IPMParams:
    variant: Literal["exact", "linear", "vel"] = "exact"   # coros-walking.md, Sec. 4 (IPM)
    alpha: float = 0.05        # seed 000, Sec. 5.3.2 / 5.6: step shortening per unit desired speed
    max_fraction: float = 0.6  # cap, as a fraction of leg length (coros-walking.md, Sec. 4)
    gravity: float = 9.81


def step_offset(velocity: float, height: float, desired_velocity: float, leg_length: float,
                params: IPMParams = IPMParams()) -> float:
    """Horizontal offset from the COM to the next foothold along one axis (m)."""
    g = params.gravity
    h = max(height, 1e-3)
    if params.variant == "linear":
        d = velocity * math.sqrt(h / g)
        d -= params.alpha * desired_velocity
    elif params.variant == "vel":
        # v' = Vd: the pendulum keeps the desired speed over the new foot (no alpha term).
        excess = max(velocity**2 - desired_velocity**2, 0.0)
        d = np.sign(velocity) * np.sqrt(excess * (h / g + excess / (4 * g * g)))
    else:
        # math.sqrt rounds exactly as np.sqrt does, and is much cheaper on one number.
        d = velocity * math.sqrt(h / g + velocity**2 / (4 * g * g))
        d -= params.alpha * desired_velocity
    cap = params.max_fraction * leg_length
    return float(clamp(d, -cap, cap))


def slope_step_offset(velocity: float, height: float, rise: float, gravity: float = 9.81) -> float:
    """The linear IPM's step offset on ground rising ``rise`` m per m in the direction of motion.

    Beyond the source. Stepping up a slope, the body must also lift its COM by the foothold's rise
    (rise * d) to come to rest over the new foot: 1/2 v^2 = g rise d + g d^2 / (2 h), so
    d = h (-rise + sqrt(rise^2 + v^2 / (g h))), signed as ``velocity``. ``rise`` 0 gives v sqrt(h/g).
    """
    h = max(height, 1e-3)
    d = h * (-rise + math.sqrt(rise * rise + velocity * velocity / (gravity * h)))
    return math.copysign(d, velocity)
