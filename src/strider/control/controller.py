"""The interface every controller implements, and the commands a locomotion controller takes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from strider.sim import Character, World


@runtime_checkable
class Controller(Protocol):
    """A plain object driving one character; it keeps its own phase and state-machine state.

    ``reset`` binds it to a character in a world and sets its initial pose.
    ``control`` is called every ``control_period`` seconds of simulated time and
    writes servo targets and joint torques through the character view.
    ``capabilities`` names the optional parts of the contract it has (see
    ``strider.methods.registry.CAPABILITIES``); its state, for episode snapshots,
    is its attributes (``strider.control.snapshot``).
    """

    control_period: float
    capabilities: frozenset[str]

    def reset(self, world: World, character: Character) -> None: ...

    def control(self, t: float) -> None: ...

    def has_fallen(self) -> bool: ...

    def info(self) -> dict: ...


@dataclass
class LocomotionCommand:
    """What a user asks of a walking controller; every field can change while it runs."""

    speed: float = 0.0           # m/s along the facing direction (negative: backwards)
    lateral_speed: float = 0.0   # m/s to the left
    period: float = 0.5          # s per step
    heading: float = 0.0         # rad, target facing direction
    turn_rate: float = 0.0       # rad/s; when non-zero, the target heading turns continuously
    step_width: float = 0.1      # m between the feet's centre lines
    walking: bool = True         # False: stand (stopping first if walking)
