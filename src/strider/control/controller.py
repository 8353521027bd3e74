"""The interface every controller implements, and the commands a locomotion controller takes."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from strider.quat import wrap_angle
from strider.sim import Character, State, World

AS_IS = "as-is"
"""A ``start`` for :meth:`Controller.reset`: take the character over as it is, mid-motion (a skill hands a push
over to a stepping controller), instead of placing it in the controller's own start pose."""


@runtime_checkable
class Controller(Protocol):
    """A plain object driving one character; it keeps its own phase and state-machine state.

    ``reset`` binds it to a character in a world and begins from ``start``: None places the character in the
    controller's own start pose, a physics :class:`~strider.sim.State` is restored first, :data:`AS_IS` takes
    the world as it stands (see :func:`begin_from`).
    ``control`` is called every ``control_period`` seconds of simulated time and
    writes servo targets and joint torques through the character view.
    ``command`` is the value it follows (for locomotion a :class:`LocomotionCommand`); ``set_command`` hands it
    a new one, and ``command_range`` (a :class:`CommandRange`) declares which ones it can follow. ``info()`` reports its state for results (``steps``, and ``target_heading`` if it steers).
    ``capabilities`` names the optional parts of the contract it has (see
    ``strider.methods.registry.CAPABILITIES``); its state, for episode snapshots,
    is its attributes (``strider.control.snapshot``). A start pose that must come to rest before time 0 is
    declared by ``settle_seconds`` > 0 and a ``settle(t)`` method, which the runner calls every control period
    for that long (and only then), before the episode starts.
    """

    control_period: float
    capabilities: frozenset[str]
    command_range: CommandRange

    def reset(self, world: World, character: Character, start: State | str | None = None) -> None: ...

    def control(self, t: float) -> None: ...

    def set_command(self, command) -> None: ...

    def has_fallen(self) -> bool: ...

    def info(self) -> dict: ...


@dataclass(frozen=True)
class LocomotionCommand:
    """What a user asks of a walking controller: an immutable value. A new command is handed to the controller
    with ``set_command`` (a plan does that through the runner's command schedule); what the controller does
    with it (its desired speed and heading, ramped and limited) is its own state.

    ``heading`` is where to face, given when the command is; with ``turn_rate`` the controller's target then
    turns on from there. None keeps the target the controller has (a change of speed does not undo a turn).
    """

    speed: float = 0.0           # m/s along the facing direction (negative: backwards)
    lateral_speed: float = 0.0   # m/s to the left
    period: float = 0.5          # s per step
    heading: float | None = 0.0  # rad, target facing direction; None: keep the current target
    turn_rate: float = 0.0       # rad/s; when non-zero, the target heading turns continuously
    step_width: float = 0.1      # m between the feet's centre lines
    walking: bool = True         # False: stand (stopping first if walking)

    def changed(self, changes: dict) -> LocomotionCommand:
        """The command after a plan's change: the fields given replaced, the heading kept unless given."""
        return dataclasses.replace(self, **{"heading": None, **changes})


@dataclass(frozen=True)
class CommandRange:
    """The commands a locomotion controller can follow, declared by the controller so that a command outside
    them is refused before the run instead of walking at whatever the controller manages."""

    speed: tuple[float, float] = (-math.inf, math.inf)    # m/s
    lateral_speed: tuple[float, float] = (-math.inf, math.inf)   # m/s
    period: tuple[float, float] = (0.0, math.inf)         # s per step
    max_turn_rate: float = math.inf                      # rad/s, either way
    step_width: tuple[float, float] = (0.0, math.inf)     # m
    stands: bool = True                                  # it can follow walking=False
    note: str = ""                                       # why the range is what it is, for the refusal

    def problem(self, command: LocomotionCommand, controller: str) -> str | None:
        """What in ``command`` lies outside this range, as one sentence naming the flag; None if all is in."""
        def outside(value: float, bounds: tuple[float, float], flag: str, unit: str) -> str | None:
            lo, hi = bounds
            if lo <= value <= hi:
                return None
            return (f"{flag} {value:g} {unit} is outside what controller {controller!r} can follow "
                    f"({_span(bounds)} {unit}{'; ' + self.note if self.note else ''})")

        if not command.walking and not self.stands:
            return f"controller {controller!r} cannot stand in place{'; ' + self.note if self.note else ''}"
        checks = ((command.speed, self.speed, "--speed", "m/s") if command.walking else None,
                  (command.lateral_speed, self.lateral_speed, "lateral speed", "m/s") if command.walking else None,
                  (command.period, self.period, "--period", "s"),
                  (command.turn_rate, (-self.max_turn_rate, self.max_turn_rate), "--turn-rate", "rad/s"),
                  (command.step_width, self.step_width, "--step-width", "m"))
        for check in checks:
            if check is not None and (problem := outside(*check)) is not None:
                return problem
        return None


def _span(bounds: tuple[float, float]) -> str:
    lo, hi = bounds
    if math.isinf(lo):
        return f"at most {hi:g}"
    if math.isinf(hi):
        return f"at least {lo:g}"
    return f"{lo:g} to {hi:g}"


class HeadingTarget:
    """A locomotion controller's target heading, rad: set by a command's heading, turned on by its turn rate."""

    def __init__(self, heading: float):
        self.value = heading

    def follow(self, command: LocomotionCommand) -> None:
        """A new command: take its heading if it gives one."""
        if command.heading is not None:
            self.value = command.heading

    def advance(self, command: LocomotionCommand, dt: float) -> float:
        """Turn on by the command's rate over ``dt`` s; the target now."""
        if command.turn_rate:
            self.value = wrap_angle(self.value + command.turn_rate * dt)
        return self.value


def begin_from(world: World, start: State | str | None) -> bool:
    """Put ``world`` where a controller's ``reset(..., start)`` asks; True when the controller should then place
    the character in its own start pose (``start`` None)."""
    if start is None:
        return True
    if isinstance(start, State):
        world.restore(start)
    elif start != AS_IS:
        raise TypeError(f"start must be None, AS_IS or a strider.sim.State, got {start!r}")
    return False
