"""SLIP gaits as data: the goals and weights of Table 1 (Mordatch et al. 2010), one YAML file per gait.

Nothing else distinguishes a walk from a run or a jump: the planner finds the phases (double support, flight)
that the goals make cheapest. A file sets ``goals`` (any :class:`GaitGoals` field); fields it leaves out keep
Table 1's shared weights. A style may override numbers after the name, ``jump,apex_height=0.5``; each is checked
like the file's own.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from strider.datafile import Fields, load_yaml, resolve_data_file, shipped_names
from strider.errors import UsageError
from strider.methods.slip.objectives import STEP_TIMINGS, GaitGoals

DATA_DIR = Path(__file__).parent / "data"
MAX_APEX_HEIGHT = 0.5    # m: the highest jump the source shows (Mordatch et al. 2010, Sec. 7; Table 1's 0-0.5 m)
MAX_STEP_LENGTH = 2.0    # m: beyond two rest leg lengths no foothold is in the planner's reach
_NUMBERS = {  # field: (min, max)
    "step_length": (0.0, MAX_STEP_LENGTH), "step_duration": (0.05, 2.0), "apex_height": (0.0, MAX_APEX_HEIGHT),
    "w_step_time": (0.0, 1e4), "w_step_length": (0.0, 1e4), "w_heading": (0.0, 1e4), "w_apex": (0.0, 1e4),
    "w_accel": (0.0, 1e4), "w_leg": (0.0, 1e4), "w_hip": (0.0, 1e4), "w_drift": (0.0, 1e4)}
_SWITCHES = ("flight_accel", "heading_each_step")   # true or false


def available_gaits() -> list[str]:
    return shipped_names(DATA_DIR)


def load_gait(style: str) -> GaitGoals:
    """A shipped gait by name (walk, run, jump, stand) or a gait file by path, checked field by field, with the
    style's overrides (``NAME,FIELD=VALUE,...``) applied."""
    name_or_path, *overrides = style.split(",")
    goals = _load_file(name_or_path)
    values = {}
    for item in overrides:
        key, equals, text = item.partition("=")
        key = key.strip()
        if not equals or key not in _NUMBERS:
            raise UsageError(f"SLIP gait style {style!r}: {item!r} is not FIELD=VALUE with FIELD one of "
                             f"{', '.join(_NUMBERS)}")
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"SLIP gait style {style!r}: {key} needs a number, got {text!r}") from None
        lo, hi = _NUMBERS[key]
        if not lo <= value <= hi:
            raise UsageError(f"SLIP gait style {style!r}: {key} = {value:g} is outside [{lo:g}, {hi:g}]"
                             + (" (the highest jump the paper shows)" if key == "apex_height" else ""))
        values[key] = value
    return dataclasses.replace(goals, **values)


def _load_file(name_or_path: str) -> GaitGoals:
    path = resolve_data_file(name_or_path, DATA_DIR, "SLIP gait")
    f = Fields(load_yaml(path), str(path))
    f.reject_unknown({"name", "description", "goals"})
    g = f.mapping("goals")
    g.reject_unknown(set(_NUMBERS) | set(_SWITCHES) | {"step_timing"})
    values = {key: g.number(key, min=lo, max=hi) for key, (lo, hi) in _NUMBERS.items() if g.has(key)}
    if g.has("step_timing"):
        values["step_timing"] = g.string("step_timing", choices=STEP_TIMINGS)
    values.update({switch: g.flag(switch) for switch in _SWITCHES if g.has(switch)})
    return dataclasses.replace(GaitGoals(), **values)
