"""Shipped skills on the real engine: each rolling skill reaches its end condition (torres-skills.md, P6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strider.methods.skills.controller import SkillController, mirror_axis
from strider.methods.skills.optimize import with_parameters
from strider.methods.skills.rollout import check_passes, cost, reaches_end, rollout
from strider.methods.skills.skill import CostTerm, load_skill
from strider.runner import Runner, Scenario
from strider.sim import CharacterPlacement, Scene

ROLLS = ("roll-supine-to-prone", "roll-prone-to-supine", "roll-repeated", "forward-roll")


@pytest.mark.parametrize("name", ROLLS)
def test_shipped_rolling_skill_reaches_its_end_condition(name):
    skill = load_skill(name)
    assert reaches_end(skill, rollout(skill))


@pytest.mark.parametrize("name", ["roll-supine-to-prone", "roll-prone-to-supine"])
def test_the_end_condition_can_fail(name):
    """The same check on the un-optimized initial guess (Tables 6.1/6.2) fails: the character does not roll."""
    from strider.methods.skills.skill import DATA_DIR

    skill = load_skill(DATA_DIR / "initial" / f"{name}.yaml")
    assert not reaches_end(skill, rollout(skill))


def test_rollouts_are_deterministic_and_perturbations_are_seeded():
    skill = load_skill("roll-supine-to-prone")
    a, b = rollout(skill, perturb=0.05, seed=4), rollout(skill, perturb=0.05, seed=4)
    c = rollout(skill, perturb=0.05, seed=5)
    assert np.array_equal(a.front, b.front) and a.effort == b.effort
    assert not np.array_equal(a.front, c.front)


def test_a_cached_start_gives_the_same_rollout():
    skill = load_skill("roll-prone-to-supine")
    cache: dict = {}
    first = rollout(skill, cache=cache)
    again = rollout(skill, cache=cache)
    fresh = rollout(skill)
    assert np.array_equal(first.front, again.front) and np.array_equal(first.front, fresh.front)


def test_lying_starts_face_up_or_down(bipv3):
    for name, sign in (("roll-supine-to-prone", 1.0), ("roll-prone-to-supine", -1.0)):
        trace = rollout(load_skill(name), seconds=0.01)
        assert sign * trace.front[0, 2] > 0.9


def test_fall_skill_ends_limp_and_walk_skill_walks(bipv3):
    fall = Runner(Scenario(Scene((CharacterPlacement(bipv3),)), SkillController(load_skill("fall")), seconds=3.0))
    assert fall.run().fell and fall.scenario.controller.limp
    walk = Runner(Scenario(Scene((CharacterPlacement(bipv3),)), SkillController(load_skill("walk")), seconds=4.0))
    result = walk.run()
    assert not result.fell and result.distance_m > 1.5


def test_mirrored_axes_reflect_through_the_sagittal_plane():
    assert np.array_equal(mirror_axis((1.0, 2.0, 3.0)), np.array([-1.0, 2.0, -3.0]))


def test_a_windowed_angle_term_is_the_closest_approach_or_the_mean_over_its_window():
    """Shaping for CMA (Sec. 6.2: terms may be evaluated during the motion): progress counts before the end."""
    trace = rollout(load_skill("roll-supine-to-prone"))
    at = [cost((CostTerm("angle", 1.0, at=float(t)),), trace) for t in trace.t]
    closest = cost((CostTerm("angle", 1.0, window=(0.0, 3.0)),), trace)
    mean = cost((CostTerm("angle", 1.0, window=(0.0, 3.0), reduce="mean"),), trace)
    assert closest == min(at) and min(at) < mean < max(at)
    assert at[0] - closest > 2.0   # from supine (front pi from down) to nearly prone
    first_second = cost((CostTerm("angle", 1.0, window=(0.0, 1.0)),), trace)
    assert first_second == min(at[:101]) and first_second > closest


# The forward roll's knots before it was asked to turn forwards: it sat down backwards onto its back.
SIT_BACK = (6.42189, -0.34307, 9.456672, 4.375644, 4.720229, -8.775375, -7.833816, 0.447781, 22.14997, 5.893632)


def test_the_forward_roll_goes_over_the_head_and_sitting_back_does_not_count():
    """P6(d) alone is met by sitting down backwards onto the back (about -pi/2 of pitch); the shipped roll
    turns the torso forwards by more than a half turn and carries the pelvis forwards."""
    skill = load_skill("forward-roll")
    trace = rollout(skill)
    assert reaches_end(skill, trace)
    assert trace.pitch()[-1] > math.pi and trace.travel[-1] > 0.5
    lying, forwards = skill.checks
    back = rollout(with_parameters(skill, np.array(SIT_BACK)))
    assert check_passes(lying, back) and not check_passes(forwards, back)
    assert back.pitch()[-1] < 0 and back.travel[-1] < 0
