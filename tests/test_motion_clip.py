"""Clip operations and the character skeleton, checked against MuJoCo's own kinematics on real clips."""

from __future__ import annotations

import numpy as np
import pytest

from strider import quat
from strider.motion.character_motion import CharacterMotion
from strider.motion.clip import blend
from strider.motion.files import load_clip
from strider.motion.mocap import mocap_dir
from strider.motion.recording import BvhRecorder

MOCAP = mocap_dir()
pytestmark = pytest.mark.skipif(MOCAP is None, reason="no shared mocap folder (set STRIDER_MOCAP)")
CMU_WALK = MOCAP / "bvh" / "cmu_02_01_walk.bvh" if MOCAP else None
DM_WALK = MOCAP / "deepmimic" / "humanoid3d_walk.txt" if MOCAP else None
CMU_MIRROR = {"LeftUpLeg": "RightUpLeg", "LeftLeg": "RightLeg", "LeftFoot": "RightFoot", "LeftToeBase": "RightToeBase",
              "LHipJoint": "RHipJoint", "LeftShoulder": "RightShoulder", "LeftArm": "RightArm",
              "LeftForeArm": "RightForeArm", "LeftHand": "RightHand", "LeftFingerBase": "RightFingerBase",
              "LeftHandIndex1": "RightHandIndex1", "LThumb": "RThumb", "LeftToeBase_End": "RightToeBase_End",
              "LeftHandIndex1_End": "RightHandIndex1_End", "LThumb_End": "RThumb_End"}
CMU_MIRROR.update({v: k for k, v in CMU_MIRROR.items()})


@pytest.fixture(scope="module")
def walk():
    return load_clip(CMU_WALK).to_strider()


def test_sampling_interpolates_between_frames(walk):
    t = 10.5 / walk.fps
    pos, quats = walk.sample(t)
    assert np.allclose(pos, 0.5 * (walk.positions[10] + walk.positions[11]))
    expected = quat.slerp(walk.rotations[10], walk.rotations[11], np.full(len(walk.skeleton), 0.5))
    assert quat.angle_between(quats, expected).max() < 1e-9
    on_frame = walk.sample(12 / walk.fps)
    assert quat.angle_between(on_frame[1], walk.rotations[12]).max() < 1e-9


def test_velocities_match_the_motion(walk):
    v = walk.velocities()
    travel = (walk.root_pos[-1] - walk.root_pos[0]) / walk.duration
    assert abs(v.root_linear[:, 0].mean() - travel[0]) < 0.05 * abs(travel[0])
    # Integrating the angular velocity of a knee over one frame gives the next frame's rotation.
    j = walk.skeleton.index("LeftLeg")
    k = 100
    step = quat.exp(v.angular[k, j] / walk.fps)
    ahead = quat.slerp(walk.rotations[k, j], walk.rotations[k + 1, j], np.array(0.5))
    behind = quat.slerp(walk.rotations[k - 1, j], walk.rotations[k, j], np.array(0.5))
    assert quat.angle_between(quat.mul(step, behind), ahead) < 1e-3


def test_mirroring_swaps_sides_and_twice_is_identity(walk):
    mirrored = walk.mirrored(CMU_MIRROR)
    pos, mpos = walk.world_positions(), mirrored.world_positions()
    left, right = walk.skeleton.index("LeftFoot"), walk.skeleton.index("RightFoot")
    assert np.allclose(mpos[:, left] * [1, -1, 1], pos[:, right], atol=1e-9)
    back = mirrored.mirrored(CMU_MIRROR)
    assert quat.angle_between(back.rotations, walk.rotations).max() < 1e-9
    assert np.allclose(back.positions, walk.positions)


def test_time_scaling_cropping_and_resampling(walk):
    slow = walk.time_scaled(2.0)
    assert abs(slow.duration - 2 * walk.duration) < 1.0 / walk.fps
    assert quat.angle_between(slow.rotations[20], walk.rotations[10]).max() < 1e-9
    crop = walk.cropped(0.5, 1.0)
    assert crop.n_frames == round(0.5 * walk.fps) + 1
    assert np.array_equal(crop.rotations[0], walk.rotations[round(0.5 * walk.fps)])
    at30 = walk.at_fps(30)
    assert at30.fps == 30 and abs(at30.duration - walk.duration) < 1 / 30


def test_looping_accumulates_root_motion():
    clip = load_clip(DM_WALK).to_strider()
    one = clip.root_pos[-1] - clip.root_pos[0]
    three = clip.looped(3)
    assert three.n_frames == 3 * clip.n_frames - 2
    # The clip turns a few degrees per cycle, and looping keeps that turn: compare distances travelled.
    travelled = np.linalg.norm(three.root_pos[-1, :2] - three.root_pos[0, :2])
    assert abs(travelled - 3 * np.linalg.norm(one[:2])) < 0.03 * travelled
    # Each cycle starts exactly where the last one ended.
    k = clip.n_frames - 1
    assert np.allclose(three.root_pos[k], clip.root_pos[-1])


