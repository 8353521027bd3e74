"""Stance-foot planting (per-leg two-link IK) on a made-up crouch, checked in the clip and on the engine."""

from __future__ import annotations

import numpy as np
import pytest

from strider import quat
from strider.control.ik import two_link
from strider.motion.character_motion import CharacterMotion
from strider.motion.foot_planting import FootPlanting, plant_stance_feet, stance_weight
from strider.motion.limb_triangle import limb_triangle

FPS = 30.0
FRAMES = 60
STANCE = slice(20, 40)     # the left foot is down in these frames, the right one never
SINK = 0.05                # m the soles start below the ground (the worst case)
HIP_FLEXION = 0.3          # rad: a crouch, foot flat (the ankle takes back hip flexion minus knee bend)
KNEE_BEND = 0.6
GROUND_TOL = 1e-3          # m: the soles after planting
POSE_TOL = 1e-9


def _crouch(spec, knee_bend: float, sole_height: float) -> CharacterMotion:
    """Both legs bent alike, feet flat, the pelvis still at the height that puts the soles at ``sole_height``."""
    coords = {}
    for leg in spec.roles.legs.values():
        hip_pitch = -HIP_FLEXION * knee_bend / KNEE_BEND    # thigh forward; the shank then comes back by the bend
        coords[leg.hip] = np.tile(quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), hip_pitch), (FRAMES, 1))
        coords[leg.knee] = np.full((FRAMES, 1), knee_bend)
        coords[leg.ankle] = np.tile([0.0, -hip_pitch - knee_bend], (FRAMES, 1))
    root_pos = np.tile([0.0, 0.0, 1.0], (FRAMES, 1))
    root_quat = np.tile(quat.IDENTITY, (FRAMES, 1))
    motion = CharacterMotion(spec, FPS, root_pos, root_quat, coords)
    lowest = min(p[..., 2].min() for p in motion.sole_points().values())
    return motion.shifted([0.0, 0.0, sole_height - lowest])


def _stance() -> dict[str, np.ndarray]:
    left = np.zeros(FRAMES, dtype=bool)
    left[STANCE] = True
    return {"left": left, "right": np.zeros(FRAMES, dtype=bool)}


def _lowest(motion: CharacterMotion, side: str) -> np.ndarray:
    return motion.sole_points()[side][..., 2].min(axis=1)


def test_a_sunken_stance_foot_is_brought_to_the_ground_by_the_knee_and_hip(bipv3, make_world):
    sunk = _crouch(bipv3, KNEE_BEND, -SINK)
    planted = plant_stance_feet(sunk, _stance())
    motion = planted.motion
    left, right = bipv3.roles.legs["left"], bipv3.roles.legs["right"]

    heights = _lowest(motion, "left")[STANCE]
    print(f"stance sole {-SINK * 100:+.1f} cm -> {heights.min() * 100:+.2f} .. {heights.max() * 100:+.2f} cm")
    assert np.abs(heights).max() < GROUND_TOL
    knee = motion.coords[left.knee][STANCE, 0]
    assert np.all(knee > KNEE_BEND) and np.all(knee < np.pi)      # bent further to lift the foot, not flipped

    # On the engine: the hip stays put and the foot keeps its orientation.
    before, after = make_world(), make_world()
    for i in range(STANCE.start, STANCE.stop, 5):
        sunk.apply(before, i)
        motion.apply(after, i)
        was, now = before.character(), after.character()
        assert np.allclose(now.joint_anchor(left.hip), was.joint_anchor(left.hip), atol=POSE_TOL)
        assert quat.angle_between(now.body_quat(left.foot), was.body_quat(left.foot)) < 1e-6
        lift = now.joint_anchor(left.ankle) - was.joint_anchor(left.ankle)
        assert np.allclose(lift, [0.0, 0.0, planted.lift["left"][i]], atol=1e-6)   # straight up

    # The correction fades in and out over the blend window and leaves every other frame alone.
    ramp = round(FootPlanting().blend_seconds * FPS)
    fade_in = planted.lift["left"][STANCE.start - ramp:STANCE.start + 1]
    assert np.all(np.diff(fade_in) > 0) and 0 < fade_in[0] < SINK / 2
    untouched = np.r_[0:STANCE.start - ramp, STANCE.stop + ramp:FRAMES]
    for joint in (left.hip, left.knee, left.ankle):
        assert np.array_equal(motion.coords[joint][untouched], sunk.coords[joint][untouched])
    for joint in (right.hip, right.knee, right.ankle):                        # never in stance
        assert np.array_equal(motion.coords[joint], sunk.coords[joint])
    assert np.array_equal(motion.root_pos, sunk.root_pos) and np.array_equal(motion.root_quat, sunk.root_quat)

    again = plant_stance_feet(sunk, _stance()).motion
    assert all(np.array_equal(again.coords[j], motion.coords[j]) for j in motion.coords)   # deterministic


def test_a_floating_foot_out_of_reach_straightens_the_knee_but_never_past_straight(bipv3):
    floating = _crouch(bipv3, 0.2, 0.10)
    motion = plant_stance_feet(floating, _stance()).motion
    knee = motion.coords[bipv3.roles.legs["left"].knee][STANCE, 0]
    straightest = bipv3.body(bipv3.roles.legs["left"].lower).joint.ranges[0][0]
    assert np.all(knee >= straightest) and np.all(knee < straightest + 0.01)   # as straight as it goes
    heights = _lowest(motion, "left")[STANCE]
    assert np.all(heights < _lowest(floating, "left")[STANCE]) and np.all(heights > 0.05)   # lower, not reached


def test_foot_planting_can_be_switched_off(bipv3):
    sunk = _crouch(bipv3, KNEE_BEND, -SINK)
    off = plant_stance_feet(sunk, _stance(), FootPlanting(enabled=False))
    assert off.motion is sunk and not off.lift["left"].any()


def test_stance_weight_is_one_in_stance_and_eases_to_zero():
    stance = np.zeros(20, dtype=bool)
    stance[8:12] = True
    weight = stance_weight(stance, 3)
    assert np.all(weight[8:12] == 1.0) and np.all(weight[:5] == 0.0) and np.all(weight[15:] == 0.0)
    assert np.allclose(weight[5:8], weight[14:11:-1]) and np.all(np.diff(weight[4:9]) > 0)
    assert not stance_weight(np.zeros(5, dtype=bool), 3).any()


@pytest.mark.parametrize("seed", range(3))
def test_limb_triangle_on_arrays_agrees_with_the_controllers_two_link(seed):
    rng = np.random.default_rng(seed)
    upper, lower = rng.uniform(0.2, 0.6, size=2)
    distance = rng.uniform(0.0, 1.5, size=200)     # some out of reach either way
    triangle = limb_triangle(upper, lower, distance)
    for d, bend in zip(distance, triangle.bend):
        _, expected = two_link(np.zeros(3), np.array([0.0, 0.0, -d]), upper, lower, np.array([1.0, 0.0, 0.0]))
        assert bend == pytest.approx(expected, abs=1e-12)
