"""Standing balance by a COM virtual force, and falling to a ragdoll (seed 003, Ch. 4), on the real engine."""

from __future__ import annotations

import numpy as np
import pytest

from strider.bench.foot_slide import FootSlideMeter
from strider.control.ragdoll import FallCone
from strider.methods.skills.controller import SkillController
from strider.methods.skills.skill import load_skill
from strider.runner import Push, Runner, Scenario
from strider.sim import CharacterPlacement, Scene, Terrain, World


def stand_run(bipv3, seconds: float, slope: float = 0.0, pushes=(), meter=None):
    terrain = Terrain("slope", slope) if slope else Terrain()
    controller = SkillController(load_skill("stand"))
    runner = Runner(Scenario(Scene((CharacterPlacement(bipv3),), terrain=terrain), controller,
                             seconds=seconds, pushes=pushes),
                    frame_rate=1.0 / controller.control_period if meter else 0.0, on_frame=meter)
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


@pytest.mark.parametrize("push", [(0.0, -800.0, 0.0), (1500.0, 0.0, 0.0), (-1500.0, 0.0, 0.0)],
                         ids=["800N-side", "1500N-behind", "1500N-front"])
def test_a_hard_push_ends_in_a_ragdoll_within_one_control_step(bipv3, push):
    """P5(a): the first control step after the cone is left switches every torque off, for good,
    whether it is left while standing or during a recovery step. (The side push was 500 N until crossover
    recovery steps caught that one; 600 N leaves the cone 1.3 s after the push begins, 800 N 0.6 s after.)"""
    world = World(Scene((CharacterPlacement(bipv3),)))
    ch = world.character()
    controller = SkillController(load_skill("stand"))
    controller.reset(world, ch)
    per = round(controller.control_period / world.timestep)
    cone = FallCone()
    left_at = None
    world.apply_force(ch.body("torso"), push, duration=0.2, start=0.5)
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
    assert left_at is not None, f"a {push} N push did not topple the standing character"


def test_no_ragdoll_without_a_fall(bipv3):
    _, result = stand_run(bipv3, 3.0)
    assert not result.fell


@pytest.mark.parametrize("force, direction", [(150.0, 0.0), (150.0, 180.0), (150.0, 90.0)],
                         ids=["150N-behind", "150N-front", "150N-left"])
def test_a_push_beyond_the_feet_is_caught_by_stepping_then_it_stands_again(bipv3, force, direction):
    """0.2 s pushes (P1) whose capture point leaves the feet: the COM force alone falls, a step catches it."""
    runner, result = stand_run(bipv3, 7.2, pushes=(Push(force, 2.0, direction, 0.2),))
    controller = runner.scenario.controller
    assert not result.fell and not runner.character.non_foot_contact()
    assert result.steps >= 1 and controller.recoveries >= 1
    assert controller.state.name == "balance", "it did not return to standing by the COM force"


def test_no_step_for_a_push_the_com_force_absorbs(bipv3):
    runner, result = stand_run(bipv3, 5.0, pushes=(Push(50.0, 2.0, 0.0, 0.2),))
    assert not result.fell
    assert result.steps == 0 and runner.scenario.controller.recoveries == 0


def test_feet_do_not_creep_on_a_15_degree_slope(bipv3):
    """P2: loaded feet slide less than 0.05 m in 10 s (the hip chatter that walked them downhill is gone)."""
    meter = FootSlideMeter()
    _, result = stand_run(bipv3, 10.0, slope=15.0, meter=meter)
    assert not result.fell
    assert meter.worst < 0.05, meter.slide


def test_a_250_n_push_up_a_15_degree_slope_is_stepped_over(bipv3):
    """Issue 5's headline: facing up a 15 deg slope, pushed 250 N for 0.2 s from behind at 3 s. The flat-ground
    foothold of the first recovery step lay too far up the slope to climb over; the body fell back and the steps
    back downhill ran away (a fall at 6.2 s) until the foothold allowed for the rise (recovery_slope_uphill)."""
    runner, result = stand_run(bipv3, 8.2, slope=15.0, pushes=(Push(250.0, 3.0, 0.0, 0.2),))
    assert not result.fell and not runner.character.non_foot_contact()
    assert result.steps > 0


@pytest.mark.parametrize(("slope", "direction"), [(-15.0, 0.0), (10.0, 180.0)])
def test_a_250_n_push_down_a_slope_is_stepped_to_a_stop(bipv3, slope, direction):
    """Pushed 250 N down a slope (from behind facing down 15 deg, from the front facing up 10 deg), the recovery
    steps ran away downhill and fell until the stance knee bent with the ground's fall (GBWCParams.downhill_knee)."""
    runner, result = stand_run(bipv3, 7.2, slope=slope, pushes=(Push(250.0, 2.0, direction, 0.2),))
    assert not result.fell and not runner.character.non_foot_contact()
    assert result.steps > 0


def test_feet_stay_put_on_flat_ground(bipv3):
    meter = FootSlideMeter()
    _, result = stand_run(bipv3, 10.0, meter=meter)
    assert not result.fell
    assert meter.worst < 0.01, meter.slide


def test_a_side_push_that_lifts_a_foot_is_absorbed_without_a_step(bipv3):
    """P1, 100 N from the left: the push tips the body onto the right foot. The lifted foot is pressed back
    down (``plant``), so the body turns back over both feet with no step and no slide; without it the left
    foot hovered, the COM crept over the right foot and the character fell a second later."""
    meter = FootSlideMeter()
    runner, result = stand_run(bipv3, 7.2, pushes=(Push(100.0, 2.0, 90.0, 0.2),), meter=meter)
    assert not result.fell and not runner.character.non_foot_contact()
    assert result.steps == 0 and runner.scenario.controller.recoveries == 0
    assert meter.worst < 0.1, meter.slide


