"""``strider play``, ``strider motion info|convert`` and ``--bvh``: real clips, real video, one line per bad input."""

from __future__ import annotations

import imageio.v3 as iio
import numpy as np
import pytest

from strider.cli.main import main
from strider.motion.files import load_clip
from strider.motion.mocap import mocap_dir

MOCAP = mocap_dir()
pytestmark = pytest.mark.skipif(MOCAP is None, reason="no shared mocap folder (set STRIDER_MOCAP)")
DM_WALK = str(MOCAP / "deepmimic" / "humanoid3d_walk.txt") if MOCAP else ""
DM_KICK = str(MOCAP / "deepmimic" / "humanoid3d_kick.txt") if MOCAP else ""
CMU_WALK = str(MOCAP / "bvh" / "cmu_02_01_walk.bvh") if MOCAP else ""
SOURCE_YELLOW = np.array([242, 204, 51])   # SEGMENT_RGBA in strider.sim.render, as 8-bit colour
COLOUR_TOL = 40


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _yellow_pixels(frame: np.ndarray) -> int:
    return int((np.abs(frame.astype(int) - SOURCE_YELLOW).max(axis=2) < COLOUR_TOL).sum())


def test_play_writes_a_video_with_the_source_beside(capsys, tmp_path):
    video = tmp_path / "walk.mp4"
    code, out, err = run(capsys, "play", DM_WALK, "--video", str(video), "--show-source", "--loop", "2",
                         "--width", "320", "--height", "180")
    assert code == 0, err
    assert "joint map deepmimic" in out and "reference pose differs" in out
    frames = iio.imread(video)
    clip = load_clip(DM_WALK)
    assert len(frames) == int(2 * clip.duration * 30 + 1e-6) + 1
    assert _yellow_pixels(frames[len(frames) // 2]) > 50       # the source skeleton is drawn
    plain = tmp_path / "plain.mp4"
    assert run(capsys, "play", DM_WALK, "--video", str(plain), "--width", "320", "--height", "180")[0] == 0
    assert _yellow_pixels(iio.imread(plain)[len(frames) // 4]) < 10


def test_info_reports_the_clip(capsys):
    code, out, _ = run(capsys, "motion", "info", CMU_WALK)
    assert code == 0
    assert "frames: 344 at 120 fps" in out and "up +y, forward +z" in out and "LeftUpLeg" in out
    code, out, _ = run(capsys, "motion", "info", DM_WALK, "--json")
    assert code == 0 and '"loop": true' in out


def test_convert_between_formats(capsys, tmp_path):
    bvh, npz = tmp_path / "walk.bvh", tmp_path / "walk.npz"
    code, out, _ = run(capsys, "motion", "convert", DM_WALK, str(bvh))
    assert code == 0 and "walk.loop.bvh" in out   # the DeepMimic walk loops: the BVH's name says so
    assert run(capsys, "motion", "convert", str(tmp_path / "walk.loop.bvh"), str(npz))[0] == 0
    assert load_clip(npz).n_frames == load_clip(DM_WALK).n_frames


def test_walk_writes_bvh(capsys, tmp_path):
    out = tmp_path / "walk.bvh"
    code, _, err = run(capsys, "walk", "--seconds", "0.5", "--bvh", str(out), "--fps", "20")
    assert code == 0, err
    clip = load_clip(out)
    assert clip.n_frames == 10 and clip.skeleton.names[0] == "pelvis"


@pytest.mark.parametrize("argv, message", [
    (["play", "nope.bvh", "--video", "o.mp4"], "does not exist"),
    (["play", "{bad}", "--video", "o.mp4"], "line 4: unexpected 'OFSET'"),
    (["play", DM_KICK, "--video", "o.mp4", "--loop", "2"], "not a cyclic clip"),
    (["play", DM_WALK, "--video", "o.mp4", "--loop", "0"], "--loop"),
    (["play", DM_WALK, "--video", "o.txt"], "must end in"),
    (["play", DM_WALK, "--video", "o.mp4", "--character", "nobody"], "unknown character"),
    (["play", DM_WALK, "--video", "o.mp4", "--map", "cmu"], "joint map"),
    (["motion", "info", "{bad}"], "line 4: unexpected 'OFSET'"),
    (["motion", "convert", DM_WALK, "out.txt"], "written as"),
    (["walk", "--bvh", "out.mp4"], "must end in .bvh"),
    (["walk", "--bvh", "/no/such/folder/w.bvh"], "does not exist"),
])
def test_bad_input_gives_one_line_and_exit_2(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT a\n{\n OFSET 0 0 0\n}\n")
    argv = [str(bad) if a == "{bad}" else a for a in argv]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and message in err, err
