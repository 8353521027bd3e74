"""The step state machine (seed 000, Sec. 5.3.1): phase = t / T; a step ends at foot strike or t >= T.

Foot strike is the swing foot's normal force exceeding a fraction of body
weight once the step is under way (coros-walking.md, Sec. 4: 0.1 m g with
phase >= 0.25).

The phase is integrated rather than computed from the step's time, so a
controller may run the rest of a step faster than 1/T (see
:mod:`strider.control.step_timing`): the swing then lands sooner along the
same phase-indexed trajectories.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StrikeParams:
    force_fraction: float = 0.1   # of body weight (coros-walking.md, Sec. 4)
    min_phase: float = 0.25       # (coros-walking.md, Sec. 4)


def other(side: str) -> str:
    return "right" if side == "left" else "left"


@dataclass
class StepStateMachine:
    """Which foot is the stance foot and how far the current step has gone."""

    period: float
    stance: str = "left"
    step_time: float = 0.0
    steps: int = 0
    lifted: bool = False   # the swing foot has been unloaded since the step began
    phase_value: float = 0.0

    @property
    def swing(self) -> str:
        return other(self.stance)

    @property
    def phase(self) -> float:
        return min(self.phase_value, 1.0)

    def advance(self, dt: float, swing_normal_force: float, weight: float,
                params: StrikeParams = StrikeParams(), remaining: float | None = None) -> bool:
        """Move time on; return True when a new step has begun (stance switched).

        ``remaining`` (s), when given and shorter than the nominal rest of the
        step, is how long the rest of this step should now take.
        """
        rate = 1.0 / self.period
        if remaining is not None and remaining > 0.0:
            # Re-planned every update: while the hurry lasts the phase closes in on 1 with this time
            # constant, so the swing foot comes down onto its foothold and the strike ends the step.
            rate = max(rate, (1.0 - self.phase_value) / remaining)
        self.step_time += dt
        self.phase_value += dt * rate
        loaded = swing_normal_force > params.force_fraction * weight
        # A strike is a new contact: a foot still dragging from the last stance does not end the step.
        struck = loaded and self.lifted and self.phase >= params.min_phase
        self.lifted = self.lifted or not loaded
        # A hurried step nears phase 1 early and then waits for its strike, up to the nominal period.
        if struck or self.step_time >= self.period:
            self.begin(self.swing)
            self.steps += 1
            return True
        return False

    def begin(self, stance: str) -> None:
        """Start a step on ``stance``."""
        self.stance = stance
        self.step_time = 0.0
        self.phase_value = 0.0
        self.lifted = False
