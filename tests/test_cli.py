"""The ``strider`` command on the real engine: help, reports, video, and one clear line for every bad input.

Runs are 1 s of simulated time or less: these tests check the command's
plumbing, not how well the character walks (that is the controller's tests' job).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import pytest

from strider.cli.main import main

os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering here; strider picks it itself when unset

SRC = Path(__file__).resolve().parents[1] / "src"
EXAMPLE_PLAN = Path(__file__).resolve().parents[1] / "examples" / "plan.yaml"
NEVER_ENDS = "1000000"  # s: a run this long cannot finish inside a test, so an error must come before it starts
VALIDATION_DEADLINE = 60  # s of wall clock; validating arguments takes well under one


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Run ``strider ARGV`` in this process; return (exit status, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse exits on --help and on its own errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def cli_env() -> dict:
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("MUJOCO_GL", "egl")
    return env


@pytest.fixture
def fails_before_simulating():
    """Turn "it started simulating a run that never ends" into a test failure instead of a hang."""

    def timeout(signum, frame):
        raise AssertionError("the error was not reported before the simulation started")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(VALIDATION_DEADLINE)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


# --- help ----------------------------------------------------------------------------------------
def test_help_lists_commands(capsys):
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0
    assert "walk" in out and "stand" in out and "examples:" in out


@pytest.mark.parametrize("command", ["walk", "stand"])
def test_subcommand_help_documents_every_flag_with_units(capsys, command):
    code, out, _ = run_cli(capsys, command, "--help")
    assert code == 0
    for flag in ("--seconds", "--speed", "--period", "--turn-rate", "--heading-deg", "--step-width", "--style",
                 "--character", "--scale", "--push", "--terrain", "--seed", "--video", "--fps", "--width",
                 "--height", "--viewer", "--json", "--timestep", "--script"):
        assert flag in out, flag
    assert "examples:" in out and f"strider {command}" in out
    for unit in ("rad/s", "degrees", "pixels", "(default: 0.5)", "(default: 10)"):
        assert unit in out, unit


def test_python_dash_m_strider_help():
    done = subprocess.run([sys.executable, "-m", "strider", "walk", "--help"], capture_output=True, text=True,
                          check=False, env=cli_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "--speed" in done.stdout


# --- bad input: one line on stderr, exit status 2, no traceback -------------------------------------
def _assert_one_clear_line(code: int, out: str, err: str, *expected: str) -> None:
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("strider: error: "), err
    assert "Traceback" not in err
    for text in expected:
        assert text in lines[0], (text, lines[0])


BAD_FLAGS = [
    (["--character", "nobody"], ["unknown character", "nobody", "bipv3"]),
    (["--push", "600"], ["--push", "F@T"]),
    (["--push", "lots@noon"], ["--push", "numbers"]),
    (["--push", "600@4:90:0"], ["duration"]),
    (["--period", "-0.5"], ["--period", "> 0"]),
    (["--period", "0"], ["--period"]),
    (["--seconds", "0"], ["--seconds"]),
    (["--seconds", "-3"], ["--seconds"]),
    (["--speed", "nan"], ["--speed", "finite"]),
    (["--style", "moonwalk"], ["unknown style", "moonwalk", "default"]),
    (["--terrain", "lava"], ["--terrain", "flat", "slope:DEG"]),
    (["--terrain", "slope:steep"], ["--terrain", "degrees"]),
    (["--terrain", "slope:60"], ["--terrain", "45"]),
    (["--scale", "0"], ["--scale"]),
    (["--seed", "-1"], ["--seed"]),
    (["--timestep", "0.5"], ["timestep"]),
    (["--script", "no-such-plan.yaml"], ["no-such-plan.yaml", "cannot read"]),
    # commands outside what the controller declares it can follow (its CommandRange)
    (["--speed", "1e9"], ["--speed", "'gbwc'", "-0.6 to 1.7 m/s"]),
    (["--speed", "-2"], ["--speed", "-0.6 to 1.7 m/s"]),
    (["--turn-rate", "100"], ["--turn-rate", "-2 to 2 rad/s"]),
    (["--period", "3"], ["--period", "0.2 to 1 s"]),
    (["--controller", "simbicon", "--speed", "-0.5"], ["--speed", "'simbicon'", "forwards"]),
]


@pytest.mark.parametrize(("flags", "expected"), BAD_FLAGS, ids=[" ".join(f) for f, _ in BAD_FLAGS])
def test_bad_flag_gives_one_line_and_status_2(capsys, fails_before_simulating, flags, expected):
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, *flags)  # a later --seconds wins
    _assert_one_clear_line(code, out, err, *expected)


def test_malformed_character_yaml_names_the_file_and_field(capsys, tmp_path, fails_before_simulating):
    broken = tmp_path / "broken.yaml"
    broken.write_text("extends: bipv3\nscale: large\n")
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--character", str(broken))
    _assert_one_clear_line(code, out, err, str(broken), "scale", "expected a number")


def test_unparseable_character_yaml_names_the_line(capsys, tmp_path, fails_before_simulating):
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: broken\nbodies: [1, 2\n")
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--character", str(broken))
    _assert_one_clear_line(code, out, err, str(broken), "invalid YAML")


def test_missing_character_file(capsys, tmp_path, fails_before_simulating):
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--character", str(tmp_path / "ghost.yaml"))
    _assert_one_clear_line(code, out, err, "ghost.yaml", "does not exist")


def test_video_into_missing_folder_fails_before_simulating(capsys, tmp_path, fails_before_simulating):
    target = tmp_path / "no" / "such" / "folder" / "walk.mp4"
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--video", str(target))
    _assert_one_clear_line(code, out, err, str(target), "does not exist")
    assert not target.parent.exists()


def test_video_onto_a_folder_fails_before_simulating(capsys, tmp_path, fails_before_simulating):
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--video", str(tmp_path))
    _assert_one_clear_line(code, out, err, "folder")


@pytest.mark.parametrize("target", ["/proc/walk.mp4", "/sys/walk.mp4"])
def test_video_where_nothing_can_be_written_fails_before_simulating(capsys, fails_before_simulating, target):
    # Permission bits do not tell (root passes them, /proc is a pseudo file system): the file is opened.
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--video", target)
    _assert_one_clear_line(code, out, err, target)


def test_a_plan_changing_to_an_unsupported_command_is_refused(capsys, tmp_path, fails_before_simulating):
    plan = tmp_path / "sprint.yaml"
    plan.write_text("commands:\n  - {t: 0, do: walk, speed: 1.0}\n  - {t: 2, do: walk, speed: 5.0}\n")
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--script", str(plan))
    _assert_one_clear_line(code, out, err, "at 2 s", "--speed 5")


def test_stand_with_a_controller_that_cannot_stand(capsys, fails_before_simulating):
    code, out, err = run_cli(capsys, "stand", "--seconds", NEVER_ENDS, "--controller", "simbicon")
    _assert_one_clear_line(code, out, err, "'simbicon'", "cannot stand")


def test_video_needs_an_mp4_name(capsys, tmp_path, fails_before_simulating):
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--video", str(tmp_path / "walk.gif"))
    _assert_one_clear_line(code, out, err, ".mp4")
    assert not (tmp_path / "walk.gif").exists()


@pytest.mark.parametrize(("flags", "expected"), [
    (["--width", "333"], ["--width", "even"]),
    (["--height", "4000"], ["4000"]),
    (["--fps", "0"], ["--fps"]),
])
def test_impossible_video_settings(capsys, tmp_path, fails_before_simulating, flags, expected):
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--video", str(tmp_path / "v.mp4"), *flags)
    _assert_one_clear_line(code, out, err, *expected)


@pytest.mark.parametrize("fps", ["nan", "-5"])
def test_an_impossible_fps_is_refused_even_without_a_video(capsys, fails_before_simulating, fps):
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--fps", fps)
    _assert_one_clear_line(code, out, err, "--fps")


def test_viewer_without_a_display(capsys, monkeypatch, fails_before_simulating):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--viewer")
    _assert_one_clear_line(code, out, err, "--viewer", "display")


def test_push_after_the_run_ends(capsys, fails_before_simulating):
    code, out, err = run_cli(capsys, "walk", "--seconds", "2", "--push", "600@5")
    _assert_one_clear_line(code, out, err, "--push", "after the end")


def test_stand_refuses_a_speed(capsys, fails_before_simulating):
    code, out, err = run_cli(capsys, "stand", "--seconds", NEVER_ENDS, "--speed", "1.0")
    _assert_one_clear_line(code, out, err, "stand", "--speed")


def test_malformed_plan_names_file_and_field(capsys, tmp_path, fails_before_simulating):
    plan = tmp_path / "plan.yaml"
    plan.write_text("commands:\n  - {t: 0, do: walk}\n  - {t: 1, do: moonwalk}\n")
    code, out, err = run_cli(capsys, "walk", "--seconds", NEVER_ENDS, "--script", str(plan))
    _assert_one_clear_line(code, out, err, str(plan), "commands[1].do", "moonwalk")


def test_argparse_errors_also_exit_2(capsys):
    code, _, err = run_cli(capsys, "walk", "--seconds", "soon")
    assert code == 2 and "--seconds" in err
    code, _, err = run_cli(capsys, "fly")
    assert code == 2 and "fly" in err


def test_bad_input_through_python_dash_m(tmp_path):
    """The installed-command path: a real process, a real exit status, and no traceback."""
    done = subprocess.run([sys.executable, "-m", "strider.cli.main", "walk", "--seconds", "1", "--character",
                           "nobody"], capture_output=True, text=True, check=False, env=cli_env(), timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("strider: error: unknown character 'nobody'")
    assert "Traceback" not in done.stderr


# --- reports -----------------------------------------------------------------------------------
def test_json_report_has_every_key_with_its_type(capsys):
    code, out, err = run_cli(capsys, "walk", "--seconds", "1", "--speed", "0.8", "--push", "150@0.5:90:0.05",
                             "--seed", "7", "--json")
    assert code == 0, err
    report = json.loads(out)
    numbers = ("sim_seconds", "wall_seconds", "realtime_factor", "distance_m", "mean_speed_mps", "steady_speed_mps",
               "lateral_drift_m", "heading_error_deg")
    for key in numbers:
        assert isinstance(report[key], float), key
    assert report["sim_seconds"] == pytest.approx(1.0, abs=1e-6)
    assert isinstance(report["fell"], bool)
    assert isinstance(report["falls"], int) and isinstance(report["steps"], int)
    assert report["seed"] == 7
    (push,) = report["pushes"]
    assert push == {"force": 150.0, "time": 0.5, "direction_deg": 90.0, "duration": 0.05, "body": "torso",
                    "survived": push["survived"]}
    assert report["throws"] == []
    assert isinstance(push["survived"], bool)
    command = report["command"]
    assert command["action"] == "walk" and command["speed"] == 0.8 and command["seconds"] == 1.0
    assert command["pushes"] == ["150@0.5:90:0.05"]
    assert command["terrain"] == "flat" and command["style"] == "default" and command["character"] == "bipv3"
    assert err == ""  # no progress bar with --json


def test_stand_json_reports_a_standing_command(capsys):
    code, out, err = run_cli(capsys, "stand", "--seconds", "0.5", "--json", "--terrain", "slope:3")
    assert code == 0, err
    report = json.loads(out)
    assert report["command"]["action"] == "stand"
    assert report["controller"]["steps"] == 0       # the controller's own report at the end (balance: no steps)
    assert report["command"]["speed"] == 0.0
    assert report["command"]["terrain"] == "slope:3"


def test_summary_paragraph_says_distance_speed_falls_and_speed_of_simulation(capsys):
    code, out, err = run_cli(capsys, "walk", "--seconds", "0.5")
    assert code == 0, err
    paragraph = out.strip()
    assert len(paragraph.splitlines()) == 1
    assert paragraph.startswith("Walked ")
    assert "m/s" in paragraph and "real time" in paragraph
    assert "did not fall" in paragraph or "fell" in paragraph or "diverged" in paragraph


def test_plan_runs_from_the_command_line(capsys):
    code, out, err = run_cli(capsys, "stand", "--seconds", "1", "--script", str(EXAMPLE_PLAN), "--json")
    assert code == 0, err
    assert json.loads(out)["command"]["script"] == str(EXAMPLE_PLAN)


# --- video -------------------------------------------------------------------------------------
def test_video_writes_a_playable_mp4(capsys, tmp_path):
    target = tmp_path / "walk.mp4"
    code, out, err = run_cli(capsys, "walk", "--seconds", "1", "--video", str(target), "--fps", "20",
                             "--width", "320", "--height", "192")
    assert code == 0, err
    assert target.stat().st_size > 0
    frames = iio.imread(target)
    assert frames.shape[1:] == (192, 320, 3)
    assert 20 <= frames.shape[0] <= 22  # one frame per 1/20 s, both ends included
    assert frames.std() > 1.0  # a picture, not a blank buffer
    assert f"Video written to {target}." in out
    assert err == ""  # stderr is not a terminal here, so no progress bar


def test_every_bench_takes_no_progress():
    """A script may pass --no-progress to any bench: every bench accepts it, and every engine bench's run function
    is told whether to show its bar; the quick ones, which show none, are named."""
    import inspect

    from strider.cli.bench_commands import BENCH_HELP, ENGINE_BENCH_HELP, QUICK_BENCHES, engine_runners
    from strider.cli.main import build_parser

    parser = build_parser()
    for name in [*BENCH_HELP, *ENGINE_BENCH_HELP, "gbwc-ablation"]:
        assert parser.parse_args(["bench", name, "--no-progress"]).no_progress, name
    runners = engine_runners()
    assert set(runners) == set(ENGINE_BENCH_HELP) and set(QUICK_BENCHES) <= set(runners)
    for name, run in runners.items():
        assert "progress" in inspect.signature(run).parameters, name


PARALLEL_COMMANDS = [["graph", "learn", "walk"], ["cw", "synthesize"], ["tlc", "explore", "GLT"],
                     ["optimize", "skill", "roll-prone-to-supine"], ["optimize", "gait", "walk"], ["track", "vi"],
                     ["bench", "push"], ["bench", "gbwc-ablation"]]


@pytest.mark.parametrize("command", PARALLEL_COMMANDS, ids=" ".join)
def test_every_parallel_command_takes_ray_as_short_for_its_backend(command, capsys):
    from strider.cli.main import build_parser

    parser = build_parser()
    assert parser.parse_args([*command, "--ray"]).backend == "ray"
    assert parser.parse_args(command).backend == "processes"
    assert parser.parse_args([*command, "--backend", "serial", "--workers", "3"]).workers == 3
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args([*command, "--ray", "--backend", "serial"])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_track_walk_takes_a_course_by_name(capsys):
    """--course NAME is --terrain course:NAME; an unknown one is refused before anything runs."""
    from strider.cli.main import build_parser
    from strider.cli.track import _ground
    from strider.methods.tracking.rectify import ramp

    args = build_parser().parse_args(["track", "walk", "cmu-walk", "--course", "slope-10"])
    assert _ground(args, 0.0) == "course:slope-10"
    assert _ground(build_parser().parse_args(["track", "walk"]), 5.0) == ramp(5.0)   # the motion's own ground
    code, _, err = run_cli(capsys, "track", "walk", "--course", "no-such-course", "--seconds", NEVER_ENDS)
    assert code == 2 and "unknown course 'no-such-course'" in err
