"""Terrain courses (issue 13, part 4): the analytic height and signed distance agree with ray casts into the
model the same description builds, at 1,000 random points per course."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strider.characters import load_character
from strider.courses import available_courses, load_course
from strider.errors import ConfigError
from strider.sim import CharacterPlacement, Scene, World

POINTS = 1000
FEATURE_REACH = 14.0            # m past the start: every shipped course's features lie within it
HEIGHT_TOLERANCE = 1e-6         # m, boxes and planes
FIELD_TOLERANCE = 2e-3          # m, height fields (the engine's ray meets the cells' triangles with its own rounding)
SUPPORT = ("course/flat", "course/ramp", "course/stone", "course/heightfield")
EDGE_BAND = 1e-4                # m: points this close to an edge are left out of the sign test


def _world(course) -> World:
    return World(Scene((CharacterPlacement(load_character("planar7"), x=course.start - 10.0),), course=course))


def _on_support(world: World, x: float, y: float) -> bool:
    _, name = world.cast_down(x, y, 5.0)
    return name is not None and name.startswith(SUPPORT)


def _on_region(world: World, region, x: float, y: float) -> bool:
    """Whether a ray at (x, y) lands on support at the height ``region``'s surface has there (the same piece of
    support, not another across a step or a riser)."""
    hit, name = world.cast_down(x, y, 5.0)
    if name is not None and name.startswith("course/heightfield"):
        return True   # bumps on the region's own level ground
    return name is not None and name.startswith(SUPPORT) and abs(hit - region.surface(x)) < 1e-3


@pytest.mark.parametrize("name", available_courses())
def test_height_and_sdf_agree_with_ray_casts(name):
    course = load_course(name)
    world = _world(course)
    rng = np.random.default_rng(7)
    xs = rng.uniform(course.start - 0.5, min(course.end, course.start + FEATURE_REACH), POINTS)
    ys = rng.uniform(-course.half_width - 0.3, course.half_width + 0.3, POINTS)
    tolerance = FIELD_TOLERANCE if course.heightfields else HEIGHT_TOLERANCE
    checked = 0
    for x, y in zip(xs, ys):
        hit, geom = world.cast_down(x, y, 5.0)
        assert abs(hit - course.height(x, y)) < tolerance, (x, y, hit, course.height(x, y), geom)
        d = course.sdf(x, y)
        if abs(d) < EDGE_BAND:
            continue
        assert (d > 0) == (geom is not None and geom.startswith(SUPPORT)), (x, y, d, geom)
        checked += 1
        if abs(d) < 1.0 and checked % 10 == 0:
            # |sdf| is the distance to the nearest edge: inside it nothing changes, just past it something does.
            inner = [(x + 0.95 * abs(d) * math.cos(a), y + 0.95 * abs(d) * math.sin(a))
                     for a in np.linspace(0, 2 * math.pi, 8, endpoint=False)]
            reach = 1.05 * abs(d) + 1e-3
            outer = [(x + reach * math.cos(a), y + reach * math.sin(a))
                     for a in np.linspace(0, 2 * math.pi, 64, endpoint=False)]
            if d > 0:
                region = max((r for r in course.regions if r.contains(x, y)), key=lambda r: r.signed_distance(x, y))
                assert all(_on_region(world, region, px, py) for px, py in inner), (x, y, d)
                assert not all(_on_region(world, region, px, py) for px, py in outer), (x, y, d)
            else:
                assert not any(_on_support(world, px, py) for px, py in inner), (x, y, d)
                assert any(_on_support(world, px, py) for px, py in outer), (x, y, d)
    assert checked > 0.9 * POINTS


def test_the_world_answers_ground_height_from_the_course():
    course = load_course("stairs-up")
    world = World(Scene((CharacterPlacement(load_character("bipv3")),), course=course))
    for x in np.linspace(2.0, 6.0, 41):
        assert world.ground_height(x, 0.2) == course.height(x, 0.2)
        assert world.cast_down(x, 0.2, 5.0)[0] == pytest.approx(course.height(x, 0.2), abs=HEIGHT_TOLERANCE)
    assert course.height(4.0, 0.0) == pytest.approx(0.48) and course.height(5.0, 0.0) == pytest.approx(0.72)


def test_stones_jitter_with_their_seed_and_a_crate_is_a_loose_body():
    stones = load_course("stones-0.5")
    tops = [r.profile[0][1] for r in stones.regions[1:-1]]
    assert len(tops) == 12 and np.ptp(tops) > 0.01 and np.std([r.y0 for r in stones.regions[1:-1]]) > 0.01
    crate = load_course("crate")
    world = World(Scene((CharacterPlacement(load_character("bipv3")),), course=crate))
    x0 = world.body_position("course/crate0")[0]
    world.apply_force("course/crate0", (200.0, 0.0, 0.0), duration=0.3)
    world.step(1000)
    assert world.body_position("course/crate0")[0] > x0 + 0.05


def test_a_bad_course_file_is_refused_naming_the_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\npieces:\n  - flat: {length: 3}\n  - slope: {length: 2, degrees: 10}\n"
                    "  - gap: {width: 0.5, depth: 1}\n  - flat: {length: 3}\n")
    with pytest.raises(ConfigError, match="slope needs a continuous piece"):
        load_course(str(path))
    path.write_text("name: bad\npieces:\n  - flat: {length: -3}\n")
    with pytest.raises(ConfigError, match="length.*must be > 0"):
        load_course(str(path))
    path.write_text("name: bad\npieces:\n  - ramp: {length: 3}\n")
    with pytest.raises(ConfigError, match="unknown piece"):
        load_course(str(path))


def test_course_list_and_show(tmp_path, capsys):
    import json

    from strider.cli.main import main

    assert main(["course", "list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in available_courses())
    video = tmp_path / "gap.mp4"
    assert main(["course", "show", "gap-0.5", "--json", "--video", str(video), "--speed", "12"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["support_regions"] == 2 and out["regions"][0]["x"][1] == 3.0 and video.stat().st_size > 0
    assert main(["course", "show", "nowhere"]) == 2
    assert "unknown course 'nowhere'" in capsys.readouterr().err
    assert main(["course", "show", "gap-0.5", "--character", "nobody"]) == 2   # even without --video
    assert "unknown character 'nobody'" in capsys.readouterr().err


def test_gbwc_walks_up_a_course_step_and_the_run_records_the_course():
    import strider

    result = strider.walk(seconds=8, speed=1.0, terrain="course:step-up-0.1")
    assert not result.fell and result.distance_m > 5.0 and result.command["terrain"] == "course:step-up-0.1"
    assert result.final_state is not None


@pytest.mark.parametrize("name", available_courses())
def test_height_answers_as_reading_every_piece_at_each_edge_and_one_ulp_either_side(name):
    """Course.height looks only at the pieces whose x-extent reaches the point: it must answer what reading all
    of them gives (the terrain's definition), at the edges too."""
    from strider.courses.course import _inside

    course = load_course(name)

    def every_piece(x, y):
        top = course.floor
        top = max([top] + [r.surface(x) for r in course.regions if r.contains(x, y)])
        top = max([top] + [f.height(x, y) for f in course.heightfields if f.contains(x, y)])
        return max([top] + [b.centre[2] + b.size[2] for b in course.blocks if not b.support and _inside(b, x, y)])

    edges = ([e for r in course.regions for e in (r.x0, r.x1)]
             + [f.x0 + d for f in course.heightfields for d in (0.0, f.length)]
             + [b.centre[0] + s * b.size[0] for b in course.blocks for s in (-1, 1)])
    xs = [x for e in edges for x in (np.nextafter(e, -np.inf), e, np.nextafter(e, np.inf))]
    xs += list(np.random.default_rng(1).uniform(course.start - 1.0, course.end + 1.0, 300))
    for x in xs:
        for y in (0.0, 0.12, -course.half_width, course.half_width + 1e-3):
            assert course.height(float(x), y) == every_piece(float(x), y), (x, y)
