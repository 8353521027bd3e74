"""Actuation modes: position servos, torque motors and stable PD, on the real engine."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import strider
from strider import quat
from strider.characters import load_character
from strider.characters.spec import Gains
from strider.cli.main import main
from strider.errors import ConfigError, UsageError
from strider.sim import CharacterPlacement, Scene, World

HOLD_SECONDS = 2.0
SETTLED_ERROR = 0.01   # rad: every servo axis within this of its target after HOLD_SECONDS


def _stiffer(spec, factor: float):
    return replace(spec, gains={k: Gains(g.kp * factor, g.kd * factor, None) for k, g in spec.gains.items()})


def _floating(mode: str, gain_factor: float = 1.0, timestep: float = 0.001) -> World:
    """bipv3 at rest high in the air without gravity, every joint bent away from its zero pose: servos alone
    bring them back (with no momentum to start with, nothing else loads them)."""
    spec = _stiffer(load_character("bipv3", actuation=mode), gain_factor)
    world = World(Scene((CharacterPlacement(spec),), timestep=timestep, gravity=0.0))
    ch = world.character()
    ch.set_root_height(3.0)
    rng = np.random.default_rng(0)
    for name, j in ch.joints.items():
        if j.kind == "ball":
            ch.set_joint_position(name, quat.exp(rng.uniform(-0.15, 0.15, 3)))
        else:
            ch.set_joint_position(name, rng.uniform(0.05, 0.2, len(j.qpos)))
    world.forward()
    return world


def _hold(world: World, explicit_pd: bool = False) -> float:
    """Hold every servo at 0 for HOLD_SECONDS; the largest remaining error, or inf if the simulation blew up.

    ``explicit_pd``: the test itself is the controller of a torque character, writing kp e - kd v each step.
    """
    ch = world.character()
    servos = np.concatenate([j.servos for j in ch.joints.values()])
    gains = [ch.spec.joint_gains(name) for name, j in ch.joints.items() for _ in j.servos]
    kp, kd = np.array([g.kp for g in gains]), np.array([g.kd for g in gains])
    for _ in range(round(HOLD_SECONDS / world.timestep)):
        if explicit_pd:
            ch.motor_torques[servos] = -kp * ch.servo_lengths()[servos] - kd * ch.qvel[ch.internal_dofs]
        world.step(1)
        if not world.is_finite() or np.abs(ch.qvel).max() > 1e4:
            return np.inf
    return float(np.abs(ch.servo_lengths()[servos]).max())


@pytest.mark.parametrize("mode", ["position", "spd"])
def test_servo_modes_hold_a_pose(mode):
    assert _hold(_floating(mode)) < SETTLED_ERROR


def test_torque_mode_holds_a_pose_under_a_controllers_own_pd_at_a_step_it_can_integrate():
    # Explicit PD is stable only while kd h stays small against each segment's inertia: bipv3's gains need a
    # 0.1 ms step (they diverge at 1 ms, below).
    assert _hold(_floating("torque", timestep=0.0001), explicit_pd=True) < SETTLED_ERROR


@pytest.mark.parametrize("gain_factor, timestep", [(1.0, 0.001), (10.0, 0.005)])
def test_stable_pd_stays_stable_where_explicit_pd_diverges(gain_factor, timestep):
    assert _hold(_floating("torque", gain_factor, timestep), explicit_pd=True) == np.inf
    assert _hold(_floating("spd", gain_factor, timestep)) < SETTLED_ERROR


@pytest.mark.parametrize("controller", ["gbwc", "simbicon"])
def test_walking_controllers_walk_under_stable_pd(controller):
    result = strider.walk(seconds=8, speed=1.0, controller=controller, actuation="spd")
    assert not result.fell
    assert result.command["actuation"] == "spd"
    assert abs(result.mean_speed_mps - 1.0) < 0.25


def test_stable_pd_snapshots_continue_bit_for_bit():
    world = _floating("spd")
    ch = world.character()
    ch.servo_targets[ch.joints["lKnee"].servos] = -0.5
    ch.set_servo_gains("lKnee", 500.0, 40.0)
    world.step(50)
    snap = world.snapshot()
    world.step(200)
    expected = world.state_vector()
    ch.servo_targets[ch.joints["lKnee"].servos] = 0.0
    ch.set_servo_gains("lKnee", 1.0, 1.0)
    world.restore(snap)
    world.step(200)
    assert np.array_equal(world.state_vector(), expected)


def test_modes_refuse_what_they_cannot_take():
    torque = World(Scene((CharacterPlacement(load_character("bipv3", actuation="torque")),))).character()
    with pytest.raises(UsageError, match="torque actuation"):
        torque.servo_targets[0] = 0.0
    with pytest.raises(UsageError, match="torque actuation"):
        torque.set_servo_gains("lKnee", 1.0, 1.0)
    position = World(Scene((CharacterPlacement(load_character("bipv3")),))).character()
    with pytest.raises(UsageError, match="position actuation"):
        position.motor_torques[0] = 0.0
    with pytest.raises(UsageError, match="needs position or spd"):
        strider.walk(seconds=1, actuation="torque")
    with pytest.raises(UsageError, match="actuation mode"):
        load_character("bipv3", actuation="hydraulic")


def test_unlimited_torque_and_a_bad_mode_in_a_character_file(tmp_path):
    base = (strider.characters.library.DATA_DIR / "bipv3.yaml").read_text()
    free = tmp_path / "free.yaml"
    free.write_text(base.replace("knee:     {kp: 300, kd: 35,  limit: 1000}", "knee:     {kp: 300, kd: 35,  limit: none}")
                    + "actuation: torque\n")
    spec = load_character(str(free))
    assert spec.actuation == "torque" and spec.gains["knee"].limit is None
    world = World(Scene((CharacterPlacement(spec),)))
    ch = world.character()
    knee, hip = ch.joints["lKnee"].servos, ch.joints["lHip"].servos
    ch.motor_torques[knee] = 5000.0
    ch.motor_torques[hip] = 5000.0
    world.forward()
    assert ch.servo_forces[knee][0] == 5000.0          # no limit
    assert np.all(ch.servo_forces[hip] == 200.0)       # the hip group's 200 N m
    bad = tmp_path / "bad.yaml"
    bad.write_text(base + "actuation: hydraulic\n")
    with pytest.raises(ConfigError) as info:
        load_character(str(bad))
    assert info.value.field == "actuation"
    assert main(["walk", "--seconds", "1", "--character", str(bad)]) == 2


def test_walk_records_the_mode_and_limits_in_its_json(capsys):
    assert main(["walk", "--seconds", "1", "--actuation", "spd", "--json"]) == 0
    import json

    report = json.loads(capsys.readouterr().out)
    assert report["command"]["actuation"] == "spd"
    assert report["command"]["torque_limits"]["knee"] == 1000
