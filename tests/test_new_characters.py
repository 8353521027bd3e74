"""The characters of issue 13, part 3: planar roots, optional roles, the DeepMimic humanoid, box soles with
named corners. Each holds its standing (or initial) pose for 5 s under PD, touching the ground only with its
feet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from strider.characters import load_character
from strider.characters.deepmimic import convert, dump
from strider.characters.library import DATA_DIR
from strider.cli.characters import HOLD_GAINS
from strider.errors import UsageError
from strider.sim import CharacterPlacement, Scene, World
from strider.sim.dynamics import Dynamics

HOLD_SECONDS = 5.0
MAX_DRIFT = 0.02               # m the centre of mass may move while holding
MOCAP = Path(__file__).resolve().parents[2] / "shared" / "mocap" / "deepmimic"


def _hold(world: World, torque_pd=None) -> tuple[np.ndarray, bool]:
    ch = world.character()
    start = ch.com_position()
    touched = False
    steps = round(HOLD_SECONDS / world.timestep)
    chunk = 1 if torque_pd else 10
    for _ in range(0, steps, chunk):
        if torque_pd:
            torque_pd()
        world.step(chunk)
        touched = touched or ch.non_foot_contact()
    return ch.com_position() - start, touched


def _stiff(world: World) -> None:
    ch = world.character()
    for joint in ch.joints:
        ch.set_servo_gains(joint, *HOLD_GAINS)


@pytest.mark.parametrize("name", ["planar7", "planar14", "deepmimic", "bipv3"])
def test_a_character_holds_its_standing_pose(name):
    world = World(Scene((CharacterPlacement(load_character(name)),)))
    if name != "deepmimic":     # DeepMimic's own gains (500/50) hold it; the others' are walking gains
        _stiff(world)
    drift, touched = _hold(world)
    assert np.linalg.norm(drift) < MAX_DRIFT and not touched


def test_the_point_footed_walker_holds_a_stance_with_its_legs_apart():
    world = World(Scene((CharacterPlacement(load_character("planar5")),)))
    ch = world.character()
    spread = {"lHip": -0.3, "rHip": 0.3}
    pos, quat = ch.root_pose()
    ch.set_pose(pos, quat, spread)
    for joint, angle in spread.items():
        ch.servo_targets[ch.joints[joint].servos] = angle
    world.forward()
    _stiff(world)
    drift, touched = _hold(world)
    assert abs(drift[0]) < MAX_DRIFT and -0.06 < drift[2] < 0 and not touched   # it settles onto its feet
    standing_apart = world.character().body_position("lShank")[0] - world.character().body_position("rShank")[0]
    assert standing_apart > 0.2


def test_a_torque_driven_character_holds_its_pose_under_pd_torques():
    """bipv3-torque has motors: the PD runs here, explicitly, with gains each joint's inertia keeps stable."""
    world = World(Scene((CharacterPlacement(load_character("bipv3-torque")),), timestep=0.0002))
    ch, h = world.character(), world.timestep
    servos = np.concatenate([j.servos for j in ch.joints.values()])
    dofs = np.concatenate([j.dof for j in ch.joints.values()])
    inertia = np.diag(Dynamics(world).mass_matrix())[dofs]
    kp = np.minimum(HOLD_GAINS[0], 0.3 * inertia / h**2)
    kd = np.minimum(HOLD_GAINS[1], 0.5 * inertia / h)

    def pd() -> None:
        ch.motor_torques[servos] = -kp * ch.servo_positions[servos] - kd * ch.servo_velocities[servos]

    drift, touched = _hold(world, pd)
    assert np.linalg.norm(drift) < MAX_DRIFT and not touched


