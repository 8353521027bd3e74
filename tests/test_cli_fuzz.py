"""A fuzz over the flags of every command: whatever a user types, strider answers with exit 0, 1 (a run that
failed its task) or 2 (bad input, one line), never a traceback.

Every command and flag is taken from the parser itself, so a new command or flag is fuzzed without this file
changing. Runs are real and kept short: walks, skills and SLIP gaits are given a fraction of a second (a fuzzed --seconds
may replace it with another short or invalid value), and commands whose valid runs take minutes (benches,
CMA-ES) write to a folder that cannot be written, so that they end at the output check once every other flag
has been validated.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from strider.cli.main import build_parser, main

UNWRITABLE = "/proc/strider-fuzz/out"   # no one, not even root, can create a folder in /proc
SHORT = "0.2"                           # s: long enough to step, short enough to fuzz many runs
RUNS = ("walk", "stand", "skill", "slip")   # commands that simulate for --seconds (given SHORT)
STEPPED = {("cw", "walk"): ["--max-steps", "3"]}   # commands that simulate for a number of steps (given few)


def ends_at_output_check(path: tuple[str, ...]) -> bool:
    """Commands whose valid runs take minutes: given an unwritable --out, they stop once their flags are checked."""
    return (path[0] in ("bench", "optimize") and path[-1] != "report"
            or path in (("cw", "synthesize"), ("tlc", "explore"), ("tlc", "solve")))

NUMBERS = ["-1", "0", "0.3", "0.5", "1", "2", "90", "nan", "inf", "-inf", "1e-9", "1e12", "abc", "", "1,2", "--"]
WORDS = ["gbwc", "simbicon", "balance", "default", "thesis", "without:step-timing", "nobody", "", "a,b", "slope:15",
         "bumps", "walk", "stand", "crouch", "stairs", "all", "@", "../x", "torque", "spd", "position"]
PUSHES = ["300@1", "300@0.1:90", "300@0.1:90:0.2", "1e12@0.1", "@", "300", "300@-1", "300@nan", "x@1:2:3:4"]


def leaf_commands() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    out = []

    def visit(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out.append((path, parser))
        for action in subs:
            for name, sub in action.choices.items():
                visit(sub, (*path, name))

    visit(build_parser(), ())
    return out


COMMANDS = leaf_commands()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, list[str]]:
    """Real inputs of every kind a positional or a file flag takes: good ones, malformed ones, missing ones."""
    root = tmp_path_factory.mktemp("fuzz-inputs")
    clip = root / "short.bvh"
    subprocess.run([sys.executable, "-m", "strider", "walk", "--seconds", "0.3", "--bvh", str(clip)], check=True,
                   capture_output=True)
    (root / "garbage.bvh").write_text("HIERARCHY\nROOT hip\n{ OFFSET 0 0 x\n")
    (root / "garbage.yaml").write_text("name: [unclosed\n")
    (root / "empty.yaml").write_text("")
    (root / "binary.bvh").write_bytes(os.urandom(256))
    clips = [str(clip), str(root / "garbage.bvh"), str(root / "binary.bvh"), str(root / "missing.bvh"),
             str(root / "garbage.yaml"), str(root)]
    yamls = [str(root / "garbage.yaml"), str(root / "empty.yaml"), str(root / "missing.yaml"), str(clip)]
    return {"clips": clips, "yamls": yamls, "root": [str(root)]}


def values_for(flag: str, path: tuple[str, ...], files: dict[str, list[str]]) -> st.SearchStrategy[str]:
    """What a user might type after ``flag``: valid values, edge values and nonsense."""
    if flag in ("--push",):
        return st.sampled_from(PUSHES)
    if flag in ("--video", "--bvh"):
        good = ["out.mp4", "out.bvh"] if path[0] in RUNS else []
        return st.sampled_from([*good, "/sys/x.mp4", "/nonexistent/x.mp4", "x.txt", "", "/proc/x.bvh"])
    if flag in ("--out", "--results"):
        if ends_at_output_check(path):
            return st.just(UNWRITABLE)
        return st.sampled_from(["page.md", "/sys/x.md", "", files["root"][0], "/nonexistent/d/x.md", UNWRITABLE])
    if flag in ("--protocol", "--script", "--map", "--terrain") or flag == "--character" and path[0] == "bench":
        return st.sampled_from([*files["yamls"], *WORDS])
    if flag == "--seconds":
        return st.sampled_from([SHORT, "0.1", "0", "-1", "nan", "inf", "abc", ""])
    return st.sampled_from(NUMBERS + WORDS)


def positional_values(dest: str, files: dict[str, list[str]]) -> st.SearchStrategy[str]:
    if dest in ("clip", "input"):
        return st.sampled_from(files["clips"])
    if dest == "output":
        return st.sampled_from(["o.bvh", "o.npz", "o.txt", "/sys/o.bvh", ""])
    return st.sampled_from(["stand", "fall", "forward-roll", "bipv3", "flat", "nobody", "", *files["yamls"]])


@st.composite
def command_lines(draw, files):
    group = draw(st.sampled_from(sorted({path[0] for path, _ in COMMANDS})))   # each command as often as bench
    path, parser = draw(st.sampled_from([c for c in COMMANDS if c[0][0] == group]))
    argv = list(path)
    if path[0] in RUNS:
        argv += ["--seconds", SHORT]
    argv += STEPPED.get(path, [])
    if ends_at_output_check(path):
        argv += ["--out", UNWRITABLE]
    options = [a for a in parser._actions if a.option_strings and a.dest not in ("help", "viewer")]
    for action in draw(st.lists(st.sampled_from(options), max_size=4, unique_by=lambda a: a.dest)) if options else []:
        flag = action.option_strings[-1]
        if action.nargs == 0:
            argv.append(flag)
        else:
            argv += [flag, draw(values_for(flag, path, files))]
    for action in parser._actions:
        if not action.option_strings:
            argv.append(draw(positional_values(action.dest, files)))
    return argv


def run_cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:   # argparse's own refusals
            code = exc.code if isinstance(exc.code, int) else 2
    return code, err.getvalue()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                      HealthCheck.too_slow])
@given(data=st.data())
def test_no_input_ends_in_a_traceback(data, files, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = data.draw(command_lines(files))
    code, err = run_cli(argv)
    event(f"{argv[0]} exit {code}")
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert lines and "error:" in lines[-1], (argv, err)   # one line naming the problem


def test_the_fuzz_reaches_every_command():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"walk", "stand", "play", "motion info", "motion convert", "skill run", "optimize skill", "bench push",
            "bench envelope", "bench terrain", "bench report", "character show", "course show"} <= names


@pytest.mark.parametrize(("argv", "expected"), [
    (["walk", "--seconds", "0.2", "--push", "1e12@0.1"], 1),   # the simulation blows up: a failed run
    (["bench", "envelope", "--speeds", "3", "--periods", "0.2", "--out", UNWRITABLE], 2),
    (["bench", "terrain", "--features", "ladder", "--out", UNWRITABLE], 2),
    (["motion", "convert", "/nonexistent.bvh", "o.bvh"], 2),
])
def test_known_hard_inputs(argv, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = run_cli(argv)
    assert code == expected and "Traceback" not in err, err
