"""Thrown balls and pushes at the head, on the engine: a ball follows the ballistic path its throw promises and
hits a character that stands still; the SLIP planner plans around a ball it sees and not one it is blind to; a
head push goes at the head; the SLIP protocols' terrain features and random pushes are what they say."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest

from strider.bench.protocol import TerrainFeature, load_protocol
from strider.bench.random_push import draw_pushes
from strider.bench.terrain import course_for
from strider.characters import load_character
from strider.control.controller import LocomotionCommand
from strider.errors import UsageError
from strider.methods.registry import make_controller
from strider.methods.slip.controller import SlipController, SlipParams
from strider.methods.slip.gait import load_gait
from strider.methods.slip.objectives import Projectile
from strider.runner import Push, Runner, Scenario
from strider.runner.throws import Throw, Thrower, ball_name, ball_props
from strider.sim import CharacterPlacement, Scene, World

GRAVITY = 9.81


def test_a_throw_reaches_where_the_com_was_at_launch_after_its_flight():
    throw = Throw(0.0, azimuth_deg=30.0, distance=8.0, flight=1.0)
    com, facing = np.array([1.0, 2.0, 0.9]), math.radians(45.0)
    start, velocity = throw.launch(com, facing, GRAVITY)
    # Hand-worked ballistics against NumPy's arithmetic: within rounding.
    landing = start + velocity * throw.flight + 0.5 * np.array([0.0, 0.0, -GRAVITY]) * throw.flight ** 2
    assert landing == pytest.approx(com, abs=1e-12)
    assert start[2] == pytest.approx(com[2]) and math.hypot(*(start - com)[:2]) == pytest.approx(8.0)
    assert math.atan2(*(start - com)[1::-1]) == pytest.approx(math.radians(75.0))
    assert Throw.seeded(3, 1.0) == Throw.seeded(3, 1.0) and abs(Throw.seeded(3, 1.0).azimuth_deg) <= 90.0
    with pytest.raises(UsageError, match="flight must be > 0"):
        Throw(1.0, flight=0.0)


def test_a_ball_thrown_at_a_character_that_stands_still_hits_it():
    throw = Throw(0.3, azimuth_deg=0.0)
    scene = Scene((CharacterPlacement(load_character("bipv3")),), props=ball_props((throw,)))
    thrower = Thrower((throw,))
    runner = Runner(Scenario(scene, make_controller("gbwc", LocomotionCommand(walking=False)), seconds=1.6),
                    hooks=(thrower,))
    runner.start()
    runner.advance(0.2)
    parked = runner.world.body_position(ball_name(0))
    assert np.linalg.norm(parked[:2] - runner.character.com_position()[:2]) > 30.0
    runner.advance(1.4)
    (outcome,) = thrower.outcomes()
    assert outcome.hit and outcome.hit_bodies and all(b.startswith(f"{runner.character.name}/")
                                                     for b in outcome.hit_bodies)


def _slip_with_ball(sees: bool):
    params = SlipParams(goals=load_gait("dodge"), sees_projectiles=sees, settle_seconds=0.1)
    params = dataclasses.replace(params, planner=dataclasses.replace(params.planner, max_evaluations=1500,
                                                                     projectile_evaluations=1500))
    throw = Throw(0.0)
    world = World(Scene((CharacterPlacement(load_character("bipv3-torque")),), props=ball_props((throw,))))
    ctrl = SlipController(params)
    ctrl.reset(world, world.character())
    for i in range(25):
        ctrl.settle(i * ctrl.control_period)
        world.step(4)
    ctrl.control(0.0)
    world.step(4)
    plans = ctrl.stats.plans
    start, velocity = throw.launch(ctrl.character.com_position(), 0.0, world.scene.gravity)
    world.set_free_motion(ball_name(0), start, velocity)
    world.forward()
    ctrl.control(ctrl.control_period)
    return ctrl, plans


def test_the_slip_planner_plans_around_a_ball_it_sees_and_not_one_it_is_blind_to():
    seeing, before = _slip_with_ball(sees=True)
    assert seeing.stats.plans == before + 1                   # the ball's launch called for a plan
    blind, before = _slip_with_ball(sees=False)
    assert blind.stats.plans == before and "projectile" not in blind.plan.terms
    # The plan made at launch keeps the COM clear of the ball's path (the term is near its weight when struck).
    assert seeing.plan.terms["projectile"] < 1e-3 * seeing.planner.constraints.projectile_weight
    # ... and a ball that would fall onto the plan's COM half a second in is struck.
    plan, g = seeing.plan, seeing.world.scene.gravity
    there = plan.rollout.preview.at(np.array([[0.5]])).com[0, 0]
    dropped = Projectile(tuple(there + np.array([0.0, 0.0, 0.5 * g * 0.5 ** 2])), (0.0, 0.0, 0.0))
    struck = seeing.planner.cost(plan.x[None], plan.start, 0.0, (dropped,))[1]["projectile"][0]
    assert struck > 0.5 * seeing.planner.constraints.projectile_weight


def test_a_push_at_the_head_goes_at_the_head():
    spec = load_character("bipv3")
    push = Push(200.0, 0.1, 90.0, 0.1, body="head")
    runner = Runner(Scenario(Scene((CharacterPlacement(spec),)),
                             make_controller("gbwc", LocomotionCommand(walking=False)), seconds=0.5, pushes=(push,)))
    runner.start()
    runner.advance(0.15)
    (force,) = runner.world.pending_forces
    assert force.body == runner.character.body(spec.roles.head) != runner.character.body(spec.roles.torso)
    assert math.hypot(*force.force[:2]) == pytest.approx(200.0)
    with pytest.raises(UsageError, match="at the torso or the head"):
        Push(200.0, 0.1, body="foot")


def test_slip_terrain_features_are_the_courses_they_name():
    gap = course_for(TerrainFeature("g", "gap", 0.5), at=1.5, seed=0)
    assert gap.height(1.4, 0.0) == 0.0 and gap.height(1.75, 0.0) < -1.5 and gap.height(2.1, 0.0) == 0.0
    ramp = course_for(TerrainFeature("r", "ramp", -15.0, tread=5.0), at=1.5, seed=0)
    assert ramp.height(1.5 + 5.0, 0.0) == pytest.approx(-5.0 * math.tan(math.radians(15.0)))
    drop = course_for(TerrainFeature("d", "drop", 1.0), at=1.5, seed=0)
    assert drop.height(1.4, 0.0) == 0.0 and drop.height(1.6, 0.0) == pytest.approx(-1.0)
    stones = [course_for(TerrainFeature("s", "stones", 0.3, count=8), at=1.5, seed=s) for s in (0, 1)]
    assert len(stones[0].regions) == len(stones[1].regions) and stones[0].regions != stones[1].regions
    stone_tops = [stones[0].height(1.5 + x, 0.0) for x in np.arange(0.0, 8 * 0.7 + 0.3, 0.01)]
    assert min(stone_tops) < -1.5 and max(stone_tops) > -0.1     # stones over a 2 m pit
    protocol = load_protocol("slip-terrain")
    assert protocol.params.pass_share == 0.9 and {f.kind for f in protocol.params.features} == {
        "drop", "step_up", "step_down", "gap", "ramp", "stones"}


def test_random_pushes_are_drawn_from_the_seed_within_the_protocol():
    p = load_protocol("slip-push").params
    pushes = draw_pushes(p, seed=0, trials=50)
    assert pushes == draw_pushes(p, seed=0, trials=50) != draw_pushes(p, seed=1, trials=50)
    assert all(100 <= q.force <= 500 and 0.1 <= q.duration <= 0.2 and 0 <= q.time <= p.window
               and q.body == "head" for q in pushes)
    assert load_protocol("slip-dodge").params.seeds == 10


@pytest.mark.parametrize(("argv", "problem"), [
    (["slip", "walk", "--seed", "3"], "--seed draws a dodge's throw"),
    (["slip", "dodge", "--seconds", "0.5"], "a throw at 1 s comes after the end"),
])
def test_strider_slip_dodge_refuses_bad_input_before_simulating(argv, problem):
    out = subprocess.run([sys.executable, "-m", "strider", *argv], check=False, capture_output=True, text=True)
    assert out.returncode == 2 and problem in out.stderr and "Traceback" not in out.stderr


def test_the_dodge_bench_runs_through_the_checkpointed_bench_path(tmp_path):
    """One short throw through ``strider bench slip-dodge``: the trial lands in the results with its outcome, and
    a second run of the same command finds the finished results instead of a half-done checkpoint."""
    import json
    import subprocess
    import sys

    protocol = tmp_path / "dodge.yaml"
    protocol.write_text(
        "bench: slip-dodge\ndescription: short\ncharacter: bipv3-torque\nstyle: null\nseed: 0\n"
        "params:\n  seeds: 1\n  blind: false\n  throw_at: 0.05\n  watch_seconds: 0.1\n  spread_deg: 90\n"
        "anchors:\n  - {metric: avoided, value: x, source: y, target: 0.8}\n")
    command = [sys.executable, "-m", "strider", "bench", "slip-dodge", "--protocol", str(protocol), "--workers",
               "1", "--backend", "serial", "--no-progress", "--out", str(tmp_path)]
    out = subprocess.run(command, check=False, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    results = json.loads(next(tmp_path.glob("slip-dodge-slip-*.json")).read_text())
    (trial,) = results["trials"]
    assert trial["seed"] == 0 and trial["sees_ball"] and trial["avoided"] == (not trial["hit"] and not trial["fell"])
    assert not list((tmp_path / ".partial").glob("*.jsonl"))
