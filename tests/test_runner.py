"""The Python API and the runner's inputs: plans (scripts), determinism, and what a Result records.

Short runs on the real engine; nothing here asserts how well the character walks.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import strider
from strider.control.controller import LocomotionCommand
from strider.errors import ConfigError, UsageError
from strider.methods.gbwc import GBWC, GBWCParams, load_style
from strider.runner import Push, Runner, Scenario
from strider.runner.scenario import CommandChange
from strider.runner.script import load_script, parse_script
from strider.sim import CharacterPlacement, Scene

EXAMPLE_PLAN = Path(__file__).resolve().parents[1] / "examples" / "plan.yaml"
SRC = Path(__file__).resolve().parents[1] / "src"


def write(tmp_path: Path, text: str, name: str = "plan.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- plans -------------------------------------------------------------------------------------
def test_example_plan_parses_into_command_changes():
    plan = load_script(EXAMPLE_PLAN)
    assert all(isinstance(c, CommandChange) for c in plan)
    assert [c.t for c in plan] == sorted(c.t for c in plan)
    assert plan[0].changes == {"walking": False, "turn_rate": 0.0}
    assert plan[1].changes == {"walking": True, "speed": 0.8}
    assert plan[2].changes == {"heading": pytest.approx(math.pi / 2), "turn_rate": 0.0}
    assert plan[-1].changes == {"walking": False, "turn_rate": 0.0}


def test_every_action_sets_locomotion_command_fields(tmp_path):
    plan = load_script(write(tmp_path, """
commands:
  - {t: 0, do: walk, speed: -0.4, lateral_speed: 0.1, period: 0.6, step_width: 0.15, turn_rate: 0.3}
  - {t: 1, do: turn, heading: 1.0}
  - {t: 1, do: turn, turn_rate: -0.5}
  - {t: 2.5, do: walk, heading_deg: -45}
  - {t: 3, do: stand}