def test_a_planar_root_keeps_the_character_in_its_plane():
    spec = load_character("planar7")
    world = World(Scene((CharacterPlacement(spec, x=1.5),)))
    ch = world.character()
    assert spec.dof == 9 and world.model.nv == 9   # an 18-D state (seed 000, Sec. 3.6)
    pos, quat = ch.root_pose()
    assert pos[0] == 1.5 and pos[1] == 0.0 and quat[1] == quat[3] == 0.0
    feet = [ch.body_position(f)[2] for f in ("lFoot", "rFoot")]
    assert all(0.02 < z < 0.03 for z in feet)       # box soles 2.5 cm below the foot's centre, 1 mm above ground
    ch.set_pose((2.0, 0.0, 1.3), (np.cos(0.1), 0.0, np.sin(0.1), 0.0), {})
    world.forward()
    pos, quat = ch.root_pose()
    assert np.allclose(pos, (2.0, 0.0, 1.3)) and np.allclose(quat, (np.cos(0.1), 0.0, np.sin(0.1), 0.0))
    assert np.allclose(ch.body_position("torso"), pos)
    world.apply_force("hero/torso", (0.0, 500.0, 0.0), duration=0.2)   # sideways: the plane holds
    world.step(500)
    assert ch.root_pose()[0][1] == 0.0
    with pytest.raises(UsageError, match="planar .* cannot face heading 0.5"):
        CharacterPlacement(spec, heading=0.5)


def test_box_soles_carry_named_corner_sites():
    world = World(Scene((CharacterPlacement(load_character("bipv3-torque")),)))
    ch = world.character()
    assert ch.actuation == "torque"
    for foot in ("lFoot", "rFoot"):
        corners = ch.sole_corners(foot)
        assert corners.shape == (4, 3) and np.allclose(corners[:, 2], 0.001, atol=1e-6)
        assert np.ptp(corners[:, 0]) == pytest.approx(0.155) and np.ptp(corners[:, 1]) == pytest.approx(0.1)


def test_planar_and_point_footed_characters_lack_the_upper_body_roles():
    assert not load_character("planar7").roles.upper_body
    assert load_character("planar5").roles.legs["left"].ankle is None
    assert load_character("deepmimic").roles.upper_body and load_character("bipv3").roles.upper_body


@pytest.mark.skipif(not MOCAP.is_dir(), reason="needs shared/mocap/deepmimic")
def test_the_shipped_deepmimic_character_is_the_conversion_of_the_release_file():
    shipped = (DATA_DIR / "deepmimic.yaml").read_text()
    assert dump(convert(MOCAP / "humanoid3d_character.txt")) == shipped
    spec = load_character("deepmimic")
    assert spec.total_mass == pytest.approx(45.0) and spec.dof == 34


@pytest.mark.skipif(not MOCAP.is_dir(), reason="needs shared/mocap/deepmimic")
def test_every_deepmimic_clip_plays_on_the_character_with_its_feet_on_the_ground():
    from strider.motion.deepmimic import deepmimic_motion, lowest_sole_heights, read_deepmimic

    spec = load_character("deepmimic")
    world = World(Scene((CharacterPlacement(spec),)))
    clips = sorted(p for p in MOCAP.glob("humanoid3d_*.txt") if p.stem != "humanoid3d_character")
    assert len(clips) >= 10
    for path in clips:
        motion = deepmimic_motion(read_deepmimic(path), spec)
        low = lowest_sole_heights(motion)
        # Every clip touches the ground with a foot; none sinks a sole more than 9 cm (the last frames of the crawl,
        # -8.2 cm); the gaits keep a foot within 2 cm of the ground.
        assert low.min() > -0.09 and np.median(np.abs(low)) < 0.045, path.stem
        if path.stem.split("_", 1)[1] in ("walk", "run", "jog"):
            assert np.median(np.abs(low)) < 0.02, path.stem
        motion.apply(world, motion.n_frames // 2)
        ch = world.character()
        assert np.allclose(ch.body_position("root"), motion.root_pos[motion.n_frames // 2])


def test_character_show_describes_and_holds_a_character(tmp_path, capsys):
    import json

    from strider.cli.main import main

    assert main(["character", "list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in ("planar7", "planar14", "planar5", "deepmimic", "bipv3-torque"))
    video = tmp_path / "p7.mp4"
    assert main(["character", "show", "planar7", "--json", "--video", str(video), "--seconds", "0.5"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dof"] == 9 and out["root"] == "planar" and out["roles"]["arms"] == []
    assert not out["hold"]["non_foot_contact"] and video.stat().st_size > 0
    assert main(["character", "show", "bipv3-torque", "--video", str(tmp_path / "t.mp4")]) == 2
    assert "has motors" in capsys.readouterr().err
    assert main(["walk", "--character", "planar7", "--seconds", "1"]) == 2
    assert "is planar" in capsys.readouterr().err
