"""A run whose simulation blows up is reported as a failure, never as a success (issue 19, item 2).

MuJoCo answers a non-finite or huge acceleration with a warning and a reset of the state to the model's
initial one, so the state after the step is finite again; the runner must watch the engine's warnings."""

from __future__ import annotations

import json
import logging
import math

import pytest

import strider
from strider.characters import load_character
from strider.cli.main import main
from strider.sim import CharacterPlacement, Scene, World

BLOW_UP = "1e12@1"   # N at t = 1 s: far past anything the solver can integrate at 1 ms


def test_a_push_that_blows_up_the_simulation_is_a_failure():
    result = strider.walk(seconds=2, pushes=[BLOW_UP])
    assert result.unstable
    assert "QACC" in result.unstable_warning
    assert 1.0 <= result.unstable_time <= 1.1
    assert result.fell and result.falls == 1 and result.fall_time == result.unstable_time
    assert not result.pushes[0].survived
    assert result.sim_seconds == result.unstable_time   # it stops there; MuJoCo's reset clock is not used


def test_a_normal_run_is_not_unstable():
    result = strider.walk(seconds=1.5, pushes=["100@1"])
    assert not result.unstable and result.unstable_warning is None and not result.fell


def test_the_cli_names_the_instability_and_exits_1(capsys):
    assert main(["walk", "--push", BLOW_UP, "--seconds", "2", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["unstable"] and out["fell"] and out["pushes"][0]["survived"] is False
    assert main(["walk", "--push", BLOW_UP, "--seconds", "2"]) == 1
    assert "became unstable by t = 1.0" in capsys.readouterr().out


def test_restoring_a_state_forgets_the_engine_warning():
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    start = world.snapshot()
    world.apply_force("torso", (1e12, 0.0, 0.0), duration=0.01)
    world.step(20)
    assert world.instability() is not None
    world.restore(start)
    assert world.instability() is None


def test_the_engines_warnings_go_to_the_log_not_the_screen_or_the_working_folder(tmp_path, monkeypatch, caplog, capfd):
    monkeypatch.chdir(tmp_path)
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    with caplog.at_level(logging.INFO, logger="strider.mujoco"):
        world.apply_force("torso", (1e12, 0.0, 0.0), duration=0.01)
        world.step(20)
    assert "QACC" in world.instability()      # still counted and named
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
    printed = capfd.readouterr()
    assert "Nan, Inf" not in printed.out + printed.err
    assert any("Nan, Inf or huge value in QACC" in r.getMessage() for r in caplog.records)


def test_a_single_characters_bodies_answer_to_their_bare_names():
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    assert world.body_id("torso") == world.body_id("hero/torso")
    try:
        world.body_id("tail")
    except KeyError as exc:
        assert "hero/torso" in str(exc)
    else:
        raise AssertionError("an unknown body was accepted")



@pytest.mark.parametrize("array, index, value, name", [("qpos", 7, math.nan, "QPOS"), ("qvel", 3, math.inf, "QVEL"),
                                                       ("qvel", 3, 1e300, "QVEL"), ("ctrl", 2, math.nan, "CTRL")])
def test_every_non_finite_state_after_a_step_is_named_by_the_engine(array, index, value, name):
    # The episode loop looks only at the engine's warnings after each step, never at the state's finiteness:
    # this is why that is enough.
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    world.step(10)
    getattr(world.data, array)[index] = value
    world.step(5)
    assert name in world.instability()
    assert world.is_finite()


@pytest.mark.parametrize("array, name", [("qpos", "QPOS"), ("qvel", "QVEL")])
def test_a_non_finite_state_made_by_hand_is_flagged_by_forward_as_by_a_step(array, name):
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    getattr(world.data, array)[3] = math.nan
    world.forward()
    assert name in world.instability()
    assert world.is_finite()
