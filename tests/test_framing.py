"""The video camera frames the character whether it stands or lies on the ground, on the real engine."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strider import quat
from strider.characters import load_character
from strider.sim import CharacterPlacement, Scene, World
from strider.sim.framing import FramingParams, frame_points, glide

FOVY, ASPECT = 45.0, 16 / 9


def body_points(lying: bool) -> np.ndarray:
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    hero = world.character()
    if lying:   # on its back, pelvis 15 cm up: a fallen or rolling character
        hero.set_root_orientation(quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), -math.pi / 2))
        hero.set_root_height(0.15)
    world.forward()
    return world.data.xipos[hero.all_bodies].copy()


def visible(points: np.ndarray, pose, fovy: float = FOVY, aspect: float = ASPECT) -> bool:
    """Whether every point projects inside the frame of a camera looking along +y at ``pose``."""
    el = math.radians(pose.elevation)
    forward = np.array([0.0, math.cos(el), math.sin(el)])
    eye = pose.lookat - pose.distance * forward
    right = np.array([1.0, 0.0, 0.0])
    up = np.cross(right, forward)
    rel = points - eye
    depth = rel @ forward
    t = math.tan(math.radians(fovy) / 2)
    return bool(np.all(depth > 0) and np.all(np.abs(rel @ up / depth) <= t)
                and np.all(np.abs(rel @ right / depth) <= t * aspect))


@pytest.mark.parametrize("lying", [False, True])
def test_the_camera_keeps_the_whole_body_in_frame_and_close(lying):
    points = body_points(lying)
    pose = frame_points(points, FOVY, ASPECT, FramingParams())
    assert visible(points, pose)
    assert abs(pose.lookat[2] - (points[:, 2].min() + points[:, 2].max()) / 2) < 0.01
    if lying:   # looked down on from closer than the fixed follow camera's 3.2 m, not along the floor
        assert pose.elevation < -25 and pose.distance < 3.2
    else:
        assert -10 <= pose.elevation <= -6


def test_the_camera_glides_instead_of_jumping():
    params = FramingParams()
    standing = frame_points(body_points(False), FOVY, ASPECT, params)
    lying = frame_points(body_points(True), FOVY, ASPECT, params)
    step = glide(standing, lying, params)
    assert standing.distance != lying.distance
    assert step.distance == pytest.approx(standing.distance + params.glide * (lying.distance - standing.distance))
    assert glide(None, lying, params) is lying


def test_a_rendered_frame_follows_a_body_on_the_ground():
    from strider.sim.render import FrameRenderer

    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    hero = world.character()
    renderer = FrameRenderer(world, 160, 90)
    try:
        standing = renderer.render()
        hero.set_root_orientation(quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), -math.pi / 2))
        hero.set_root_height(0.15)
        world.forward()
        for _ in range(40):   # let the camera glide down to the body
            lying = renderer.render()
        assert renderer.camera.elevation < -25 and renderer.camera.lookat[2] < 0.4
        assert standing.shape == lying.shape == (90, 160, 3) and not np.array_equal(standing, lying)
    finally:
        renderer.close()
