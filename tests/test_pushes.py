"""One push type from the command line to the result, with one direction convention."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strider.characters import load_character
from strider.control.controller import LocomotionCommand
from strider.methods.registry import make_controller
from strider.runner import Push, PushOutcome, Runner, Scenario
from strider.sim import CharacterPlacement, Scene


def test_a_push_reads_back_from_its_own_text_and_reports_its_fields():
    push = Push.parse("600@4.5:90:0.2")
    assert push == Push(600.0, 4.5, 90.0, 0.2)
    assert Push.parse(str(push)) == push
    at_head = Push.parse("300@2:45:0.15@head")
    assert at_head == Push(300.0, 2.0, 45.0, 0.15, body="head") and Push.parse(str(at_head)) == at_head
    assert PushOutcome(push, True).as_dict() == {"force": 600.0, "time": 4.5, "direction_deg": 90.0,
                                                 "duration": 0.2, "body": "torso", "survived": True}


@pytest.mark.parametrize("direction, along", [(0.0, (1.0, 0.0)), (90.0, (0.0, -1.0)), (180.0, (-1.0, 0.0)),
                                              (270.0, (0.0, 1.0))])
def test_directions_count_from_behind_relative_to_the_facing(direction, along):
    heading = math.radians(30.0)
    fx, fy, fz = Push(100.0, 0.0, direction).force_vector(heading)
    c, s = math.cos(heading), math.sin(heading)
    expected = (c * along[0] - s * along[1], s * along[0] + c * along[1])
    assert (fx / 100.0, fy / 100.0, fz) == pytest.approx((*expected, 0.0), abs=1e-12)


def test_the_runner_pushes_relative_to_where_the_character_faces_when_the_push_comes():
    """Placed facing +y, a push from behind (0 deg) moves the standing character towards +y, not +x."""
    placement = CharacterPlacement(load_character("bipv3"), heading=math.pi / 2)
    ctrl = make_controller("gbwc", LocomotionCommand(walking=False, heading=math.pi / 2))
    runner = Runner(Scenario(Scene((placement,)), ctrl, seconds=1.2, pushes=(Push(150.0, 0.5, 0.0, 0.2),)))
    runner.start()
    runner.advance(0.5)
    before = runner.character.com_position().copy()
    runner.advance(0.7)
    moved = runner.character.com_position() - before
    assert moved[1] > 0.02 and abs(moved[0]) < 0.5 * moved[1]
    assert np.isfinite(moved).all()
