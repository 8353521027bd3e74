"""The step state machine and capture-point step timing (strider.control.step_fsm, step_timing)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strider.control.step_fsm import StepStateMachine, StrikeParams
from strider.control.step_timing import StepTimingParams, remaining_step_time, time_to_catch

G = 9.81
WEIGHT = 700.0
DT = 0.01


def test_nominal_step_ends_at_its_period_without_a_strike():
    fsm = StepStateMachine(period=0.5)
    ended_at = None
    for k in range(1, 100):
        if fsm.advance(DT, 0.0, WEIGHT):
            ended_at = k * DT
            break
    assert ended_at == pytest.approx(0.5, abs=DT)
    assert fsm.stance == "right" and fsm.steps == 1


def test_strike_ends_a_step_only_after_the_foot_lifted_and_min_phase():
    fsm = StepStateMachine(period=0.5)
    loaded = 0.5 * WEIGHT
    assert not fsm.advance(DT, loaded, WEIGHT)              # still loaded from the last stance: not a strike
    for _ in range(5):
        assert not fsm.advance(DT, 0.0, WEIGHT)             # lifted, but before min_phase
    while fsm.phase < StrikeParams().min_phase:
        fsm.advance(DT, 0.0, WEIGHT)
    assert fsm.advance(DT, loaded, WEIGHT)


def test_hurry_speeds_the_phase_but_the_step_waits_for_its_strike():
    fsm = StepStateMachine(period=0.5)
    for _ in range(10):
        fsm.advance(DT, 0.0, WEIGHT, remaining=0.1)
    # 0.1 s into a 0.5 s step the phase is far beyond 0.2, closing in on 1 ...
    assert fsm.phase > 0.6
    assert fsm.steps == 0
    # ... and a strike then ends the step.
    assert fsm.advance(DT, WEIGHT, WEIGHT, remaining=0.1)


def test_time_to_catch_follows_the_pendulum_divergence():
    height, reach = 1.0, np.array([1.0, 0.4])
    omega = math.sqrt(G / height)
    # Capture point 0.2 m to the side of the stance foot: it reaches 0.4 m after ln(2) / omega.
    offset, velocity = np.array([0.0, 0.1]), np.array([0.0, 0.1 * omega])
    assert time_to_catch(offset, velocity, height, G, reach) == pytest.approx(math.log(2) / omega)
    # Already beyond reach: no time left.
    assert time_to_catch(np.array([0.0, 0.5]), np.zeros(2), height, G, reach) == 0.0
    # Exactly captured: never.
    assert math.isinf(time_to_catch(np.array([0.1, 0.0]), np.array([-0.1 * omega, 0.0]), height, G, reach))


def test_remaining_step_time_is_floored_and_can_be_switched_off():
    params = StepTimingParams(min_remaining=0.12)
    far = remaining_step_time(np.array([0.0, 0.6]), np.zeros(2), 1.0, G, 1.0, params)
    assert far == pytest.approx(0.12)
    calm = remaining_step_time(np.array([0.0, -0.05]), np.array([0.0, 0.15]), 1.0, G, 1.0, params)
    assert calm is None or calm > 0.12
    assert remaining_step_time(np.array([0.0, 0.6]), np.zeros(2), 1.0, G, 1.0,
                               StepTimingParams(enabled=False)) is None


def test_capture_point_past_the_stance_foot_s_outer_side_ends_the_step_early():
    """Sideways, the swing foot cannot reach past the stance foot: there the short outward reach applies."""
    params = StepTimingParams(min_remaining=0.05, lateral_reach=0.45, outward_reach=0.12)
    # Capture point 0.2 m out past a left stance foot (+y is its outer side), drifting further out.
    offset, velocity = np.array([0.0, 0.1]), np.array([0.0, 0.3])
    symmetric = remaining_step_time(offset, velocity, 1.0, G, 1.0, params)
    left = remaining_step_time(offset, velocity, 1.0, G, 1.0, params, outer_side=1.0)
    right = remaining_step_time(offset, velocity, 1.0, G, 1.0, params, outer_side=-1.0)
    assert left == pytest.approx(0.05)          # already past 0.12 m: land now
    assert right == symmetric and right > 0.1   # for a right stance foot that is the swing side
