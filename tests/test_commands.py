"""Commands are values: a plan hands the controller new commands, and what it makes of them is its own state."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

import strider
from strider.characters import load_character
from strider.control.controller import LocomotionCommand
from strider.methods.registry import make_controller
from strider.runner import CommandChange, Runner, Scenario
from strider.sim import CharacterPlacement, Scene

PLAN = Path(__file__).resolve().parents[1] / "examples" / "plan.yaml"


def _run(controller: str, command: LocomotionCommand, script: tuple[CommandChange, ...], seconds: float):
    ctrl = make_controller(controller, command)
    scene = Scene((CharacterPlacement(load_character("bipv3")),))
    runner = Runner(Scenario(scene, ctrl, seconds=seconds, script=script))
    result = runner.run()
    return ctrl, result, runner


def test_a_command_cannot_be_changed_in_place():
    with pytest.raises(dataclasses.FrozenInstanceError):
        LocomotionCommand().speed = 1.0


@pytest.mark.parametrize("controller", ["gbwc", "simbicon"])
def test_a_plan_hands_over_new_commands_and_leaves_the_one_given_untouched(controller):
    given = LocomotionCommand(speed=0.6, turn_rate=0.4)
    ctrl, _, _ = _run(controller, given, (CommandChange(1.0, {"speed": 0.8}),), seconds=2.0)
    assert given == LocomotionCommand(speed=0.6, turn_rate=0.4)
    assert ctrl.command is not given and ctrl.command.speed == 0.8 and ctrl.command.turn_rate == 0.4
    # The speed change did not undo the turn: the target turned on from where it was, 0.4 rad/s for 2 s.
    assert ctrl.info()["target_heading"] == pytest.approx(0.8, abs=0.02)


def test_a_heading_in_the_plan_sets_the_target_and_a_later_change_keeps_it():
    script = (CommandChange(0.5, {"heading": math.pi / 2, "turn_rate": 0.0}), CommandChange(1.0, {"speed": 0.3}))
    ctrl, result, runner = _run("gbwc", LocomotionCommand(speed=0.6, turn_rate=0.5), script, seconds=1.5)
    assert ctrl.info()["target_heading"] == math.pi / 2
    assert ctrl.command.heading is None   # the last change gave no heading: the target stays where it was
    # The result measures the heading error against the controller's target.
    error = math.pi / 2 - runner.facing()
    assert result.heading_error_deg == pytest.approx(math.degrees(abs(math.atan2(math.sin(error), math.cos(error)))))


def test_a_plan_records_the_commands_it_ran():
    from strider.runner.script import load_script

    result = strider.walk(seconds=0.5, speed=0.5, script=PLAN)
    ran = result.command["commands_run"]
    changes = load_script(PLAN)
    assert len(ran) == len(changes) + 1 and ran[0]["speed"] == 0.5 and ran[0]["t"] == 0.0
    assert ran[2]["walking"] and ran[2]["speed"] == 0.8 and ran[-1]["walking"] is False


def test_drift_is_measured_off_the_walked_path_not_the_starting_heading():
    turned = strider.walk(seconds=6, heading_deg=90)
    # It walks some 4 m along +y: all of it sideways of the starting heading, almost none off its own path.
    assert turned.lateral_drift_m < 0.5 < turned.distance_m - 3.0
