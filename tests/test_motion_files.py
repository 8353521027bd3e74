"""Motion files on real mocap: BVH and DeepMimic readers, the BVH writer, strider's .npz, and malformed input."""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from motion_fuzz import mutate_bvh, mutate_deepmimic
from strider import quat
from strider.motion.bvh import format_bvh, parse_bvh, read_bvh
from strider.motion.clip import Clip
from strider.motion.deepmimic import parse_deepmimic
from strider.motion.errors import MotionFormatError
from strider.motion.files import load_clip, save_clip
from strider.motion.mocap import mocap_dir
from strider.motion.skeleton import Skeleton

MOCAP = mocap_dir()
pytestmark = pytest.mark.skipif(MOCAP is None, reason="no shared mocap folder (set STRIDER_MOCAP)")
BVH_FILES = sorted(MOCAP.glob("bvh/*.bvh")) if MOCAP else []
DEEPMIMIC_FILES = sorted(p for p in MOCAP.glob("deepmimic/humanoid3d_*.txt") if "character" not in p.name) \
    if MOCAP else []
ROTATION_TOL = 1e-6   # rad (issue 4 acceptance)
POSITION_TOL = 1e-6   # m (and file units)
FUZZ_CI_CASES = 400   # per reader; the 10,000-case run is the slow test below
FUZZ_FULL_CASES = 10_000


def assert_same_motion(a: Clip, b: Clip) -> None:
    assert a.skeleton.names == b.skeleton.names
    assert a.n_frames == b.n_frames
    assert np.allclose(a.skeleton.offsets, b.skeleton.offsets, atol=POSITION_TOL)
    assert quat.angle_between(a.rotations, b.rotations).max() < ROTATION_TOL
    assert np.abs(a.positions - b.positions).max() < POSITION_TOL
    assert abs(a.fps - b.fps) < 1e-6 * a.fps


def test_mocap_folder_holds_the_clips():
    assert len(BVH_FILES) >= 2 and len(DEEPMIMIC_FILES) >= 13


@pytest.mark.parametrize("path", BVH_FILES, ids=lambda p: p.stem)
def test_bvh_round_trip_on_real_files(path, tmp_path):
    clip = read_bvh(path)
    assert clip.axes.up == "+y" and clip.axes.forward == "+z"
    out = save_clip(clip, tmp_path / "out.bvh")
    assert_same_motion(clip, read_bvh(out))


def test_cmu_walk_header_and_units():
    clip = read_bvh(MOCAP / "bvh" / "cmu_02_01_walk.bvh")
    assert clip.n_frames == 344 and abs(clip.fps - 120) < 0.01
    # README: "the skeleton is about 0.056 m per unit"
    assert 0.05 < clip.axes.unit < 0.062
    # specs/phase-tracking.md: walks +Z about 3.36 m, about 1.18 m/s once in metres
    travel = clip.to_strider().root_pos[-1] - clip.to_strider().root_pos[0]
    assert 1.1 < travel[0] / clip.duration < 1.3


def test_reading_the_995_frame_file_is_fast():
    path = MOCAP / "bvh" / "scaled_131_01.bvh"
    start = time.perf_counter()
    clip = read_bvh(path)
    elapsed = time.perf_counter() - start
    assert clip.n_frames == 995
    print(f"read {path.name} ({clip.n_frames} frames) in {elapsed * 1000:.0f} ms")


@pytest.mark.parametrize("path", DEEPMIMIC_FILES, ids=lambda p: p.stem)
def test_deepmimic_clips_load_and_convert(path, tmp_path):
    clip = load_clip(path)
    assert clip.n_frames > 10 and clip.fps > 10
    assert np.allclose(np.linalg.norm(clip.rotations, axis=-1), 1.0)
    for suffix in (".npz", ".bvh"):
        back = load_clip(save_clip(clip, tmp_path / f"clip{suffix}"), axes=clip.axes)
        assert_same_motion(clip, back)


def test_npz_is_exact(tmp_path):
    clip = read_bvh(BVH_FILES[0])
    back = load_clip(save_clip(clip, tmp_path / "c.npz"))
    assert np.array_equal(back.rotations, clip.rotations) and np.array_equal(back.positions, clip.positions)
    assert back.axes == clip.axes and back.skeleton.channels == clip.skeleton.channels


