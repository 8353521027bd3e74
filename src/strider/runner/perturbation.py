"""Pushes: timed horizontal forces on the torso (or the head), the one push type from the command line to the result.

A :class:`Push` is parsed from ``F@T[:DIR_DEG[:DURATION]]`` (``--push``, the Python API, plans and benchmark
trials all hold the same value); the runner turns it into a world force when its time comes
(:meth:`Push.force_vector`, recorded by the world as a :class:`~strider.sim.TimedForce`) and reports it back in
the :class:`PushOutcome`.

**Direction.** ``direction_deg`` is where the push comes *from*, measured counter-clockwise from behind the
character, relative to the way it faces *when the push comes* (its root's yaw at that moment, not at the start
of the run): 0 from behind (pushing forwards), 90 from the left (pushing to the right), 180 from the front,
270 from the right.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from strider.errors import UsageError

DEFAULT_PUSH_DURATION = 0.1   # s (seed 000, Sec. 5.6: 0.1 s pushes)
MAX_PUSH_DURATION = 10.0      # s: longer is a constant force, not a push
PUSHED_BODIES = ("torso", "head")   # character roles a push may go at

_PUSH_RE = re.compile(r"^\s*([^@:]+)@([^@:]+)(?::([^@:]+))?(?::([^@:]+))?(?:@([a-z]+))?\s*$")


@dataclass(frozen=True)
class Push:
    """A horizontal push of ``force`` N at ``time`` s for ``duration`` s, from ``direction_deg`` (see the module:
    relative to the facing when the push comes)."""

    force: float
    time: float
    direction_deg: float = 0.0
    duration: float = DEFAULT_PUSH_DURATION
    body: str = "torso"     # the body role pushed at its centre of mass: torso or head

    def __post_init__(self) -> None:
        for name in ("force", "time", "direction_deg", "duration"):
            if not math.isfinite(getattr(self, name)):
                raise UsageError(f"push {name} must be finite")
        if self.force < 0:
            raise UsageError(f"push force must be >= 0 N, got {self.force}")
        if self.time < 0:
            raise UsageError(f"push time must be >= 0 s, got {self.time}")
        if not (0 < self.duration <= MAX_PUSH_DURATION):
            raise UsageError(f"push duration must be in (0, {MAX_PUSH_DURATION}] s, got {self.duration}")
        if self.body not in PUSHED_BODIES:
            raise UsageError(f"a push goes at the {' or the '.join(PUSHED_BODIES)}, not {self.body!r}")

    @staticmethod
    def parse(text: str) -> Push:
        m = _PUSH_RE.match(text)
        if not m:
            raise UsageError(f"--push {text!r}: expected F@T[:DIR_DEG[:DURATION]][@head], e.g. 600@4.0:90:0.1")
        *numbers, body = m.groups()
        try:
            values = [float(g) if g is not None else None for g in numbers]
        except ValueError:
            raise UsageError(f"--push {text!r}: F, T, DIR_DEG and DURATION must be numbers") from None
        force, t, direction, duration = values
        return Push(force, t, 0.0 if direction is None else direction,
                    DEFAULT_PUSH_DURATION if duration is None else duration, body or "torso")

    def __str__(self) -> str:
        """The ``--push`` form, which :meth:`parse` reads back (``@head`` for a push at the head)."""
        at = "" if self.body == "torso" else f"@{self.body}"
        return f"{self.force:g}@{self.time:g}:{self.direction_deg:g}:{self.duration:g}{at}"

    def as_dict(self) -> dict:
        return {"force": self.force, "time": self.time, "direction_deg": self.direction_deg,
                "duration": self.duration, "body": self.body}

    def force_vector(self, heading: float) -> tuple[float, float, float]:
        """World force for a character facing ``heading`` (rad) when the push comes."""
        # Directions count counter-clockwise from behind, so "from the left" (90) pushes towards -y.
        ang = heading + math.radians(-self.direction_deg)
        return (self.force * math.cos(ang), self.force * math.sin(ang), 0.0)


@dataclass(frozen=True)
class PushOutcome:
    """A push as given, and whether the character survived it (did not fall before the next push, or the end)."""

    push: Push
    survived: bool

    def as_dict(self) -> dict:
        return {**self.push.as_dict(), "survived": self.survived}
