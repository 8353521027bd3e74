"""The CW action space around a base SIMBICON gait (seed 000, Sec. 3.3.1; coros-walking.md, Sec. 3.2).

A planar action is 6 numbers, one step's targets (rad, s):

    0 trunk lean in the step's first (timed) state     3 swing hip in the second (contact) state
    1 trunk lean in the second state                   4 stance ankle (the second state keeps the base
    2 swing hip in the first state                       gait's difference from the first)
                                                       5 dwell of the first state

``A_base`` is the base gait's own values. Bounds keep an action a gait the
controller can track.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from strider.control.trajectory import CatmullRom
from strider.methods.simbicon.gait import Gait

NAMES = ("torso_0", "torso_1", "swing_hip_0", "swing_hip_1", "stance_ankle", "dwell")
LOW = np.array([-0.3, -0.3, -0.6, -0.8, -0.5, 0.15])    # rad, rad, rad, rad, rad, s
HIGH = np.array([0.7, 0.7, 1.2, 0.8, 0.5, 0.6])
# Sec. 3.3.2: W = diag(1, 1, 1, 1, 0.05, 4) in 2-D; gamma = 0.1.
WEIGHTS = np.array([1.0, 1.0, 1.0, 1.0, 0.05, 4.0])
GAMMA = 0.1


def _value(curve: CatmullRom) -> float:
    if len(curve.values) != 1:
        raise ValueError("the CW action space needs a base gait with constant targets")
    return curve.values[0]


def base_action(gait: Gait) -> np.ndarray:
    """A_base: the base gait's values of the six numbers."""
    first, second = gait.states[:2]
    return np.array([_value(first.torso), _value(second.torso), _value(first.swing_hip), _value(second.swing_hip),
                     _value(first.stance_ankle), first.dwell])


def apply_action(gait: Gait, action: np.ndarray) -> Gait:
    """``gait`` with one step's targets set to ``action`` (clipped to the bounds)."""
    a = np.clip(np.asarray(action, dtype=float), LOW, HIGH).tolist()
    first, second = gait.states[:2]
    ankle_offset = _value(second.stance_ankle) - _value(first.stance_ankle)
    c = CatmullRom.constant
    first = dataclasses.replace(first, torso=c(a[0]), swing_hip=c(a[2]), stance_ankle=c(a[4]), dwell=a[5])
    second = dataclasses.replace(second, torso=c(a[1]), swing_hip=c(a[3]), stance_ankle=c(a[4] + ankle_offset))
    return dataclasses.replace(gait, states=(first, second, *gait.states[2:]))