# --- property: random skeletons and motions round-trip ------------------------------------------
@st.composite
def random_clips(draw) -> Clip:
    n = draw(st.integers(1, 8))
    parents = [-1] + [draw(st.integers(0, i - 1)) for i in range(1, n)]
    sites = [False] * n
    for i in range(1, n):  # leaves may be end sites, one per parent (BVH names them after it)
        sites[i] = i not in parents and not any(sites[k] and parents[k] == parents[i] for k in range(i)) \
            and draw(st.booleans())
    orders = ["".join(p) for p in ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")]
    channels = []
    for i in range(n):
        if sites[i]:
            channels.append(())
            continue
        order = draw(st.sampled_from(orders))
        pos = ("Xposition", "Yposition", "Zposition") if i == 0 or draw(st.booleans()) else ()
        channels.append(pos + tuple(f"{a}rotation" for a in order))
    seed = draw(st.integers(0, 2**31 - 1))
    frames = draw(st.integers(1, 6))
    rng = np.random.default_rng(seed)
    offsets = rng.uniform(-2, 2, (n, 3))
    rotations = quat.normalize(rng.normal(size=(frames, n, 4)))
    rotations[:, np.array(sites)] = quat.IDENTITY
    positions = np.broadcast_to(offsets, (frames, n, 3)).copy()
    moving = np.array([any(c.endswith("position") for c in ch) for ch in channels])
    positions[:, moving] = rng.uniform(-50, 50, (frames, int(moving.sum()), 3))
    names = tuple(f"j{parents[i]}_End" if sites[i] else f"j{i}" for i in range(n))
    skeleton = Skeleton(names, tuple(parents), offsets, tuple(sites), tuple(channels))
    return Clip(skeleton, draw(st.sampled_from([24.0, 30.0, 60.0, 120.0])), rotations, positions)


@given(random_clips())
def test_random_skeletons_and_motions_round_trip(clip):
    back = parse_bvh(format_bvh(clip), axes=clip.axes)
    # The writer lists joints depth first; compare joint by joint through the names.
    order = [back.skeleton.index(n) for n in clip.skeleton.names]
    assert [back.skeleton.names[i] for i in order] == list(clip.skeleton.names)
    assert np.allclose(back.skeleton.offsets[order], clip.skeleton.offsets, atol=POSITION_TOL)
    assert quat.angle_between(back.rotations[:, order], clip.rotations).max() < ROTATION_TOL
    assert np.abs(back.positions[:, order] - clip.positions).max() < POSITION_TOL


# --- malformed input ------------------------------------------------------------------------------
def _small_bvh() -> str:
    return format_bvh(read_bvh(BVH_FILES[0]).cropped(0, 0.05))


def _fuzz(reader, mutate, base: str, cases: int, seed: int) -> dict:
    rng = random.Random(seed)
    outcomes = {"error": 0, "read": 0}
    slowest = 0.0
    for k in range(cases):
        text = mutate(rng, base)
        start = time.perf_counter()
        try:
            reader(text, source="fuzz")
            outcomes["read"] += 1
        except MotionFormatError as exc:
            assert exc.line is not None, f"case {k}: no line in {exc}"
            assert str(exc).startswith("fuzz: line ") and exc.problem, f"case {k}: unclear message {exc}"
            outcomes["error"] += 1
        slowest = max(slowest, time.perf_counter() - start)
    outcomes["slowest_s"] = slowest
    return outcomes


def _deepmimic_base() -> str:
    return Path(DEEPMIMIC_FILES[-1]).read_text()


def _fuzz_reader(kind: str, cases: int, seed: int) -> dict:
    if kind == "bvh":
        return _fuzz(parse_bvh, mutate_bvh, _small_bvh(), cases, seed)
    return _fuzz(parse_deepmimic, mutate_deepmimic, _deepmimic_base(), cases, seed)


@pytest.mark.parametrize("kind", ["bvh", "deepmimic"])
def test_malformed_files_give_clear_errors(kind):
    result = _fuzz_reader(kind, FUZZ_CI_CASES, seed=1)
    assert result["error"] > FUZZ_CI_CASES // 2   # most mutations break the file, and each says where and why


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bvh", "deepmimic"])
def test_ten_thousand_malformed_files(kind):
    result = _fuzz_reader(kind, FUZZ_FULL_CASES, seed=2)
    print(kind, result)
    assert result["error"] > FUZZ_FULL_CASES // 2


ONE_JOINT = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 3 Xrotation Yrotation Zrotation\n}\nMOTION\n"
TWO_B = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n JOINT b\n {\n OFFSET 0 1 0\n }\n"


@pytest.mark.parametrize("text, problem", [
    ("", "empty"),
    (ONE_JOINT + "Frames: 0\nFrame Time: 0.1\n", "empty"),
    (ONE_JOINT + "Frames: 2\nFrame Time: 0.1\n1 2 3\n", "truncated"),
    ("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 3 Xrotation Yrotation\n}\n", "lists 2"),
    (ONE_JOINT + "Frames: 1\nFrame Time: 0.1\n1 nan 2\n", "not finite"),
    (ONE_JOINT + "Frames: 1\nFrame Time: 0.1\n1 x 2\n", "not a number"),
    (ONE_JOINT + "Frames: 1\nFrame Time: 0.1\n1 2\n", "has 2 values"),
    (TWO_B + " JOINT b\n {\n OFFSET 0 1 0\n }\n}\n", "repeats"),
    (TWO_B, "truncated"),
])
def test_bvh_errors_name_the_line_and_problem(text, problem):
    with pytest.raises(MotionFormatError, match=problem) as info:
        parse_bvh(text, source="x.bvh")
    assert info.value.line is not None


def test_a_looping_clip_keeps_its_loop_through_bvh(tmp_path):
    """BVH has no loop flag: a looping DeepMimic clip's BVH carries it in its name, and reads back looping."""
    walk = load_clip(MOCAP / "deepmimic" / "humanoid3d_walk.txt")
    assert walk.loop and not walk.looks_cyclic()   # the pose test alone would lose it
    written = save_clip(walk, tmp_path / "walk.bvh")
    assert written == tmp_path / "walk.loop.bvh" and not (tmp_path / "walk.bvh").exists()
    back = load_clip(written)
    assert back.loop and back.name == "walk"
    assert load_clip(save_clip(back, tmp_path / "again.npz")).loop
    kick = load_clip(MOCAP / "deepmimic" / "humanoid3d_kick.txt")
    assert not kick.loop and save_clip(kick, tmp_path / "kick.bvh") == tmp_path / "kick.bvh"
    assert not load_clip(tmp_path / "kick.bvh").loop
