"""``strider play``, ``strider motion info`` and ``strider motion convert``: motion clips at the command line.

Every problem with the input (a missing or malformed clip, an unknown
character, a bad flag value) arrives as a :class:`~strider.errors.StriderError`
and leaves through ``strider.cli.main`` as one line with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from strider import api
from strider.errors import UsageError

ACTIONS = ("play", "motion")
MAX_LOOPS = 1000
MAX_NAMES_SHOWN = 40

PLAY_DESCRIPTION = """\
Retarget a BVH, DeepMimic or strider .npz clip onto a character and play it
back kinematically (no physics) to a video, with the source skeleton beside it
if asked. Prints what the retargeting did: joint map, scale, reference-pose fix,
foot-height correction and per-leg foot planting.

examples:
  strider walk --seconds 6 --bvh walk.bvh && strider play walk.bvh --video walk.mp4
  strider play humanoid3d_walk.txt --character bipv3 --video walk.mp4 --show-source --loop 3
  strider play 02_01.bvh --video cmu.mp4 --show-source
  strider play clip.bvh --map my_rig.yaml --video clip.mp4
{sources}"""

CLIP_SOURCES = """
where clips come from:
  strider walk --bvh FILE and strider stand --bvh FILE write the simulated motion as BVH,
  so every example runs right after install. Motion capture: the CMU Graphics Lab Motion
  Capture Database (mocap.cs.cmu.edu; BVH conversions such as 02_01.bvh, a walk) and the
  DeepMimic clips (github.com/xbpeng/DeepMimic, data/motions/humanoid3d_*.txt).
"""

MOTION_DESCRIPTION = """\
Inspect and convert motion clips: BVH (any channel order, Y or Z up, any unit),
DeepMimic .txt clips and strider's own .npz clips.

examples:
  strider motion info walk.bvh                     frames, rate, joints, up axis and unit guesses
  strider motion convert humanoid3d_walk.txt walk.bvh
  strider motion convert walk.bvh walk.npz         strider's own exact clip format
{sources}"""

INFO_DESCRIPTION = """\
Describe a clip without changing it: its format, frames, frame rate, duration,
joints, the root's height, and guesses of its up axis and length unit (which
retargeting uses), and whether the clip loops: a DeepMimic clip's Loop field, a
BVH named *.loop.bvh, or a clip whose last pose repeats its first.

examples:
  strider walk --seconds 6 --bvh walk.bvh && strider motion info walk.bvh
  strider motion info 02_01.bvh --json
  strider motion info humanoid3d_walk.txt
{sources}"""

CONVERT_DESCRIPTION = """\
Convert a clip between formats, by the files' extensions: BVH to strider .npz
(an exact copy of the clip: root, per-joint rotations, frame rate), .npz to BVH,
and DeepMimic .txt to either. BVH is written Y up, in metres, with the clip's
joints and rest offsets. BVH has no loop flag, so a looping clip's BVH carries
it in its name (OUT walk.bvh is written as walk.loop.bvh, which strider reads
back as looping); the .npz keeps the flag itself.