def test_closing_a_loop_removes_its_seam_and_its_turn():
    clip = load_clip(DM_WALK).to_strider()
    # The DeepMimic walk's last frame is not its first pose: the right shoulder is 28 degrees off, the root
    # turned by about 7 degrees.
    assert np.degrees(clip.seam_mismatch().max()) > 20
    closed = clip.loop_closed()
    assert closed.seam_mismatch().max() < 1e-9
    assert np.array_equal(closed.rotations[0], clip.rotations[0])
    assert np.array_equal(closed.root_pos, clip.root_pos)
    # The correction grows linearly: halfway through the cycle each joint has moved by half its mismatch.
    half = clip.n_frames // 2
    moved = quat.angle_between(clip.rotations[half], closed.rotations[half])
    expected = clip.seam_mismatch() * half / (clip.n_frames - 1)
    assert np.allclose(moved, expected, atol=1e-9)
    # Looped, the closed cycle walks straight: three cycles end facing the way the first began.
    yaw, _ = closed.looped(3).heading_frames()
    assert abs(yaw[-1] - yaw[0]) < 1e-9
    turned, _ = clip.looped(3).heading_frames()
    assert abs(turned[-1] - turned[0]) > np.radians(15)


def test_a_turning_clip_turns_steadily_and_walks_an_arc_as_long_as_the_straight_one():
    clip = load_clip(DM_WALK).to_strider().loop_closed()   # closed: looped, it walks straight
    turned = clip.turning(np.pi / 2)
    yaw, path = clip.heading_frames()
    yaw_t, path_t = turned.heading_frames()
    extra = np.unwrap(yaw_t) - np.unwrap(yaw)
    assert np.allclose(extra, np.pi / 2 * clip.times / clip.duration, atol=1e-9)   # linear in time
    # the joints below the root are untouched, and so are the root's height and the path's length
    assert np.array_equal(turned.rotations[:, 1:], clip.rotations[:, 1:])
    assert np.allclose(turned.root_pos[:, 2], clip.root_pos[:, 2])
    step, step_t = (np.linalg.norm(np.diff(p, axis=0), axis=1) for p in (path, path_t))
    assert np.allclose(step, step_t, atol=1e-12)
    # each step of travel turns with the heading: the travel direction keeps its angle to the facing
    def bearing(p, y):
        d = np.diff(p, axis=0)
        return np.unwrap(np.arctan2(d[:, 1], d[:, 0]) - 0.5 * (y[1:] + y[:-1]))
    assert np.allclose(bearing(path_t, np.unwrap(yaw_t)), bearing(path, np.unwrap(yaw)), atol=0.02)
    # four cycles of a quarter turn come back round to the start heading, having walked a loop
    loop_yaw, loop_path = turned.looped(4).heading_frames()
    assert abs(np.unwrap(loop_yaw)[-1] - loop_yaw[0] - 2 * np.pi) < 1e-6
    assert np.linalg.norm(loop_path[-1] - loop_path[0]) < 0.2 * np.linalg.norm(path[-1] - path[0])


def test_blending_two_clips(walk):
    first, second = walk.cropped(0, 1.0), walk.cropped(1.5, 2.5)
    mixed = blend(first, second, at=0.8, window=0.2)
    assert abs(mixed.duration - (0.8 + second.duration)) < 1.0 / walk.fps
    assert quat.angle_between(mixed.rotations[10], first.rotations[10]).max() < 1e-9
    assert quat.angle_between(mixed.rotations[-1, 1:], second.rotations[-1, 1:]).max() < 1e-4
    # Aligned: the root does not jump when the blend starts.
    step = np.linalg.norm(np.diff(mixed.root_pos[:, :2], axis=0), axis=1)
    assert step.max() < 3 * np.linalg.norm(np.diff(walk.root_pos[:, :2], axis=0), axis=1).max()


def test_character_skeleton_kinematics_match_mujoco(make_world, random_pose, bipv3):
    """The clip of a simulated pose, through FK, puts every joint where MuJoCo puts it."""
    world = make_world()
    character = world.character()
    recorder = BvhRecorder(character, "unused.bvh", 30.0)
    rng = np.random.default_rng(4)
    anchors = []
    for _ in range(3):
        random_pose(world, character, rng)
        recorder(world, world.time)
        anchors.append({j: character.joint_anchor(j) for j in character.joints})
    clip = recorder.clip()
    pos = clip.world_positions()
    for k, frame in enumerate(anchors):
        for joint, where in frame.items():
            body = next(b.name for b in bipv3.bodies if b.joint is not None and b.joint.name == joint)
            assert np.allclose(pos[k, clip.skeleton.index(body)], where, atol=1e-9)
    # ... and joint coordinates recovered from the clip reproduce the pose in a fresh world.
    motion = CharacterMotion.from_clip(bipv3, clip)
    other = make_world()
    motion.apply(other, 2)
    assert np.allclose(other.data.xpos, world.data.xpos, atol=1e-9)
