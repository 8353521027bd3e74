"""Shared fixtures: characters and worlds on the real MuJoCo engine (never mocked)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import settings

from strider.characters import load_character
from strider.characters.spec import CharacterSpec
from strider.parallel import limit_blas_threads
from strider.sim import Character, CharacterPlacement, Scene, World

# One BLAS thread from the start, as the command line and its workers run: tests that call the command line in
# this process would otherwise change the count half-way through the session.
limit_blas_threads()

# Shared machines are noisy: property tests are judged on results, never on per-example time.
settings.register_profile("strider", deadline=None)
settings.load_profile("strider")


@pytest.fixture(scope="session")
def bipv3() -> CharacterSpec:
    return load_character("bipv3")


@pytest.fixture(scope="session")
def robot() -> CharacterSpec:
    return load_character("robot")


@pytest.fixture
def make_world(bipv3) -> Callable[..., World]:
    """World factory: one character (bipv3 unless ``spec`` is given); other keywords go to :class:`Scene`."""

    def make(spec: CharacterSpec | None = None, x: float = 0.0, heading: float = 0.0, **scene) -> World:
        placement = CharacterPlacement(spec or bipv3, x=x, heading=heading)
        return World(Scene((placement,), **scene))

    return make


def _stiffen(character: Character, kp: float = 3000.0, kd: float = 100.0) -> None:
    """Make every servo stiff enough to hold the zero pose rigidly (the spec gains let it topple)."""
    for name in character.joints:
        character.set_servo_gains(name, kp, kd)


def _random_pose(world: World, character: Character, rng: np.random.Generator, spread: float = 0.4) -> None:
    """Put every internal joint (and the root orientation) in a random pose, at rest."""
    from strider import quat

    d = world.data
    for j in character.joints.values():
        if j.kind == "ball":
            d.qpos[j.qpos] = quat.exp(rng.normal(0.0, spread, 3))
        else:
            d.qpos[j.qpos] = rng.uniform(-spread, spread, len(j.qpos))
    root = character.root_qpos
    d.qpos[root + 3:root + 7] = quat.normalize(rng.normal(size=4))
    d.qvel[:] = 0.0
    world.forward()


@pytest.fixture
def stiffen() -> Callable[..., None]:
    return _stiffen


@pytest.fixture
def random_pose() -> Callable[..., None]:
    return _random_pose
