"""``strider course list`` and ``strider course show NAME``: the shipped terrain courses, described and seen.

``show --video`` carries a standing figure along the course kinematically (no physics: the courses exist before
any controller can cross them all), its feet on ``Course.height``, so a course file can be checked by eye.
"""

from __future__ import annotations

import argparse
import json

from strider.cli.catalogue import add_list_and_show, list_shipped
from strider.errors import require_finite

ACTIONS = ("course",)
DEFAULT_FPS = 30.0
DEFAULT_SPEED = 1.5   # m/s the figure is carried along the course in a video

DESCRIPTION = """\
Terrain courses: YAML files of pieces laid along +x (flat, slope, steps, drop, stairs, gap, stepping stones,
bar, crate, height field). One description builds the geometry and answers height(x, y) and sdf(x, y), the
signed distance to the nearest edge of support, for planners.

examples:
  strider course list
  strider course show stones-0.5                   regions, length, floor
  strider course show gap-0.5 --video gap.mp4      a figure carried along it, feet on its surface
  strider course show my-course.yaml --json
"""


def add_commands(commands, formatter) -> None:
    from strider.courses import available_courses

    show = add_list_and_show(commands, formatter, "course", "terrain courses", DESCRIPTION, available_courses(),
                             "describe a course; --video shows it")
    show.add_argument("--video", default=None, metavar="PATH.mp4", help="carry a figure along the course, to an MP4")
    show.add_argument("--speed", type=float, default=DEFAULT_SPEED, metavar="M/S",
                      help="how fast the figure is carried, m/s (default: %(default)g)")
    show.add_argument("--character", default="bipv3", metavar="NAME", help="the figure (default: %(default)s)")


def describe(course) -> dict:
    return {"name": course.name, "description": course.description, "start_m": course.start, "end_m": course.end,
            "half_width_m": course.half_width, "floor_m": course.floor, "support_regions": len(course.regions),
            "blocks": len(course.blocks), "crates": len(course.crates), "height_fields": len(course.heightfields),
            "regions": [{"x": [r.x0, r.x1], "y": [r.y0, r.y1], "profile": [list(k) for k in r.profile]}
                        for r in course.regions]}


def _video(course, path: str, speed: float, character: str) -> int:
    from strider.characters import load_character
    from strider.sim import CharacterPlacement, Scene, World
    from strider.sim.render import VideoRecorder, check_video_path

    check_video_path(path)
    world = World(Scene((CharacterPlacement(load_character(character), x=course.start + 0.5),), course=course))
    figure = world.character()
    root, quat = figure.root_pose()
    clearance = root[2] - world.ground_height(root[0], root[1])
    recorder = VideoRecorder(world, path, DEFAULT_FPS)
    try:
        frames = max(1, int((course.end - course.start - 1.0) / speed * DEFAULT_FPS))   # one at least: a still
        for k in range(frames):
            x = course.start + 0.5 + k * speed / DEFAULT_FPS
            # Over a gap the figure keeps the last support's height, as if stepping across.
            ground = course.height(x, 0.0) if course.sdf(x, 0.0) > 0 else root[2] - clearance
            root = (x, 0.0, ground + clearance)
            figure.set_pose(root, quat, {})
            world.forward()
            recorder(world, k / DEFAULT_FPS)
    finally:
        recorder.close()
    return recorder.frames


def run(args: argparse.Namespace) -> int:
    from strider.courses import available_courses, load_course

    if args.course_action == "list":
        return list_shipped(available_courses(), load_course, lambda name, course: (
            f"{name:14s} {course.end - course.start:5.1f} m  {course.description}"))
    from strider.characters import load_character

    require_finite("--speed", args.speed, "m/s", positive=True)
    load_character(args.character)   # an unknown figure is refused even where no video would show it
    course = load_course(args.name)
    out = describe(course)
    if args.video is not None:
        out["video_frames"] = _video(course, args.video, args.speed, args.character)
        out["video"] = args.video
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{course.name}: {course.description}")
    print(f"  x from {course.start:g} to {course.end:g} m, {course.half_width:g} m either side; floor at "
          f"{course.floor:g} m")
    print(f"  {len(course.regions)} support regions, {len(course.blocks)} blocks, {len(course.crates)} crates, "
          f"{len(course.heightfields)} height fields")
    if "video" in out:
        print(f"  video: {out['video']} ({out['video_frames']} frames)")
    return 0