def test_a_250_n_side_push_is_caught_by_one_step(bipv3):
    """P1's force from the left, caught by stepping. (Before the hovering stance foot shared the root control,
    ``recovery_stance_load``, a swing path that only arrived at the foothold at the strike landed short here
    and the body toppled over the stepping foot; ``recovery_swing_reach_phase`` is now 1.0.)"""
    runner, result = stand_run(bipv3, 7.2, pushes=(Push(250.0, 2.0, 90.0, 0.2),))
    assert not result.fell and not runner.character.non_foot_contact()
    assert result.steps >= 1 and runner.scenario.controller.recoveries >= 1


@pytest.mark.parametrize("direction", [0.0, 45.0, 135.0], ids=["behind", "left-behind", "left-front"])
def test_a_250_n_push_is_stepped_over_without_a_slide(bipv3, direction):
    """P1 at 250 N: the push lifts the foot the recovery step then stands on. Driving the pelvis through that
    hovering leg swung it and it landed sliding (0.131 m from behind); with the root control shared by the
    stance foot's load (``recovery_stance_load``) it comes down where it was. From the left-front the recovery
    steps slid 0.174 m while their swing path reached the foothold at phase 0.7; reaching it at the strike
    (``recovery_swing_reach_phase`` 1.0), 0.098 m."""
    meter = FootSlideMeter()
    runner, result = stand_run(bipv3, 7.2, pushes=(Push(250.0, 2.0, direction, 0.2),), meter=meter)
    assert not result.fell and not runner.character.non_foot_contact()
    assert result.steps >= 1
    assert meter.worst < 0.1, meter.slide


def test_a_push_from_the_front_hands_back_to_the_com_force_only_with_the_feet_together(bipv3):
    """P1 at 150 N from the front: the recovery step backwards lands long, and with the COM force pulling the
    body between the wide-apart feet the front foot lifted, wandered, and the next steps dragged a lightly
    loaded foot 0.18 m. ``feet_within`` keeps the stepper on until a closing step."""
    meter = FootSlideMeter()
    spans = []

    def watch(world, t):
        meter(world, t)
        controller = runner.scenario.controller
        if controller.state.name == "balance" and controller.recoveries:
            ankles = [runner.character.joint_anchor(controller.roles.legs[s].ankle) for s in ("left", "right")]
            spans.append(float(np.linalg.norm((ankles[0] - ankles[1])[:2])))

    controller = SkillController(load_skill("stand"))
    runner = Runner(Scenario(Scene((CharacterPlacement(bipv3),)), controller, seconds=7.2,
                             pushes=(Push(150.0, 2.0, 180.0, 0.2),)),
                    frame_rate=1.0 / controller.control_period, on_frame=watch)
    result = runner.run()
    assert not result.fell and controller.recoveries >= 1 and controller.state.name == "balance"
    assert spans and spans[0] <= 0.35
    assert meter.worst < 0.1, meter.slide


@pytest.mark.parametrize("direction", [90.0, 270.0], ids=["left", "right"])
def test_a_250_n_side_push_is_caught_by_a_crossover_step_without_a_slide(bipv3, direction):
    """P1 at 250 N from the side: the push lifts the foot on its own side. Standing on that hovering foot and
    stepping out with the loaded one had both feet in the air and slid 0.146 m; the lifted foot now steps,
    crossing the loaded one to the foothold beyond it (``recovery_crossover_load``), and no foot slides."""
    meter = FootSlideMeter()
    loaded = "right" if direction == 90.0 else "left"    # +y is left: the push from the left sends the body to -y
    first_stance = []

    def watch(world, t):
        meter(world, t)
        delegate = runner.scenario.controller.delegate
        if delegate is not None and not first_stance:
            first_stance.append(delegate.info()["stance"])

    controller = SkillController(load_skill("stand"))
    runner = Runner(Scenario(Scene((CharacterPlacement(bipv3),)), controller, seconds=7.2,
                             pushes=(Push(250.0, 2.0, direction, 0.2),)),
                    frame_rate=1.0 / controller.control_period, on_frame=watch)
    result = runner.run()
    assert not result.fell and not runner.character.non_foot_contact()
    assert first_stance == [loaded], "the first recovery step should stand on the loaded foot"
    assert meter.worst < 0.1, meter.slide


@pytest.mark.parametrize("force, direction", [(234.0, 135.0), (275.0, 135.0), (275.0, 225.0)],
                         ids=["234N-left-front", "275N-left-front", "275N-right-front"])
def test_a_push_back_and_sideways_is_stepped_over_with_a_soft_stance_hip(bipv3, force, direction):
    """P1 from the front diagonals: the push lifts the far foot, which the recovery step stands on as the body
    falls away from it. With the full root gains the pelvis' righting pushed that lightly loaded foot outwards
    and it slid (0.107 m at 234 N, 0.189 m at 275 N); the recovery's stance hip now runs at
    ``recovery_backward_hip_scale`` of them (0.048 and 0.079 m)."""
    meter = FootSlideMeter()
    softened = []

    def watch(world, t):
        meter(world, t)
        delegate = runner.scenario.controller.delegate
        if delegate is not None and delegate.info()["recovery"] == "soft stance":
            softened.append(t)

    controller = SkillController(load_skill("stand"))
    runner = Runner(Scenario(Scene((CharacterPlacement(bipv3),)), controller, seconds=7.2,
                             pushes=(Push(force, 2.0, direction, 0.2),)),
                    frame_rate=1.0 / controller.control_period, on_frame=watch)
    result = runner.run()
    assert not result.fell and not runner.character.non_foot_contact()
    assert result.steps >= 1 and softened, "the recovery should soften the stance hip"
    assert meter.worst < 0.1, meter.slide