examples:
  strider walk --seconds 6 --bvh walk.bvh && strider motion convert walk.bvh walk.npz
  strider motion convert humanoid3d_walk.txt walk.bvh
  strider motion convert walk.npz walk-again.bvh
{sources}"""


def add_commands(commands: argparse._SubParsersAction, formatter_class: type) -> None:
    play = commands.add_parser("play", help="play a mocap clip on a character, to video",
                               description=PLAY_DESCRIPTION.format(sources=CLIP_SOURCES),
                               formatter_class=formatter_class)
    play.add_argument("clip", metavar="CLIP", help="a .bvh, DeepMimic .txt or strider .npz clip")
    play.add_argument("--video", required=True, metavar="PATH.mp4", help="write the playback to this MP4")
    play.add_argument("--character", default=api.DEFAULT_CHARACTER, metavar="NAME|PATH",
                      help="shipped character or a character .yaml file (default: %(default)s)")
    play.add_argument("--scale", type=float, default=1.0, metavar="FACTOR",
                      help="uniform size factor for the character (default: %(default)g)")
    play.add_argument("--map", default=None, metavar="NAME|FILE.yaml",
                      help="joint map: cmu, deepmimic, strider or a YAML file (default: detected from the names)")
    play.add_argument("--show-source", action="store_true", help="draw the source skeleton beside the character")
    play.add_argument("--loop", type=int, default=1, metavar="N",
                      help="play a cyclic clip N times, root motion accumulated (default: %(default)s)")
    play.add_argument("--fps", type=float, default=api.DEFAULT_FPS, metavar="N",
                      help="video frames per second (default: %(default)g)")
    play.add_argument("--width", type=int, default=api.DEFAULT_WIDTH, metavar="PX", help="video width, pixels")
    play.add_argument("--height", type=int, default=api.DEFAULT_HEIGHT, metavar="PX", help="video height, pixels")

    motion = commands.add_parser("motion", help="inspect and convert motion clips",
                                 description=MOTION_DESCRIPTION.format(sources=CLIP_SOURCES),
                                 formatter_class=formatter_class)
    sub = motion.add_subparsers(dest="motion_action", metavar="SUBCOMMAND", required=True)
    info = sub.add_parser("info", help="frames, frame rate, joints, root height, up axis and unit guesses",
                          description=INFO_DESCRIPTION.format(sources=CLIP_SOURCES), formatter_class=formatter_class)
    info.add_argument("clip", metavar="CLIP", help="a .bvh, DeepMimic .txt or strider .npz clip")
    info.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    convert = sub.add_parser("convert", help="convert between BVH, strider .npz (and from DeepMimic)",
                             description=CONVERT_DESCRIPTION.format(sources=CLIP_SOURCES),
                             formatter_class=formatter_class)
    convert.add_argument("input", metavar="IN", help="a .bvh, DeepMimic .txt or strider .npz clip")
    convert.add_argument("output", metavar="OUT",
                         help="a .bvh or .npz file to write (a DeepMimic .txt cannot be written); the folder "
                              "must exist")


def run(args: argparse.Namespace) -> int:
    try:
        if args.action == "play":
            print(play(args))
        elif args.motion_action == "info":
            print(info(args.clip, args.json))
        else:
            print(convert(args.input, args.output))
    except ValueError as exc:  # an impossible operation on a well-formed clip (e.g. too short to loop)
        raise UsageError(str(exc)) from None
    return 0


def play(args: argparse.Namespace) -> str:
    from strider.characters import load_character
    from strider.motion.files import load_clip
    from strider.motion.joint_map import load_joint_map
    from strider.motion.playback import play as play_video
    from strider.motion.retarget import retarget
    from strider.sim.render import check_video_path

    if isinstance(args.loop, bool) or not 1 <= args.loop <= MAX_LOOPS:
        raise UsageError(f"--loop must be a whole number from 1 to {MAX_LOOPS}, got {args.loop}")
    if not (math.isfinite(args.fps) and 0 < args.fps <= api.MAX_FPS):
        raise UsageError(f"--fps must be a number of frames per second in (0, {api.MAX_FPS:g}], got {args.fps:g}")
    for name, size in (("--width", args.width), ("--height", args.height)):
        if size < api.MIN_VIDEO_SIZE or size % 2:
            raise UsageError(f"{name} must be an even number of pixels >= {api.MIN_VIDEO_SIZE}, got {size}")
    if not (math.isfinite(args.scale) and args.scale > 0):
        raise UsageError(f"--scale must be a positive number, got {args.scale:g}")
    check_video_path(args.video)
    spec = load_character(args.character, args.scale)
    joint_map = load_joint_map(args.map) if args.map else None
    clip = load_clip(args.clip)
    if args.loop > 1:
        if not clip.loop:
            raise UsageError(f"{args.clip} is not a cyclic clip, so --loop cannot repeat it")
        clip = clip.looped(args.loop)
    result = retarget(clip.at_fps(args.fps), spec, joint_map)
    shown = play_video(result, args.video, args.width, args.height, show_source=args.show_source)
    motion = result.motion
    planting = ", ".join(f"{side} {lift.min() * 100:+.1f} to {lift.max() * 100:+.1f} cm"
                         for side, lift in result.ankle_lift.items()) or "no legs in stance"
    return (f"played {Path(args.clip).name} on {spec.name}: {shown.frames} frames at {shown.fps:g} fps "
            f"({motion.duration:.2f} s) -> {shown.path}\n"
            f"joint map {result.joint_map} ({len(result.bodies)} of {len(spec.bodies)} bodies), "
            f"scale {result.scale:.3f} (leg length), foot-height correction "
            f"{result.foot_offset.min() * 100:+.1f} to {result.foot_offset.max() * 100:+.1f} cm, "
            f"foot planting (ankle lift) {planting}\n"
            f"{result.reference.summary()}")


def describe(clip, guess=None) -> dict:
    """The facts ``motion info`` reports, as JSON-ready values."""
    import numpy as np

    strider_clip = clip.to_strider()
    root_height = strider_clip.root_pos[:, 2]
    travel = strider_clip.root_pos[-1, :2] - strider_clip.root_pos[0, :2]
    return {
        "name": clip.name, "frames": clip.n_frames, "fps": clip.fps, "duration_s": clip.duration,
        "joints": [n for n, s in zip(clip.skeleton.names, clip.skeleton.sites) if not s],
        "end_sites": int(sum(clip.skeleton.sites)),
        "root_height_m": {"first": float(root_height[0]), "mean": float(root_height.mean())},
        "travel_m": float(np.linalg.norm(travel)),
        "up": clip.axes.up, "forward": clip.axes.forward, "unit_m": clip.axes.unit,
        "axes_guessed": guess is not None, "axes_confident": bool(guess.confident) if guess else True,
        "unit_name": guess.unit_name if guess else None,
        "loop": bool(clip.loop), "looks_cyclic": clip.looks_cyclic(),
    }


def info(path: str, as_json: bool = False) -> str:
    from strider.motion.anatomy import guess_axes
    from strider.motion.files import load_clip

    clip = load_clip(path)
    guess = guess_axes(clip.skeleton) if Path(path).suffix.lower() == ".bvh" else None
    facts = describe(clip, guess)
    if as_json:
        return json.dumps(facts, indent=2)
    names = facts["joints"]
    shown = ", ".join(names[:MAX_NAMES_SHOWN]) + (", ..." if len(names) > MAX_NAMES_SHOWN else "")
    how = "" if guess is None else (" (guessed from the legs)" if guess.confident else " (a guess: no legs found)")
    unit = f"{clip.axes.unit:g} m per unit" + (f" ({guess.unit_name})" if guess else "")
    return "\n".join([
        f"{path}",
        f"frames: {clip.n_frames} at {clip.fps:g} fps ({clip.duration:.3f} s)",
        f"joints: {len(names)} (+{facts['end_sites']} end sites): {shown}",
        (f"root height: {facts['root_height_m']['first']:.3f} m at the start, {facts['root_height_m']['mean']:.3f} m "
         f"on average; root travel {facts['travel_m']:.2f} m"),
        f"axes: up {clip.axes.up}, forward {clip.axes.forward}{how}; unit: {unit}",
        (f"loops: {'yes' if clip.loop else 'no'} (first and last poses "
         f"{'match' if facts['looks_cyclic'] else 'differ'})"),
    ])


def convert(source: str, target: str) -> str:
    from strider.motion.files import WRITE_SUFFIXES, load_clip, save_clip
    from strider.outputs import check_writable

    if Path(target).suffix.lower() not in WRITE_SUFFIXES:
        raise UsageError(f"cannot write {target!r}: clips are written as {' or '.join(WRITE_SUFFIXES)}")
    check_writable(target)
    clip = load_clip(source)
    out = save_clip(clip, target)
    renamed = (f" (the clip loops and BVH has no loop flag, so the name carries it; strider reads {out.name} back "
               f"as looping)") if out != Path(target) else ""
    return f"wrote {out}: {clip.n_frames} frames at {clip.fps:g} fps, {len(clip.skeleton)} joints{renamed}"
