"""Throws: balls launched at the character, loose bodies of the scene that it must not be hit by.

A :class:`Throw` names when a ball leaves and from where: ``distance`` m from the character's centre of mass,
``azimuth_deg`` counter-clockwise from where it faces at that moment, at the COM's height, on the ballistic path
that reaches where the COM is at launch after ``flight`` s (Mordatch et al. 2010, Sec. 7, with the numbers of
its projectile protocol). Each throw has a ball of its own in the scene (:func:`ball_props`), resting far off
until its time. The :class:`Thrower` hook launches the balls and watches for contact between each ball and the
character; the outcomes say which throws hit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from strider.errors import UsageError, require_finite
from strider.runner.hooks import EpisodeHook, RunningEpisode
from strider.sim.scene import Prop

BALL_PARKING = (0.0, 40.0)   # m (x, y): where balls rest before their throw, far from anything walked on
BALL_SPACING = 1.0           # m between parked balls


@dataclass(frozen=True)
class Throw:
    time: float                 # s after the episode's start
    azimuth_deg: float = 0.0    # from the facing at launch, counter-clockwise (0: from straight ahead)
    distance: float = 8.0       # m (slip-planning.md P5)
    flight: float = 1.0         # s to reach the COM's launch-time position (same)
    radius: float = 0.1         # m (same)
    mass: float = 0.5           # kg (same)

    def __post_init__(self) -> None:
        require_finite("a throw's azimuth_deg", self.azimuth_deg, "deg")
        require_finite("a throw's time", self.time, "s")
        if self.time < 0:
            raise UsageError(f"a throw's time must be >= 0 s, got {self.time}")
        for name, unit in (("distance", "m"), ("flight", "s"), ("radius", "m"), ("mass", "kg")):
            require_finite(f"a throw's {name}", getattr(self, name), unit, positive=True)

    @staticmethod
    def seeded(seed: int, time: float, spread_deg: float = 90.0) -> Throw:
        """A throw from an azimuth drawn uniformly within ``spread_deg`` either side of the facing."""
        rng = np.random.default_rng(seed)
        return Throw(time, float(rng.uniform(-spread_deg, spread_deg)))

    def launch(self, com: np.ndarray, facing: float, gravity: float) -> tuple[np.ndarray, np.ndarray]:
        """The ball's start and velocity for a COM at ``com`` with the character facing ``facing`` (rad)."""
        angle = facing + math.radians(self.azimuth_deg)
        start = com + self.distance * np.array([math.cos(angle), math.sin(angle), 0.0])
        velocity = (com - start) / self.flight + np.array([0.0, 0.0, 0.5 * gravity * self.flight])
        return start, velocity

    def as_dict(self) -> dict:
        return {"time": self.time, "azimuth_deg": self.azimuth_deg, "distance": self.distance,
                "flight": self.flight, "radius": self.radius, "mass": self.mass}


@dataclass(frozen=True)
class ThrowOutcome:
    throw: Throw
    hit: bool
    hit_bodies: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {**self.throw.as_dict(), "hit": self.hit, "hit_bodies": list(self.hit_bodies)}


def ball_name(index: int) -> str:
    return f"ball{index}"


def ball_props(throws: tuple[Throw, ...]) -> tuple[Prop, ...]:
    """One resting ball per throw, parked far off, for the scene."""
    x, y = BALL_PARKING
    return tuple(Prop(ball_name(i), "sphere", (t.radius,), t.mass, (x + BALL_SPACING * i, y, t.radius))
                 for i, t in enumerate(throws))


def launch_ball(runner: RunningEpisode, index: int, throw: Throw) -> None:
    """Send ball ``index`` on ``throw``'s path at the character's centre of mass now."""
    world = runner.world
    start, velocity = throw.launch(runner.character.com_position(), runner.facing(), world.scene.gravity)
    world.set_free_motion(ball_name(index), start, velocity)
    world.forward()


def park_ball(runner: RunningEpisode, index: int) -> None:
    """Put ball ``index`` back at rest where it waited for its throw, out of the way."""
    prop = next(p for p in runner.world.scene.props if p.name == ball_name(index))
    runner.world.set_free_motion(prop.name, prop.pos, (0.0, 0.0, 0.0))
    runner.world.forward()


def touching_character(runner: RunningEpisode, index: int) -> set[str]:
    """The character's bodies ball ``index`` touches now."""
    mine = f"{runner.character.name}/"
    return {b for b in runner.world.bodies_touching(ball_name(index)) if b.startswith(mine)}


class Thrower(EpisodeHook):
    """Launches each throw's ball when its time comes and records which character bodies it touched."""

    def __init__(self, throws: tuple[Throw, ...]):
        self.throws = tuple(throws)
        self.launched = [False] * len(self.throws)
        self.hit_bodies: list[set[str]] = [set() for _ in self.throws]

    def before_control(self, runner: RunningEpisode, t: float) -> None:
        for i, throw in enumerate(self.throws):
            if not self.launched[i] and t >= throw.time - 1e-9:
                launch_ball(runner, i, throw)
                self.launched[i] = True

    def after_control(self, runner: RunningEpisode, t: float) -> None:
        for i, done in enumerate(self.launched):
            if done:
                self.hit_bodies[i] |= touching_character(runner, i)

    def outcomes(self) -> list[ThrowOutcome]:
        return [ThrowOutcome(throw, bool(hits), tuple(sorted(hits)))
                for throw, hits in zip(self.throws, self.hit_bodies, strict=True)]
