"""The CW action spaces around a base SIMBICON gait (seed 000, Sec. 3.3.1 and 3.3.3; coros-walking.md, Sec. 3.2).

An action is one step's targets (rad, s) in the step's two states, the first
timed, the second ending at contact. A planar action has 6 numbers:

    0 trunk lean in the first state                    3 swing hip in the second state
    1 trunk lean in the second state                   4 stance ankle (the second state keeps the base
    2 swing hip in the first state                       gait's difference from the first)
                                                       5 dwell of the first state

A 3-D action (Sec. 3.3.3: "three control points for the splines that output
the target angles for both the torso and swing hip in the sagittal plane, and
two for the stance ankle", with the dwell) has 9; each spline's points are the
first state's start and end and the second state's value:

    0-2 torso lean: first state at phase 0, at phase 1; second state
    3-5 swing hip (sagittal): the same three points
    6-7 stance ankle: first state; second state
    8   dwell of the first state

``base(gait)`` is the base gait's own values. Bounds keep an action a gait the
controller can track. ``weights`` is W of the synthesis' action term.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from strider.control.trajectory import CatmullRom
from strider.errors import UsageError
from strider.methods.simbicon.gait import Gait, body_of


def _value(curve: CatmullRom) -> float:
    if len(curve.values) != 1:
        raise ValueError("the CW action space needs a base gait with constant targets")
    return curve.values[0]


def _ends(curve: CatmullRom) -> tuple[float, float]:
    """A curve's values at phases 0 and 1."""
    return float(curve(0.0)), float(curve(1.0))


@dataclass(frozen=True)
class ActionSpace:
    body: str                    # the gait body it acts on ('planar' or 'humanoid')
    names: tuple[str, ...]
    low: np.ndarray
    high: np.ndarray
    weights: np.ndarray          # W (Sec. 3.3.2)

    @property
    def size(self) -> int:
        return len(self.names)

    def base(self, gait: Gait) -> np.ndarray:
        """A_base: ``gait``'s own values of the action."""
        first, second = gait.states[:2]
        if self.body == "planar":
            return np.array([_value(first.torso), _value(second.torso), _value(first.swing_hip),
                             _value(second.swing_hip), _value(first.stance_ankle), first.dwell])
        return np.array([*_ends(first.torso), second.torso(0.0), *_ends(first.swing_hip), second.swing_hip(0.0),
                         first.stance_ankle(0.0), second.stance_ankle(0.0), first.dwell])

    def apply(self, gait: Gait, action: np.ndarray) -> Gait:
        """``gait`` with one step's targets set to ``action`` (clipped to the bounds)."""
        a = np.clip(np.asarray(action, dtype=float), self.low, self.high).tolist()
        first, second = gait.states[:2]
        c = CatmullRom.constant
        if self.body == "planar":
            ankle_offset = _value(second.stance_ankle) - _value(first.stance_ankle)
            first = dataclasses.replace(first, torso=c(a[0]), swing_hip=c(a[2]), stance_ankle=c(a[4]), dwell=a[5])
            second = dataclasses.replace(second, torso=c(a[1]), swing_hip=c(a[3]), stance_ankle=c(a[4] + ankle_offset))
        else:
            line = (lambda start, end: CatmullRom((0.0, 1.0), (start, end)))
            first = dataclasses.replace(first, torso=line(a[0], a[1]), swing_hip=line(a[3], a[4]),
                                        stance_ankle=c(a[6]), dwell=a[8])
            second = dataclasses.replace(second, torso=c(a[2]), swing_hip=c(a[5]), stance_ankle=c(a[7]))
        return dataclasses.replace(gait, states=(first, second, *gait.states[2:]))


PLANAR = ActionSpace(
    "planar", ("torso_0", "torso_1", "swing_hip_0", "swing_hip_1", "stance_ankle", "dwell"),
    low=np.array([-0.3, -0.3, -0.6, -0.8, -0.5, 0.15]),     # rad, rad, rad, rad, rad, s
    high=np.array([0.7, 0.7, 1.2, 0.8, 0.5, 0.6]),
    weights=np.array([1.0, 1.0, 1.0, 1.0, 0.05, 4.0]))       # Sec. 3.3.2: W in 2-D
HUMANOID = ActionSpace(
    "humanoid", ("torso_0", "torso_1", "torso_2", "swing_hip_0", "swing_hip_1", "swing_hip_2", "stance_ankle_0",
                 "stance_ankle_1", "dwell"),
    low=np.array([-0.3, -0.3, -0.3, -0.4, -0.4, -0.8, -0.4, -0.4, 0.15]),
    high=np.array([0.5, 0.5, 0.5, 1.2, 1.2, 0.8, 0.4, 0.4, 0.6]),
    weights=np.ones(9))                                      # Sec. 3.3.3: W = I in 3-D
SPACES = {space.body: space for space in (PLANAR, HUMANOID)}


def action_space(spec) -> ActionSpace:
    """The action space of a character (its spec): the one of its SIMBICON gaits' body."""
    body = body_of(spec)
    if body not in SPACES:
        raise UsageError(f"CW has no action space for a {body} body (it has: {', '.join(SPACES)})")
    return SPACES[body]
