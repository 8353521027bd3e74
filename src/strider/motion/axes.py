"""Which way a clip's file points: its up and forward axes and its length unit, and guesses of them.

strider works in metres with z up and x forward (DESIGN.md); motion files come
Y-up (BVH, DeepMimic) or Z-up, in metres, centimetres, inches or CMU's own
unit. An :class:`Axes` records a file's convention so a clip can be read
losslessly and converted once, with :meth:`Axes.to_strider`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

AXIS_NAMES = ("+x", "-x", "+y", "-y", "+z", "-z")

TYPICAL_LEG_LENGTH = 0.85
"""Hip to ankle of an adult, m: the length the unit guess assumes (the CMU release's README says to scale
its skeletons so that hip to ankle is about 0.85 m; ../shared/mocap/README.md)."""

KNOWN_UNITS = {"metres": 1.0, "centimetres": 0.01, "millimetres": 0.001, "inches": 0.0254, "feet": 0.3048}
UNIT_SNAP_TOLERANCE = 0.35
"""A leg within this relative distance of TYPICAL_LEG_LENGTH in a known unit is taken to be in that unit
(adult legs vary by about that much)."""


def axis_vector(name: str) -> np.ndarray:
    if name not in AXIS_NAMES:
        raise ValueError(f"axis must be one of {', '.join(AXIS_NAMES)}, got {name!r}")
    v = np.zeros(3)
    v["xyz".index(name[1])] = 1.0 if name[0] == "+" else -1.0
    return v


def axis_name(v: np.ndarray) -> str:
    i = int(np.argmax(np.abs(v)))
    return ("+" if v[i] > 0 else "-") + "xyz"[i]


@dataclass(frozen=True)
class Axes:
    """A file's up and forward axes (``"+y"``, ``"-z"``, ...) and its length unit in metres."""

    up: str = "+z"
    forward: str = "+x"
    unit: float = 1.0

    def __post_init__(self) -> None:
        up, fwd = axis_vector(self.up), axis_vector(self.forward)
        if abs(up @ fwd) > 0:
            raise ValueError(f"up {self.up} and forward {self.forward} must be different axes")
        if not (np.isfinite(self.unit) and self.unit > 0):
            raise ValueError(f"unit must be a positive number of metres, got {self.unit}")

    @property
    def left(self) -> np.ndarray:
        return np.cross(axis_vector(self.up), axis_vector(self.forward))

    def to_strider(self) -> np.ndarray:
        """The proper rotation taking this convention's vectors into strider's (x forward, y left, z up)."""
        return np.stack([axis_vector(self.forward), self.left, axis_vector(self.up)])

    @property
    def is_strider(self) -> bool:
        return self.up == "+z" and self.forward == "+x" and self.unit == 1.0


STRIDER_AXES = Axes()
BVH_EXPORT_AXES = Axes(up="+y", forward="+z", unit=1.0)
"""What strider writes BVH in: Y up, facing +Z, metres, as the CMU release and most tools' defaults expect."""


def guess_unit(leg_length: float) -> tuple[float, str]:
    """(metres per unit, name) from a rest-pose hip-to-ankle length in file units."""
    for name, unit in KNOWN_UNITS.items():
        if abs(leg_length * unit / TYPICAL_LEG_LENGTH - 1.0) <= UNIT_SNAP_TOLERANCE:
            return unit, name
    unit = TYPICAL_LEG_LENGTH / leg_length if leg_length > 0 else 1.0
    return unit, f"estimated from a {TYPICAL_LEG_LENGTH} m leg"
