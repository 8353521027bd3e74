"""``strider character list`` and ``strider character show NAME``: the shipped characters, described and seen.

``show`` prints what a character file builds (mass, degrees of freedom, root, actuation, bodies, joints, roles)
and, with ``--video``, simulates it holding its standing pose under stiff PD servos, the pose test every
character passes, so a new character file can be checked by eye.
"""

from __future__ import annotations

import argparse
import json

from strider.cli.catalogue import add_list_and_show, list_shipped
from strider.errors import UsageError, require_finite

ACTIONS = ("character",)
HOLD_GAINS = (2000.0, 100.0)   # N m/rad, N m s/rad: stiffer than gravity's pull about a 70 kg statue's ankles
DEFAULT_SECONDS = 3.0
DEFAULT_FPS = 30.0

DESCRIPTION = """\
The characters strider ships, and what a character file builds.

examples:
  strider character list
  strider character show planar7                   bodies, joints, mass, DOF, roles
  strider character show deepmimic --video dm.mp4  hold the standing pose 3 s under stiff PD, to video
  strider character show my-robot.yaml --json
"""


def add_commands(commands, formatter) -> None:
    from strider.characters import available_characters

    show = add_list_and_show(commands, formatter, "character", "characters", DESCRIPTION, available_characters(),
                             "describe a character; --video shows it holding its pose")
    show.add_argument("--video", default=None, metavar="PATH.mp4",
                      help="simulate the character holding its standing pose and write an MP4")
    show.add_argument("--seconds", type=float, default=DEFAULT_SECONDS, metavar="S",
                      help="how long it holds its pose in the video, s (default: %(default)g)")
    show.add_argument("--actuation", default=None, metavar="MODE", help="position, torque or spd (default: the "
                                                                         "file's)")


def describe(spec) -> dict:
    """What a character file builds, as plain data."""
    roles = spec.roles
    joints = {j.name: {"kind": j.kind, "gains": j.gains} for j in spec.joints()}
    return {"name": spec.name, "source": spec.source, "mass_kg": round(spec.total_mass, 3), "dof": spec.dof,
            "root": spec.root, "actuation": spec.actuation, "bodies": [b.name for b in spec.bodies],
            "joints": joints, "leg_length_m": round(spec.leg_length(), 4),
            "roles": {"root": roles.root, "torso": roles.torso, "head": roles.head, "neck": roles.neck,
                      "spine": list(roles.spine), "legs": sorted(roles.legs), "arms": sorted(roles.arms)},
            "gains": {n: {"kp": g.kp, "kd": g.kd, "limit": g.limit} for n, g in spec.gains.items()}}


def hold_pose(world, seconds: float, on_frame=None, frames=None) -> dict:
    """Hold the world's character in its current pose under stiff PD servos for ``seconds``; how far its centre of
    mass moved and whether anything but its feet touched the ground."""
    ch = world.character()
    if ch.actuation == "torque":
        raise UsageError(f"character {ch.spec.name!r} has motors (torque actuation): it has no servos to hold a "
                         "pose with; show it with --actuation position")
    for joint in ch.joints:
        ch.set_servo_gains(joint, *HOLD_GAINS)
    start = ch.com_position()
    touched = False
    steps = round(seconds / world.timestep)
    for n in range(steps):
        if frames is not None and on_frame is not None and frames.is_frame(n):
            on_frame(world, world.time)
        world.step(1)
        touched = touched or ch.non_foot_contact()
    drift = ch.com_position() - start
    return {"seconds": seconds, "com_drift_m": [round(float(v), 4) for v in drift], "non_foot_contact": touched}


def run(args: argparse.Namespace) -> int:
    from strider.characters import available_characters, load_character

    if args.character_action == "list":
        return list_shipped(available_characters(), load_character, lambda name, spec: (
            f"{name:14s} {spec.total_mass:6.1f} kg  {spec.dof:3d} DOF  {spec.root:6s} root  {spec.actuation}"))
    require_finite("--seconds", args.seconds, "s", positive=True)
    spec = load_character(args.name, actuation=args.actuation)
    out = describe(spec)
    if args.video is not None:
        from strider.runner.frame_clock import FrameClock
        from strider.sim import CharacterPlacement, Scene, World
        from strider.sim.render import VideoRecorder, check_video_path

        check_video_path(args.video)
        world = World(Scene((CharacterPlacement(spec),)))
        recorder = VideoRecorder(world, args.video, DEFAULT_FPS)
        try:
            out["hold"] = hold_pose(world, args.seconds, recorder, FrameClock(DEFAULT_FPS, world.timestep))
        finally:
            recorder.close()
        out["video"] = str(recorder.path)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{out['name']}: {out['mass_kg']} kg, {out['dof']} DOF ({out['root']} root), {out['actuation']} actuation, "
          f"leg {out['leg_length_m']} m")
    print(f"  source: {out['source']}")
    print(f"  bodies ({len(out['bodies'])}): {', '.join(out['bodies'])}")
    print(f"  joints ({len(out['joints'])}): " + ", ".join(f"{n} ({j['kind']})" for n, j in out["joints"].items()))
    r = out["roles"]
    print(f"  roles: root {r['root']}, torso {r['torso']}, head {r['head'] or '-'}, neck {r['neck'] or '-'}, "
          f"legs {'/'.join(r['legs'])}, arms {'/'.join(r['arms']) or '-'}")
    if "hold" in out:
        h = out["hold"]
        print(f"  held its pose {h['seconds']:g} s under PD {HOLD_GAINS[0]:g}/{HOLD_GAINS[1]:g}: centre of mass moved "
              f"{h['com_drift_m']} m, {'a body other than the feet touched the ground' if h['non_foot_contact'] else 'only its feet touched the ground'}")
        print(f"  video: {out['video']}")
    return 0