"""))
    assert plan[0] == CommandChange(0.0, {"walking": True, "speed": -0.4, "lateral_speed": 0.1, "period": 0.6,
                                          "step_width": 0.15, "turn_rate": 0.3})
    assert plan[1].changes == {"heading": 1.0, "turn_rate": 0.0}
    assert plan[2].changes == {"turn_rate": -0.5}
    assert plan[3].changes == {"walking": True, "heading": pytest.approx(math.radians(-45)), "turn_rate": 0.0}
    fields = set(LocomotionCommand.__dataclass_fields__)
    assert all(set(c.changes) <= fields for c in plan)


MALFORMED_PLANS = [
    ("- {t: 0, do: stand}\n", "", "commands:"),
    ("commands: [\n", "line", "invalid YAML"),
    ("commands: []\n", "commands", "at least one"),
    ("commands:\n  - {t: 0, do: jump}\n", "commands[0].do", "must be one of"),
    ("commands:\n  - {do: walk}\n", "commands[0].t", "missing required field"),
    ("commands:\n  - {t: -1, do: walk}\n", "commands[0].t", ">= 0"),
    ("commands:\n  - {t: 0, do: walk, speed: fast}\n", "commands[0].speed", "expected a number"),
    ("commands:\n  - {t: 0, do: walk, period: 0}\n", "commands[0].period", "> 0"),
    ("commands:\n  - {t: 0, do: walk, step_width: -0.1}\n", "commands[0].step_width", ">= 0"),
    ("commands:\n  - {t: 0, do: stop, speed: 1}\n", "commands[0].speed", "unknown field"),
    ("commands:\n  - {t: 0, do: turn}\n", "commands[0].heading_deg", "needs one of"),
    ("commands:\n  - {t: 0, do: turn, heading_deg: 10, turn_rate: 1}\n", "commands[0].turn_rate", "only one"),
    ("commands:\n  - {t: 2, do: walk}\n  - {t: 1, do: stop}\n", "commands[1].t", "must not decrease"),
    ("commands:\n  - walk\n", "commands[0]", "expected a mapping"),
    ("comands:\n  - {t: 0, do: walk}\n", "comands", "unknown field"),
]


@pytest.mark.parametrize(("text", "field", "problem"), MALFORMED_PLANS, ids=[m[2] for m in MALFORMED_PLANS])
def test_malformed_plan_names_file_field_and_problem(tmp_path, text, field, problem):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_script(path)
    assert caught.value.source == str(path)
    assert caught.value.field.startswith(field)
    assert problem in caught.value.problem
    assert str(path) in str(caught.value)


def test_parse_script_takes_data_already_read():
    plan = parse_script({"commands": [{"t": 0.5, "do": "walk", "speed": 1.2}]}, "inline")
    assert plan == (CommandChange(0.5, {"walking": True, "speed": 1.2}),)


def test_runner_applies_a_plan_to_the_controller_command(bipv3):
    controller = GBWC(LocomotionCommand(walking=False), GBWCParams(style=load_style("default")))
    plan = parse_script({"commands": [{"t": 0.2, "do": "walk", "speed": 0.5, "period": 0.45},
                                      {"t": 0.4, "do": "turn", "turn_rate": 0.25}]}, "inline")
    scene = Scene((CharacterPlacement(bipv3),))
    Runner(Scenario(scene, controller, seconds=0.5, script=plan)).run()
    command = controller.command
    assert command.walking is True and command.speed == 0.5 and command.period == 0.45
    assert command.turn_rate == 0.25


# --- the Python API ----------------------------------------------------------------------------
def test_walk_is_deterministic():
    first = strider.walk(seconds=1)
    second = strider.walk(seconds=1)
    assert first.final_state is not None
    assert np.array_equal(first.final_state, second.final_state)


def test_watching_a_run_does_not_change_it():
    """Frame sinks (here the progress bar) split the stepping into chunks; the trajectory must not notice."""
    plain = strider.walk(seconds=0.5, speed=0.6)
    watched = strider.walk(seconds=0.5, speed=0.6, progress=True)
    assert np.array_equal(plain.final_state, watched.final_state)


def test_pushes_as_strings_or_objects_are_the_same_run():
    by_text = strider.walk(seconds=0.6, pushes=["200@0.2:90:0.1"])
    by_object = strider.walk(seconds=0.6, pushes=[Push(200, 0.2, 90, 0.1)])
    assert np.array_equal(by_text.final_state, by_object.final_state)
    assert [p.as_dict() for p in by_text.pushes] == [p.as_dict() for p in by_object.pushes]


def test_push_changes_the_trajectory():
    """Guards the test above: a push has to reach the physics for it to mean anything."""
    pushed = strider.walk(seconds=0.6, pushes=["200@0.2:90:0.1"])
    unpushed = strider.walk(seconds=0.6)
    assert not np.array_equal(pushed.final_state, unpushed.final_state)


def test_result_records_seed_and_command():
    result = strider.stand(seconds=0.3, seed=11, heading_deg=20, style="crouch")
    assert result.seed == 11
    assert result.command["action"] == "stand" and result.command["speed"] == 0.0
    assert result.command["heading_deg"] == 20 and result.command["style"] == "crouch"
    as_dict = result.as_dict()
    assert as_dict["seed"] == 11 and as_dict["command"] == result.command


def test_api_accepts_a_plan_as_command_changes():
    plan = (CommandChange(0.1, {"walking": True, "speed": 0.5}),)
    result = strider.stand(seconds=0.3, script=plan)
    assert result.command["script"] == [{"t": 0.1, "walking": True, "speed": 0.5}]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"period": 0}, "--period"),
    ({"seconds": -1}, "--seconds"),
    ({"speed": float("inf")}, "--speed"),
    ({"step_width": -0.1}, "--step-width"),
    ({"seed": 1.5}, "--seed"),
    ({"pushes": ["600"]}, "--push"),
    ({"pushes": [600]}, "push"),
    ({"terrain": "ice"}, "--terrain"),
    ({"style": "nope"}, "unknown style"),
    ({"character": "nobody"}, "unknown character"),
    ({"video": "/no/such/folder/walk.mp4"}, "does not exist"),
    ({"script": [{"t": 0}]}, "CommandChange"),
])
def test_api_rejects_bad_arguments_with_user_errors(kwargs, message):
    with pytest.raises(UsageError, match=message.replace("-", r"\-")):
        strider.walk(**kwargs)


def test_import_strider_is_light():
    """``import strider`` must not load MuJoCo or the controllers; they load on the first run."""
    code = "import sys, strider; print(sorted(m for m in ('mujoco', 'strider.sim', 'strider.methods') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
