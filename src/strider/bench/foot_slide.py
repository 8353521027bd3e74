"""Foot slide: how far a foot slips over the ground while it bears weight (torres-skills.md, P1 and P2).

A step is not a slide. The slide of a foot is the path length of its contact with the
ground, tangential to the ground, while that contact carries at least
``load_fraction`` of body weight: the integral of the slip speed
(:meth:`strider.sim.Character.terrain_contact_slip`, over the foot and its toes) over the
time the foot is loaded. Lifting a foot and putting it down elsewhere adds nothing;
creeping down a slope or being dragged while loaded does. The meter is a runner frame
sink, sampled at the control rate or faster.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from strider.control.step_fsm import StrikeParams
from strider.sim import World

SIDES = ("left", "right")
LOAD_FRACTION = StrikeParams().force_fraction   # the load at which a foot counts as down (coros-walking.md, Sec. 4)


@dataclass
class FootSlideMeter:
    """Accumulates each foot's slide (m) when called as ``meter(world, t)`` at regular times."""

    character: str | None = None
    load_fraction: float = LOAD_FRACTION
    slide: dict[str, float] = field(default_factory=lambda: {s: 0.0 for s in SIDES})
    _last_t: float | None = None

    def __call__(self, world: World, t: float) -> None:
        ch = world.character(self.character)
        dt = 0.0 if self._last_t is None else t - self._last_t
        self._last_t = t
        weight = ch.mass * world.scene.gravity
        for side in SIDES:
            leg = ch.spec.roles.legs[side]
            bodies = [ch.body(b) for b in (leg.foot, leg.toes) if b]
            load, slip = ch.terrain_contact_slip(bodies)
            if load >= self.load_fraction * weight:
                self.slide[side] += float((slip @ slip) ** 0.5) * dt

    @property
    def worst(self) -> float:
        return max(self.slide.values())
