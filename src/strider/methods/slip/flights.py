"""The flights a SLIP episode makes, as the planner's apex term reads a flight (Mordatch et al. 2010, Eq. 23).

Bookkeeping only: the controller notes, at every control step, whether any foot is down and how high the COM
is; nothing it plans or solves reads the log back. Reports (a run's summary, protocol 1's jump figures) do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

MIN_FLIGHT_SECONDS = 0.02   # a flight counts from this long with no foot down (slip-planning.md, protocol 1)
CLOCK_SLACK = 1e-9          # s: control-step times are sums of periods; comparisons allow for their rounding


@dataclass(frozen=True)
class Flight:
    start: float       # s: the first control step with no foot down
    end: float         # s: the last one
    rise: float        # m: h_eps, the COM's highest point in the flight above the higher of its two ends

    def seconds(self, control_period: float) -> float:
        """How long the flight lasted, counting its control steps."""
        return self.end - self.start + control_period


@dataclass
class FlightLog:
    flights: list[Flight] = field(default_factory=list)
    _open: list[float] | None = None    # start, last, COM height at start, at last, highest

    def observe(self, t: float, airborne: bool, com_height: float) -> None:
        """One control step: whether no foot is down, and the COM's height."""
        f = self._open
        if airborne:
            if f is None:
                self._open = [t, t, com_height, com_height, com_height]
            else:
                f[1], f[3], f[4] = t, com_height, max(f[4], com_height)
        elif f is not None:
            self.flights.append(self._as_flight(f))
            self._open = None

    @staticmethod
    def _as_flight(open_flight: list[float]) -> Flight:
        start, last, first_height, last_height, top = open_flight
        return Flight(start, last, top - max(first_height, last_height))

    def all(self) -> list[Flight]:
        """Every flight so far, one still under way included (as it stands)."""
        return self.flights + ([self._as_flight(self._open)] if self._open is not None else [])

    def lasting(self, min_seconds: float, control_period: float, since: float = -math.inf) -> list[Flight]:
        """The flights that lasted at least ``min_seconds`` and started at ``since`` or later (within a clock's
        rounding: times are sums of control periods)."""
        return [f for f in self.all()
                if f.start >= since - CLOCK_SLACK and f.seconds(control_period) >= min_seconds - CLOCK_SLACK]
