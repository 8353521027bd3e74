"""Standing balance by a COM virtual force, and falling to a ragdoll (seed 003, Ch. 4), on the real engine."""

from __future__ import annotations

import numpy as np
import pytest

from strider.control.ragdoll import FallCone
from strider.methods.skills.controller import SkillController
from strider.methods.skills.skill import load_skill
from strider.runner import Push, Runner, Scenario
from strider.sim import CharacterPlacement, Scene, Terrain, World


def stand_run(bipv3, seconds: float, slope: float = 0.0, pushes=()):
    terrain = Terrain("slope", slope) if slope else Terrain()
    runner = Runner(Scenario(Scene((CharacterPlacement(bipv3),), terrain=terrain), SkillController(load_skill("stand")),
                             seconds=seconds, pushes=pushes))
    return runner, runner.run()


@pytest.mark.parametrize("slope", [-20.0, 0.0, 20.0])
def test_stands_on_flat_ground_and_slopes(bipv3, slope):
    runner, result = stand_run(bipv3, 5.0, slope)
    assert not result.fell
    assert not runner.character.non_foot_contact()
    assert result.distance_m < 0.1


def test_a_small_push_is_survived(bipv3):
    runner, result = stand_run(bipv3, 4.0, pushes=(Push(50.0, 1.0, 90.0, 0.2),))
    assert not result.fell and not runner.character.non_foot_contact()


def test_a_hard_push_ends_in_a_ragdoll_within_one_control_step(bipv3):
    """P5(a): the first control step after the cone is left switches every torque off, for good."""
    world = World(Scene((CharacterPlacement(bipv3),)))
    ch = world.character()
    controller = SkillController(load_skill("stand"))
    controller.reset(world, ch)
    per = round(controller.control_period / world.timestep)
    cone = FallCone()
    left_at = None
    world.apply_force(ch.body("torso"), (0.0, -500.0, 0.0), duration=0.2, start=0.5)
    for k in range(600):
        outside = cone.left(ch)
        if outside and left_at is None:
            left_at = k
        controller.control(k * controller.control_period)
        if left_at is not None:
            assert controller.has_fallen(), "the ragdoll came later than the control step after the cone was left"
            assert controller.state.name == "ragdoll"
        world.step(per)
        if left_at is not None:
            assert np.all(world.data.actuator_force[np.concatenate([j.servos for j in ch.joints.values()])] == 0.0)
            assert np.all(world.data.qfrc_applied[ch.internal_dofs] == 0.0)
    assert left_at is not None, "a 500 N push did not topple the standing character"


def test_no_ragdoll_without_a_fall(bipv3):
    _, result = stand_run(bipv3, 3.0)
    assert not result.fell
