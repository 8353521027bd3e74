"""Outputs are checked the way they will be written, before any work (issue 19, items 1 and 6)."""

from __future__ import annotations

import itertools
import os

import pytest

from strider.cli.main import main
from strider.errors import UsageError
from strider.outputs import check_output_folder, check_writable
from strider.runner.frame_clock import FrameClock

UNWRITABLE = "/sys/strider-check"   # refused by the kernel even to root, unlike what os.access reports


def test_an_unwritable_file_is_refused_and_nothing_is_left_behind(tmp_path):
    with pytest.raises(UsageError, match="cannot write"):
        check_writable(f"{UNWRITABLE}.mp4")
    target = tmp_path / "out.bvh"
    assert check_writable(target) == target and not target.exists()


def test_an_output_folder_is_created_or_refused(tmp_path):
    made = check_output_folder(tmp_path / "a" / "b")
    assert made.is_dir() and os.listdir(made) == []
    with pytest.raises(UsageError, match="cannot write there"):
        check_output_folder(UNWRITABLE)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(UsageError, match="not a folder"):
        check_output_folder(a_file)


@pytest.mark.parametrize("argv", [
    ["walk", "--seconds", "1", "--video", f"{UNWRITABLE}.mp4"],
    ["walk", "--seconds", "1", "--bvh", f"{UNWRITABLE}.bvh"],
    ["bench", "push", "--out", UNWRITABLE, "--directions", "1", "--phases", "1"],
    ["bench", "dynamics", "--out", UNWRITABLE],
    ["optimize", "skill", "roll-supine-to-prone", "--out", UNWRITABLE, "--budget", "1"],
    ["skill", "run", "stand", "--seconds", "1", "--video", f"{UNWRITABLE}.mp4"],
    ["skill", "run", "stand", "--seconds", "1", "--perturb-seed", "-4"],
])
def test_the_cli_refuses_before_any_work_with_one_line(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("strider: error:") and "\n" not in err


def test_frames_keep_the_asked_rate_without_drift():
    clock = FrameClock(30.0, 0.001)
    frames = [n for n in range(3001) if clock.is_frame(n)]
    assert len(frames) == 91                      # 0 .. 3 s at 30 per second, both ends
    assert all(abs(n * 0.001 - k / 30.0) <= 0.0005 + 1e-12 for k, n in enumerate(frames))
    assert all(clock.next_after(a) == b for a, b in itertools.pairwise(frames))
    with pytest.raises(ValueError):
        FrameClock(2000.0, 0.001)
