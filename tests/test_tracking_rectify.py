"""Phase tracking, offline part: the planar model against MuJoCo, the mocap import of a real CMU walk, and its
rectification into a motion whose ground forces are valid (checked here with NumPy, apart from the NLP)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from strider.characters import load_character
from strider.cli.main import main
from strider.errors import UsageError
from strider.methods.tracking.mocap_import import FLAT, FREE, load_planar_clip
from strider.methods.tracking.planar_model import PlanarModel
from strider.methods.tracking.rectify import (
    SLOPE_COP_MARGIN,
    SOURCE_RECTIFIER,
    RectifyParams,
    active,
    heel_strikes,
    rectify,
)
from strider.methods.tracking.track_file import load_track, save_track
from strider.sim import CharacterPlacement, Scene, World

MOCAP = Path(__file__).resolve().parents[2] / "shared" / "mocap" / "bvh"
WALK = MOCAP / "cmu_02_01_walk.bvh"
TOLERANCE = 1e-5     # hand-written kinematics against MuJoCo's, and NumPy's re-check of the NLP's answer


@pytest.fixture(scope="module")
def model() -> PlanarModel:
    return PlanarModel.from_spec(load_character("planar14"))


@pytest.fixture(scope="module")
def clip():
    return load_planar_clip(WALK)


@pytest.fixture(scope="module")
def step(model, clip):
    return rectify(model, clip, RectifyParams(window="step"))


def test_planar_model_matches_mujoco(model):
    spec = load_character("planar14")
    world = World(Scene((CharacterPlacement(spec),)))
    ch = world.character()
    rng = np.random.default_rng(3)
    q = rng.uniform(-0.6, 0.6, model.n)
    q[1] += 1.0
    qd = rng.uniform(-2.0, 2.0, model.n)
    ch.set_root_position((q[0], 0.0, q[1]))
    ch.data.qpos[ch.root_qpos + 2] = q[2]
    ch.data.qvel[ch.root_qpos:ch.root_qpos + 3] = qd[:3]
    for i, name in enumerate(model.coords[3:], start=3):
        ch.set_joint_position(name, q[i])
        ch.data.qvel[ch.joint(name).dof] = qd[i]
    world.forward()
    poses, vels = model.poses(list(q)), model.velocities(list(q), list(qd))
    for link, p, v in zip(model.links, poses, vels):
        assert np.allclose([p[0], p[1]], ch.body_position(link.name)[[0, 2]], atol=TOLERANCE), link.name
        assert np.allclose([v[0], v[1]], ch.body_velocity(link.name)[[0, 2]], atol=TOLERANCE), link.name
        assert v[2] == pytest.approx(ch.body_angular_velocity(link.name)[1], abs=TOLERANCE), link.name
    assert np.allclose(model.com(list(q)), ch.com_position()[[0, 2]], atol=TOLERANCE)
    px, pz, _ = model.momentum(list(q), list(qd))
    assert np.allclose([px, pz], model.mass * ch.com_velocity()[[0, 2]], atol=TOLERANCE)


def test_the_cmu_walk_imports_with_alternating_contacts(clip):
    strikes = {side: heel_strikes(clip.modes[side]) for side in ("left", "right")}
    assert all(len(s) >= 2 for s in strikes.values())
    events = sorted((f, side) for side, s in strikes.items() for f in s)
    assert all(a[1] != b[1] for a, b in itertools.pairwise(events)), "heel strikes must alternate"
    first, last = events[0][0], events[-1][0]
    both_up = (clip.modes["left"][first:last] == FREE) & (clip.modes["right"][first:last] == FREE)
    assert not both_up.any(), "a walk has no flight"
    assert 0.9 < clip.speed < 1.3          # the clip walks about 1.1 m/s at the character's size


def _forces(model: PlanarModel, rect) -> tuple[np.ndarray, np.ndarray]:
    """Ground force per interval from the momentum the motion has, with NumPy (the wrap: the mirrored start)."""
    p = np.array([model.momentum(list(q), list(qd)) for q, qd in zip(rect.q, rect.qd)])
    nxt = np.roll(p, -1, axis=0)
    fx = (nxt[:, 0] - p[:, 0]) / rect.dt
    fz = (nxt[:, 1] - p[:, 1]) / rect.dt + model.mass * RectifyParams().gravity
    return fx, fz


def test_rectified_step_has_valid_ground_forces_and_closes_its_cycle(model, step):
    params = RectifyParams()
    assert step.solution.success, (step.solution.status, step.solution.worst_constraint)
    fx, fz = _forces(model, step)
    weight = model.mass * RectifyParams().gravity
    assert (fz >= params.min_normal_share * weight - TOLERANCE * weight).all()
    assert (np.abs(fx) <= params.friction * fz + TOLERANCE * weight).all()
    # the next step starts where this one ends: the mirrored first frame, one Euler step past the last
    following = np.array(model.mirrored(list(step.q[0]), step.shift))
    assert np.allclose(step.q[-1] + step.dt * step.qd[-1], following, atol=TOLERANCE)
    # the smallest change: joint angles stay near the capture's, and the walk keeps its pace
    assert np.abs(step.q[:, 3:] - step.source_q[:, 3:]).max() < 0.5
    assert 0.8 < step.speed < 1.3


def test_a_length_edit_rectifies_a_step_of_that_length_with_valid_forces(model, clip, step):
    short = rectify(model, clip, RectifyParams(length=0.5))
    assert short.solution.success, (short.solution.status, short.solution.worst_constraint)
    assert abs(short.shift - 0.5 * step.shift) < 0.05 * step.shift     # the edit holds; the angles give way
    fx, fz = _forces(model, short)
    weight = model.mass * RectifyParams().gravity
    assert (fz >= RectifyParams().min_normal_share * weight - TOLERANCE * weight).all()
    assert (np.abs(fx) <= RectifyParams().friction * fz + TOLERANCE * weight).all()
    with pytest.raises(UsageError, match="length edit"):
        rectify(model, clip, RectifyParams(length=3.0))


def test_a_slope_edit_walks_on_its_ramp_with_forces_in_the_ramps_cone(model, clip, step, tmp_path):
    slope = 20.0
    up = rectify(model, clip, RectifyParams(slope=slope))
    assert up.solution.success, (up.solution.status, up.solution.worst_constraint)
    assert up.ground_slope == slope
    rise = np.tan(np.radians(slope))
    assert _slide(model, up.q, up.modes, rise) < TOLERANCE
    assert _slide(model, step.q, step.modes, rise) > 0.01          # level feet are not on the ramp
    # the force in the ramp's frame: pressing into it, within its friction cone
    fx, fz = _forces(model, up)
    a = np.radians(slope)
    along, normal = np.cos(a) * fx + np.sin(a) * fz, np.cos(a) * fz - np.sin(a) * fx
    weight = model.mass * RectifyParams().gravity
    assert (normal >= RectifyParams().min_normal_share * weight - TOLERANCE * weight).all()
    assert (np.abs(along) <= RectifyParams().friction * normal + TOLERANCE * weight).all()
    # the next step starts as far up the ramp as it is ahead
    following = np.array(model.mirrored(list(up.q[0]), up.shift))
    following[1] += rise * up.shift
    assert np.allclose(up.q[-1] + up.dt * up.qd[-1], following, atol=TOLERANCE)
    back, _ = load_track(save_track(up, tmp_path / "up.track", "planar14"))
    assert back.ground_slope == slope
    with pytest.raises(UsageError, match="slope edit"):
        rectify(model, clip, RectifyParams(slope=45.0))


def test_a_downhill_edit_keeps_its_pressure_inside_the_feet_and_walks_where_the_sources_falls(model, clip):
    """strider's slope edit (SLOPE_WEIGHTS, SLOPE_COP_MARGIN) against the source's metric on -20 deg: its centre of
    pressure stays the margin inside a lone flat foot, and the tracker walks it 10 steps down its ramp."""
    from strider.bench.tracking import EDIT_STEP_ALLOWANCE, episode
    from strider.methods.tracking.constraints import fit_constraints

    slope = -20.0
    ours = rectify(model, clip, RectifyParams(slope=slope))
    source = rectify(model, clip, RectifyParams(slope=slope, **SOURCE_RECTIFIER))
    assert ours.solution.success and source.solution.success
    assert _nearest_foot_end(model, ours) >= SLOPE_COP_MARGIN - TOLERANCE
    assert _nearest_foot_end(model, source) < SLOPE_COP_MARGIN / 2      # the source's rides the toe or the heel
    for rect, walks in ((ours, True), (source, False)):
        constraints = fit_constraints(model, rect)
        walk = episode(constraints, 10 * EDIT_STEP_ALLOWANCE * constraints.period)
        assert (not walk.fell and walk.steps >= 10) == walks, (walks, walk.steps, walk.fall_time)
    with pytest.raises(UsageError, match="margin"):
        rectify(model, clip, RectifyParams(slope=slope, cop_margin=0.2))


def _nearest_foot_end(model: PlanarModel, rect) -> float:
    """m: the nearest the centre of pressure comes to the heel or the toe over the intervals one flat foot carries
    alone, from the motion's momentum with NumPy (the rectifier's own formula, on the ground z = rise x)."""
    p = np.array([model.momentum(list(q), list(qd)) for q, qd in zip(rect.q, rect.qd)])
    rise = np.tan(np.radians(rect.ground_slope))
    nearest = np.inf
    for i in range(len(rect.q) - 1):
        modes = {side: (rect.modes[side][i], rect.modes[side][i + 1]) for side in rect.modes}
        flat = [side for side, m in modes.items() if m == (FLAT, FLAT)]
        if len(flat) != 1 or any(m != (FREE, FREE) for side, m in modes.items() if side != flat[0]):
            continue
        fx, fz, tau = (p[i + 1] - p[i]) / rect.dt
        fz += model.mass * RectifyParams().gravity
        cx, cz = model.com(list(rect.q[i]))
        cop = (cx * fz - cz * fx - tau) / (fz - rise * fx)
        heel = model.point(list(rect.q[i]), model.contact(flat[0], "heel"))[0]
        toe = model.point(list(rect.q[i]), model.contact(flat[0], "toe"))[0]
        nearest = min(nearest, cop - heel, toe - cop)
    assert np.isfinite(nearest), "no interval on one flat foot"
    return float(nearest)


def _slide(model: PlanarModel, q: np.ndarray, modes: dict, rise: float = 0.0) -> float:
    """The most a contact point moves (along or into the ground z = rise x) while it is down."""
    worst = 0.0
    for c, point in enumerate(model.contacts):
        down = [i for i in range(len(q)) if active(modes[point.side][i], point.name)]
        if down:
            xs = np.array([model.point(list(q[i]), c) for i in down])
            worst = max(worst, float(np.ptp(xs[:, 0])), float(np.abs(xs[:, 1] - rise * xs[:, 0]).max()))
    return worst


def test_the_capture_itself_slides_its_feet(model, step):
    """The foot-contact check of the test above fails on the motion before rectification, so it has teeth."""
    assert _slide(model, step.source_q, step.modes) > 0.01
    assert _slide(model, step.q, step.modes) < TOLERANCE


def test_track_file_round_trip_and_bad_files(step, tmp_path):
    path = save_track(step, tmp_path / "walk.track", "planar14")
    back, character = load_track(path)
    assert character == "planar14"
    assert np.array_equal(back.q, step.q) and np.array_equal(back.qd, step.qd)
    assert back.shift == step.shift and back.solution.status == step.solution.status
    (tmp_path / "junk.track").write_text("not a track")
    with pytest.raises(UsageError, match="not a strider track file"):
        load_track(tmp_path / "junk.track")
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if k != "q"}
    np.savez(tmp_path / "cut.track.npz", **arrays)
    with pytest.raises(UsageError, match="q and qd"):
        load_track(tmp_path / "cut.track.npz")
    arrays = {k: v for k, v in {**arrays, "q": step.q}.items() if k != "modes_left"}
    np.savez(tmp_path / "nomodes.track.npz", **arrays)
    with pytest.raises(UsageError, match="no 'modes_left'"):
        load_track(tmp_path / "nomodes.track.npz")
    with pytest.raises(UsageError, match="no such file"):
        load_track(tmp_path / "missing.track")


def test_cli_rectify_writes_a_track_and_refuses_bad_input(tmp_path, capsys):
    out = tmp_path / "walk.track"
    assert main(["track", "rectify", str(WALK), "--out", str(out)]) == 0
    assert load_track(out)[0].solution.success
    assert main(["track", "rectify", str(WALK), "--out", str(out), "--rate", "5"]) == 2
    assert "--rate" in capsys.readouterr().err
    assert main(["track", "rectify", str(WALK), "--out", str(out), "--start", "2.6"]) == 2
    assert "no walking step" in capsys.readouterr().err
    assert main(["track", "rectify", str(WALK), "--out", str(out), "--length", "0"]) == 2
    assert "--length" in capsys.readouterr().err
    assert main(["track", "rectify", str(WALK), "--out", str(out), "--slope", "nan"]) == 2
    assert "--slope" in capsys.readouterr().err
    for bad in (["--cop-margin", "0.3"], ["--cop-margin", "nan"], ["--source", "--cop-margin", "0.02"]):
        assert main(["track", "rectify", str(WALK), "--out", str(out), *bad]) == 2
        assert "--cop-margin" in capsys.readouterr().err
    assert main(["track", "rectify", str(WALK), "--out", str(out), "--character", "bipv3"]) == 2
    assert "not planar" in capsys.readouterr().err
