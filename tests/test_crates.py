"""GBWC's hands on the real engine: arm IK, grips (soft hand-handle constraints), and the crate skills of seed 000,
Sec. 5.5.4 (coros-walking.md, P3 (c), (d))."""

from __future__ import annotations

import numpy as np
import pytest

from strider.characters import load_character
from strider.control.arm_reach import ArmGeometry, arm_reach_targets, hand_point_world
from strider.errors import UsageError
from strider.methods.gbwc.crates import CRATE, CrateTask, crate_scenario
from strider.runner import Runner
from strider.sim import Box, CharacterPlacement, Grip, Prop, Scene, World

HAND_TOLERANCE = 1e-6   # m: the IK is exact within reach; forward kinematics on the engine must agree


@pytest.fixture(scope="module")
def spec():
    return load_character("bipv3")


@pytest.mark.parametrize("side, sign", [("left", 1.0), ("right", -1.0)])
def test_arm_ik_puts_the_hand_on_reachable_points_and_straightens_towards_far_ones(spec, side, sign):
    world = World(Scene((CharacterPlacement(spec),)))
    ch, arm_geo, arm = world.character(), ArmGeometry.of(spec, side), spec.roles.arms[side]
    assert (arm_geo.upper, arm_geo.lower) == pytest.approx((0.24, 0.31))
    shoulder = ch.joint_anchor(arm.shoulder)
    for target, bend in [((0.3, 0.25 * sign, 1.1), (0.0, 0.5 * sign, -1.0)), ((0.0, 0.3 * sign, 0.9), (-1, 0, 0)),
                         ((0.35, 0.2 * sign, 1.0), (-0.3, 0.4 * sign, -1.0))]:
        q, elbow = arm_reach_targets(arm_geo, shoulder, target, bend, ch.body_quat(spec.roles.torso))
        ch.set_joint_position(arm.shoulder, q)
        ch.set_joint_position(arm.elbow, elbow)
        world.forward()
        hand = hand_point_world(arm_geo, ch.body_position(arm_geo.lower_body), ch.body_quat(arm_geo.lower_body))
        assert np.linalg.norm(hand - target) < HAND_TOLERANCE
        assert -2.7 <= elbow <= 0.0   # within the elbow's range: it bends the one way it can
        # The elbow points the way asked: its offset from the shoulder-hand line has a positive share of ``bend``.
        elbow_at = ch.joint_anchor(arm.elbow)
        line = (hand - shoulder) / np.linalg.norm(hand - shoulder)
        off = (elbow_at - shoulder) - line * np.dot(elbow_at - shoulder, line)
        assert np.dot(off, bend) > 0
    far = shoulder + np.array([1.0, 0.0, 0.0])
    q, elbow = arm_reach_targets(arm_geo, shoulder, far, (0.0, 0.0, -1.0), ch.body_quat(spec.roles.torso))
    assert -0.01 < elbow <= 0.0   # nearly straight (limb_triangle keeps the knee and elbow off their lock)


def test_a_grip_holds_a_prop_only_while_closed_and_snapshots_keep_it(spec):
    left = ArmGeometry.of(spec, "left")
    scene = Scene((CharacterPlacement(spec),), props=(Prop("box", "box", (0.1, 0.1, 0.1), 2.0, (0.0, 1.2, 0.1)),),
                  grips=(Grip("left", left.lower_body, tuple(left.hand), "box", (0.0, 0.0, 0.1)),))
    world = World(scene)
    start = world.grip_gap("left")
    assert not world.grip_closed("left") and start > 0.5
    resting = world.body_position("box")
    world.step(200)
    assert np.linalg.norm(world.body_position("box") - resting) < 1e-3   # open: nothing pulls the box
    saved = world.snapshot()
    world.set_grip("left", True)
    world.step(300)
    assert world.grip_gap("left") < 0.2 * start
    world.restore(saved)
    assert not world.grip_closed("left")
    with pytest.raises(UsageError, match="no prop named 'nothing'"):
        Scene((CharacterPlacement(spec),), grips=(Grip("g", left.lower_body, (0, 0, 0), "nothing", (0, 0, 0)),))
    with pytest.raises(UsageError, match="has no body 'hand'"):
        Scene((CharacterPlacement(spec),), props=scene.props, grips=(Grip("g", "hand", (0, 0, 0), "box", (0, 0, 0)),))


def test_furniture_collides_but_is_not_ground(spec):
    table = Box("table", (1.0, 0.0, 0.4), (0.2, 0.2, 0.4), terrain=False)
    step = Box("step", (-1.0, 0.0, 0.1), (0.2, 0.2, 0.1))
    world = World(Scene((CharacterPlacement(spec),), obstacles=(table, step),
                        props=(Prop("ball", "sphere", (0.05,), 1.0, (1.0, 0.0, 1.0)),)))
    assert world.ground_height(1.0, 0.0) == pytest.approx(0.0, abs=1e-9)
    assert world.ground_height(-1.0, 0.0) == pytest.approx(0.2, abs=1e-9)
    world.step(1000)
    assert world.body_position("ball")[2] == pytest.approx(0.85, abs=0.01)   # it rests on the table's top


def test_gbwc_lifts_a_15kg_crate_from_a_table_and_carries_it_5m(spec):
    task = CrateTask.lifting(15.0)
    scenario = crate_scenario(task, spec, "default", seconds=30.0)
    runner = Runner(scenario, stop_on_fall=True)
    runner.start()
    skill = scenario.controller
    while not runner.done and skill.done_time is None:
        runner.advance(0.5)
    result = runner.finish()
    assert not result.fell and skill.done_time is not None and skill.done_time <= 30.0
    assert list(skill.stage_times) == ["approach", "reach", "grip", "lift", "turn", "carry", "done"]
    world = skill.world
    assert all(world.grip_closed(s) and world.grip_gap(s) < 0.02 for s in ("left", "right"))
    assert world.body_position(CRATE)[2] > task.table_height   # held up at the hands, not dropped or dragged
    assert skill.crate_moved() >= task.carry_distance
    # The controller counted the crate in its COM and weight while carrying it.
    assert skill.walker.load.mass == pytest.approx(15.0) and skill.walker.mass == pytest.approx(skill.character.mass + 15.0)


def test_crate_tasks_refuse_impossible_input(spec):
    with pytest.raises(UsageError, match="crate mass"):
        CrateTask.lifting(-1.0)
    with pytest.raises(UsageError, match="kind must be"):
        CrateTask("carry")
    with pytest.raises(UsageError, match="no arms"):
        crate_scenario(CrateTask.lifting(5.0), load_character("planar7"))
