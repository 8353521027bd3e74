"""``strider graph``: control fragments with learned linear feedback (Liu et al. 2015): learn a skill from a
DeepMimic clip by guided SAMCON and regression, and play a learned skill."""

from __future__ import annotations

import argparse
import math
import sys
from contextlib import contextmanager
from pathlib import Path

from strider.cli import report as report_text
from strider.cli.parallel_flags import DEFAULT_WORKERS, add_parallel_flags
from strider.progress import move_to, progress_bar

SECONDS_BAR = "{l_bar}{bar}| {n:.1f}/{total:.1f} s"   # a bar over simulated seconds

ACTIONS = ("graph",)
MAX_PLAY_SECONDS = 3600.0
MAX_GROUP = 16
SEARCH_PARTICLES = 200   # graph run's searches: every bench get-up stood with 200 (graph-recovery)
GROUP_RADIUS = 1.5   # m: close enough that walkers keeping their line meet near the centre

DESCRIPTION = """\
Control fragments (Liu, van de Panne and Yin 2015): a motion-capture cycle is
cut into 0.1 s fragments of open-loop PD targets, and each fragment gets a
linear feedback policy that offsets the waist, hip and knee targets from the
character's 18-D state at the fragment's start. 'learn' finds the policies by
guided SAMCON and regression; 'play' runs a learned skill on the DeepMimic
humanoid, and with --recover gets it up again after a fall; 'run' walks a
control graph of skills (YAML: nodes are skills, edges the transitions, with
falls leading to get-ups); 'steer' walks a cyclic skill to waypoints by
search. Skills ship with strider, so 'play', 'run' and 'steer' work at once:
walk (learned feedback), run, turn (the walk turned 90 degrees a cycle), kick,
cartwheel, getup_faceup and getup_facedown (refined open loops so far); and
two graphs, default (the walk and the get-ups) and full (all of them).

examples:
  strider graph play walk --recover --search-getup --video rise.mp4
  strider graph play walk --seconds 5 --video walk.mp4
  strider graph steer walk --to 0,4 --to 4,4 --video steer.mp4
  strider graph run default --seconds 60 --video graph.mp4
  strider graph learn run --workers 2
  strider graph learn walk --ray --out skills/
"""

LEARN_DESCRIPTION = """\
Learn a DeepMimic clip (walk, run, jog, getup_faceup, kick, ...) into a skill
file (Liu et al. 2015, Alg. 2): refine the open-loop targets by SAMCON over all
joints, then alternate guided SAMCON over a walk of --cycles cycles with the
regression of each fragment's policy, until the policies keep the character up
for --survive seconds or --iterations are done. The skill file in --out is
rewritten after every iteration and is the checkpoint: run the same command
again to resume. The result is the same for any --workers and --backend.

A clip that does not loop (getup_faceup, getup_facedown, kick) plays once, its
last frame held 1 s more: refinement takes one pass (its open loop then repeats
that pass from the start state), and each of the --cycles of an EM walk is a
pass from the start state. Lying on the ground is no fall where the clip lies.

The clip's seam is closed (its last frame made its first pose), refinement also
replaces each fragment's reference end by the mean of its simulated ends (Alg.
2, line 4), and with phase reset (on unless --no-phase-reset) the cycle starts
at a foot strike, each stride ends at the other foot's, and those fragments end
when the simulated foot comes down, early or late (up to 0.05 s).

The clip is a name of the shared DeepMimic clips (humanoid3d_NAME.txt in the
motion-capture folder, $STRIDER_MOCAP) or a path to such a file.

examples:
  strider graph learn run --workers 2
  strider graph learn walk --iterations 10 --cycles 50 --out skills/
  strider graph learn run --ray --workers 2        on Ray (--ray is short for --backend ray)
  strider graph learn getup_faceup --iterations 0 --out skills/
"""

PLAY_DESCRIPTION = """\
Play a learned skill from its start state: at every fragment the policy reads
the state and offsets the targets. Stops at --seconds, at the end of a skill
that plays once (a get-up), or at a fall (a body on the ground that the clip
keeps off it, or the root 0.3 m off the reference's height). Exit status 1 if
the character fell.

With --group N, N characters play the skill in one scene, starting on a
circle facing its centre (the source's characters charging each other). A
character that falls lies still; once every one is down the scene starts
over, until --seconds have passed. Exit status 1 if any fell.

With --recover, a fall does not end the run: the servos track the first pose
of the get-up that fits how the character lies (face up or face down) until it
is near it and slow (or 2 s), then the get-up plays and ends in a 1 s stand;
a get-up that does not end standing tries again, for up to 10 s after the fall.
The shipped get-ups replay their learned open loop, which stands up only from
their own start state; --search-getup searches a get-up by SAMCON from the
state the fall left (strider's, not real time). Exit status 1 unless it stood.

examples:
  strider graph play walk --seconds 5 --video walk.mp4
  strider graph play skills/walk.skill.npz --seconds 600 --json
  strider graph play walk --group 4 --seconds 20 --video group.mp4
  strider graph play getup_faceup --video getup.mp4
  strider graph play walk --recover --search-getup --video fall-and-rise.mp4
"""


RUN_DESCRIPTION = """\
Walk a control graph: the character plays one node's learned skill at a time,
and when a visit ends (its cycles played, or a get-up's one pass) a seeded
random walk takes one of the node's 'end' edges. A fall takes the node's
'fall' edges: the servos track the first pose of the get-up that fits how the
character lies, the get-up plays and ends in a 1 s stand, and the walk goes on
from the get-up. A fall no edge catches, or a get-up that does not stand
within 10 s, starts the graph over from its start node.

GRAPH is a shipped graph's name (default, full) or a YAML file:

  name: mine
  start: walk
  nodes:
    walk: {skill: walk, cycles: [2, 4]}    # shipped skill, or a .skill.npz path
    getup_faceup: {skill: getup_faceup}
  edges:
    - {from: walk, to: walk}               # trigger: end (the default)
    - {from: "*", to: getup_faceup, trigger: fall}
    - {from: getup_faceup, to: walk}

A transition starts the next skill at its first fragment from wherever the
character is: skills learned one at a time meet only as well as one's end
resembles the next one's start (the source learns its transitions too).

--search (strider's, not real time) plays no learned policy: the random walk
is drawn ahead (up to about 30 s at a time) and searched by SAMCON as one walk
through all the graph's fragments (--particles samples per fragment, every
servo sampled), so the search can roll back across a transition; the path
found plays out, and get-ups are searched too. A search that gives up counts
as a fall. --search-getup searches the get-ups alone.

Prints the falls, the get-ups that stood, the restarts and the time in each
node; --json also lists every visit. Exit status 1 if it fell.

examples:
  strider graph run --seconds 60 --video graph.mp4
  strider graph run examples/graph.yaml --seconds 600 --video graph.mp4   a graph to edit
  strider graph run my-graph.yaml --seconds 600 --seed 3 --json
  strider graph run default --search-getup --seconds 30 --video rise.mp4
  strider graph run full --search --seconds 20 --video searched.mp4
"""

STEER_DESCRIPTION = """\
Walk a cyclic skill (the walk) to waypoints (strider's; not real time): the
reference cycle is turned at a few steady rates each side of straight (up to
--max-turn degrees a cycle), a planner picks a rate for every fragment
of the next --stretch fragments (about 1 s) so that the heading comes round to
the next waypoint, and SAMCON searches that stretch and one more from where
the character is (--particles samples per fragment, every servo sampled, each
fragment scored in a frame turned to the planned heading); the stretch plays,
and the next is planned from where it ended. A waypoint within --reach of the
root is reached; after the last the walk goes on straight. A search that
gives up leaves the character to fall there; it then gets up, by a get-up
searched from where it lies (about 7 s of simulated time), and the steering
goes on from the stand. --no-recover ends the run at the fall instead. About
5 s of wall time per simulated second on 2 workers.

Waypoints are X,Y in metres from where the skill starts: x straight ahead, y
to the left. The source steers its learned walk by the actions its policies
take under gentle sideways pushes; the shipped walk falls within 1.4 s of such
a push, so strider searches instead (docs/graphs.md, "Steering").

Prints the time each waypoint was reached; --json adds the track (time, x, y,
heading at every fragment's end) and the times of the falls and the stands.
Exit status 1 unless every waypoint was reached without a fall.

examples:
  strider graph steer walk --to 0,4 --video left.mp4            a quarter turn left
  strider graph steer walk --to 4,4 --to 8,0 --seconds 20 --json
  strider graph steer --to 0,-4 --seconds 10 --video right.mp4
"""


def add_commands(commands, formatter) -> None:
    p = commands.add_parser("graph", help="control fragments with learned feedback: learn and play skills",
                            description=DESCRIPTION, formatter_class=formatter)
    sub = p.add_subparsers(dest="graph_action", metavar="ACTION", required=True)
    learn = sub.add_parser("learn", help="learn a skill from a cyclic DeepMimic clip",
                           description=LEARN_DESCRIPTION, formatter_class=formatter)
    learn.add_argument("clip", metavar="CLIP", help="a DeepMimic clip name (run, walk, jog, ...) or file")
    add_parallel_flags(learn, "samples")
    learn.add_argument("--out", default=".", metavar="DIR", help="folder for NAME.skill.npz (default: .)")
    learn.add_argument("--iterations", type=int, default=None, metavar="N", help="EM iterations at most (default 20)")
    learn.add_argument("--cycles", type=int, default=None, metavar="N",
                       help="cycles per EM walk, or passes of a clip that plays once (default: enough for the "
                            "source's 200 tuples per policy, 100 with mirroring)")
    learn.add_argument("--particles", type=int, default=None, metavar="N", help="SAMCON particles (default 200)")
    learn.add_argument("--pool", type=int, default=None, metavar="N",
                       help="regress each policy on the tuples of the N latest paths (default 1, the source's; more "
                            "gives the source's 200 tuples per policy with shorter walks)")
    learn.add_argument("--survive", type=float, default=None, metavar="S",
                       help="stop once the policies keep the character up this long (default 600)")
    learn.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="settings",
                       help="any named learning setting (LearnParams; docs/graphs.md lists them), e.g. "
                            "--set close_loop=false --set sigma0=0.0873; repeatable")
    learn.add_argument("--no-phase-reset", dest="phase_reset", action="store_false",
                       help="no fragment ends at a foot strike (the source resets walks and runs only; a clip whose "
                            "feet do not come down once each per cycle needs this)")
    learn.add_argument("--seed", type=int, default=0, metavar="N", help="the search's seed (default: %(default)s)")
    learn.add_argument("--json", action="store_true", help="print the result as JSON")
    play = sub.add_parser("play", help="play a learned skill", description=PLAY_DESCRIPTION,
                          formatter_class=formatter)
    from strider.methods.graphs.skills import shipped_skills

    play.add_argument("skill", metavar="SKILL", help=f"a shipped skill ({', '.join(shipped_skills())}) or a "
                                                     ".skill.npz file")
    play.add_argument("--seconds", type=float, default=20.0, metavar="S", help="simulated time (default: %(default)s)")
    play.add_argument("--video", default=None, metavar="PATH.mp4", help="write an MP4; the folder must exist")
    play.add_argument("--group", type=int, default=1, metavar="N",
                      help="N characters in one scene, on a circle facing its centre, each playing the skill; "
                           "the scene starts over once all are down (default: %(default)s)")
    play.add_argument("--radius", type=float, default=GROUP_RADIUS, metavar="M",
                      help="the --group circle's radius (default: %(default)s m)")
    play.add_argument("--no-phase-reset", dest="phase_reset", action="store_false",
                      help="play every fragment its full length, even in a skill learned with phase reset (a "
                           "fragment that ends in a foot strike otherwise ends when the foot comes down)")
    play.add_argument("--recover", action="store_true",
                      help="after a fall, ragdoll and get up (the shipped getup_faceup / getup_facedown), up to 10 s")
    play.add_argument("--search-getup", action="store_true",
                      help="with --recover: search each get-up by SAMCON from where the character lies "
                           "(strider's; not real time: about 20 s of wall time for a 5 s get-up on 2 workers)")
    play.add_argument("--workers", type=int, default=DEFAULT_WORKERS, metavar="N",
                      help="processes for --search-getup (default: %(default)s)")
    play.add_argument("--json", action="store_true", help="print the result as JSON")
    steer = sub.add_parser("steer", help="walk a cyclic skill to waypoints (searched)", description=STEER_DESCRIPTION,
                           formatter_class=formatter)
    steer.add_argument("skill", metavar="SKILL", nargs="?", default="walk",
                       help="a shipped cyclic skill or a .skill.npz file (default: %(default)s; the run's "
                            "searches give up within 4 s so far)")
    steer.add_argument("--to", action="append", required=True, metavar="X,Y", dest="waypoints",
                       help="a waypoint in metres from the start (x ahead, y left); repeat for more, in order")
    steer.add_argument("--seconds", type=float, default=20.0, metavar="S",
                       help="simulated time (default: %(default)s)")
    # defaults are SteerParams' (filled in when it runs, so that --help need not load the simulator)
    steer.add_argument("--max-turn", type=float, default=None, metavar="DEG",
                       help="the sharpest turn, degrees per cycle (default: 90)")
    steer.add_argument("--reach", type=float, default=None, metavar="M",
                       help="a waypoint this near is reached (default: 0.5 m)")
    steer.add_argument("--stretch", type=int, default=None, metavar="N",
                       help="fragments planned and searched at a time (default: 10)")
    steer.add_argument("--particles", type=int, default=SEARCH_PARTICLES, metavar="N",
                       help="SAMCON samples per fragment (default: %(default)s)")
    steer.add_argument("--seed", type=int, default=0, metavar="N", help="the searches' seed (default: %(default)s)")
    steer.add_argument("--no-recover", dest="recover", action="store_false",
                       help="end the run at the first fall instead of getting up and steering on")
    steer.add_argument("--workers", type=int, default=DEFAULT_WORKERS, metavar="N",
                       help="processes for the searches (default: %(default)s)")
    steer.add_argument("--video", default=None, metavar="PATH.mp4", help="write an MP4; the folder must exist")
    steer.add_argument("--json", action="store_true", help="print the result, the track too, as JSON")
    run_parser = sub.add_parser("run", help="walk a control graph of skills, falls and get-ups",
                                 description=RUN_DESCRIPTION, formatter_class=formatter)
    run_parser.add_argument("graph", metavar="GRAPH", nargs="?", default="default",
                            help="a shipped graph's name or a graph YAML file (default: %(default)s)")
    run_parser.add_argument("--seconds", type=float, default=60.0, metavar="S",
                            help="simulated time (default: %(default)s; a get-up under way at the end finishes)")
    run_parser.add_argument("--seed", type=int, default=0, metavar="N",
                            help="the random walk's seed (default: %(default)s)")
    run_parser.add_argument("--video", default=None, metavar="PATH.mp4", help="write an MP4; the folder must exist")
    run_parser.add_argument("--search", action="store_true",
                            help="search the random walk and the get-ups by SAMCON instead of playing the policies "
                                 "(strider's; not real time: about 4 s of wall time per simulated second on 2 workers)")
    run_parser.add_argument("--search-getup", action="store_true",
                            help="search the get-ups alone (about 15 s of wall time per get-up on 2 workers)")
    run_parser.add_argument("--particles", type=int, default=SEARCH_PARTICLES, metavar="N",
                            help="SAMCON samples per fragment of a search (default: %(default)s)")
    run_parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS, metavar="N",
                            help="processes for --search and --search-getup (default: %(default)s)")
    run_parser.add_argument("--no-phase-reset", dest="phase_reset", action="store_false",
                            help="play every fragment its full length (see 'graph play --help')")
    run_parser.add_argument("--json", action="store_true", help="print the result, every visit too, as JSON")


def run(args: argparse.Namespace) -> int:
    return {"learn": _learn, "play": _play, "run": _run_graph, "steer": _steer}[args.graph_action](args)


def _learn(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from strider.errors import UsageError
    from strider.methods.graphs.learning import LearnParams, learn, learned_clip
    from strider.methods.graphs.reference import TIMESTEP
    from strider.methods.graphs.skills import clip_path, skill_file_name
    from strider.motion.files import load_clip
    from strider.outputs import check_output_folder
    from strider.parallel.executor import check_workers

    check_workers(args.workers)
    params = LearnParams(seed=args.seed, phase_reset=args.phase_reset)
    for flag, name in (("iterations", "iterations"), ("cycles", "cycles"), ("particles", "particles"),
                       ("pool", "pooled_paths"), ("survive", "survive_seconds")):
        value = getattr(args, flag)
        if value is not None:
            if not (isinstance(value, int) or math.isfinite(value)):
                raise UsageError(f"--{flag} must be a finite number, got {value}")
            params = replace(params, **{name: value})
    params = replace(params, **dict(_setting(text) for text in args.settings))
    clip = load_clip(clip_path(args.clip))
    out = check_output_folder(args.out) / skill_file_name(learned_clip(clip, params).name)
    bar = progress_bar(None, f"learning {clip.name}", unit="fragment", enabled=not args.json)

    def say(text: str) -> None:
        if not args.json:
            bar.write(text, file=sys.stderr)

    skill = learn(clip, out, params, backend=args.backend, workers=args.workers, report=say,
                  stage_progress=lambda done, total: move_to(bar, done, total))
    bar.close()
    last = skill.curve[-1]
    played, best = skill.playing_iteration, skill.playing_record
    report = {"skill": skill.name, "skill_file": str(out), "iterations": skill.iteration,
              "survived_seconds": best["survived_seconds"], "played_iteration": played,
              "wall_seconds": last["wall_seconds"], "curve": list(skill.curve)}
    return report_text.emit(report, args.json,
                            f"Learned {skill.name}: after {skill.iteration} iteration(s) the policies of iteration "
                            f"{played} keep the character up longest, {best['survived_seconds']:.1f} s (target "
                            + (f"{params.survive_seconds:g} s" if skill.reference.cyclic else
                               f"the whole pass, {skill.reference.steps * TIMESTEP:.1f} s")
                            + f"); {last['wall_seconds'] / 60:.1f} min of learning. "
                            f"Wrote {out}.")


def _setting(text: str) -> tuple[str, object]:
    """One ``--set NAME=VALUE`` as a LearnParams field and its value, or a usage error naming what is wrong."""
    from dataclasses import fields

    from strider.errors import UsageError
    from strider.methods.graphs.learning import LearnParams

    kinds = {f.name: f.type for f in fields(LearnParams)}
    name, _, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if name not in kinds or not value:
        raise UsageError(f"--set {text!r}: expected NAME=VALUE with NAME one of {', '.join(kinds)}")
    kind = kinds[name]
    if "bool" in kind:
        words = {"true": True, "on": True, "1": True, "false": False, "off": False, "0": False}
        if value.lower() not in words:
            raise UsageError(f"--set {name}: expected true or false, got {value!r}")
        return name, words[value.lower()]
    if "None" in kind and value.lower() == "none":
        return name, None
    if kind in ("str", "str | None"):
        return name, value   # LearnParams checks the word
    try:
        number = int(value) if "int" in kind else float(value)
    except ValueError:
        raise UsageError(f"--set {name}: expected {'a whole number' if 'int' in kind else 'a number'}, "
                         f"got {value!r}") from None
    if not math.isfinite(number):
        raise UsageError(f"--set {name}: expected a finite number, got {value!r}")
    return name, number


def _play(args: argparse.Namespace) -> int:
    from strider.errors import UsageError
    from strider.methods.graphs.player import SkillPlayer
    from strider.methods.graphs.skills import load_named_skill
    from strider.sim.render import check_video_path

    if not (math.isfinite(args.seconds) and 0 < args.seconds <= MAX_PLAY_SECONDS):
        raise UsageError(f"--seconds must be > 0 and at most {MAX_PLAY_SECONDS:g}, got {args.seconds}")
    if not 1 <= args.group <= MAX_GROUP:
        raise UsageError(f"--group must be 1 to {MAX_GROUP} characters, got {args.group}")
    if not (math.isfinite(args.radius) and args.radius > 0):
        raise UsageError(f"--radius must be a positive number of metres, got {args.radius}")
    if args.video is not None:
        check_video_path(args.video)
    if args.search_getup and not args.recover:
        raise UsageError("--search-getup searches the get-up of --recover; give --recover too")
    from strider.parallel.executor import check_workers

    check_workers(args.workers)   # even where --search-getup is not given: a bad value is a mistake either way
    skill = load_named_skill(args.skill)
    if args.recover and (args.group > 1 or not skill.reference.cyclic):
        raise UsageError("--recover gets one character up after a cyclic skill falls (not with --group, not "
                         f"after {skill.name}, which plays once)")
    if args.group > 1:
        return _play_group(args, skill)
    player = SkillPlayer(skill, phase_reset=args.phase_reset)
    recovered = None
    with _recording(player.runner, args.video):
        result = player.run(args.seconds)
        if result.fell and args.recover:
            recovered = _recover(player, args)
    if recovered is not None:
        report = {"skill": skill.name, "fell_at": result.seconds, "stood": recovered.stood,
                  "seconds_to_stand": recovered.seconds, "getups": list(recovered.getups), "video": args.video}
        text = (f"{skill.name}: fell after {result.seconds:.1f} s; "
                + (f"stood up {recovered.seconds:.1f} s later ({recovered.getups[-1]}, attempt {recovered.attempts})"
                   if recovered.stood else f"not standing {recovered.seconds:.1f} s later, after "
                                           f"{recovered.attempts} get-up(s)"))
        return report_text.emit(report, args.json, text + (f". Video written to {args.video}." if args.video else "."),
                                0 if recovered.stood else 1)
    report = {"skill": skill.name, "seconds": result.seconds, "fell": result.fell, "fragments": result.fragments,
              "video": args.video}
    text = (f"{skill.name}: fell after {result.seconds:.1f} s" if result.fell
            else f"{skill.name}: played once through, {result.seconds:.1f} s, without a fall" if player.finished
            else f"{skill.name}: {args.seconds:g} s without a fall")
    return report_text.emit(report, args.json, text + (f". Video written to {args.video}." if args.video else "."),
                            1 if result.fell else 0)


def _run_graph(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from strider.errors import UsageError
    from strider.methods.graphs.graph_runner import GraphRunner, GraphRunParams
    from strider.methods.graphs.recovery import RecoveryParams
    from strider.parallel.executor import check_workers
    from strider.sim.render import check_video_path

    if not (math.isfinite(args.seconds) and 0 < args.seconds <= MAX_PLAY_SECONDS):
        raise UsageError(f"--seconds must be > 0 and at most {MAX_PLAY_SECONDS:g}, got {args.seconds}")
    if args.video is not None:
        check_video_path(args.video)
    check_workers(args.workers)
    runner = GraphRunner.from_file(args.graph, GraphRunParams(seed=args.seed, search=args.search,
                                                              recovery=RecoveryParams(search=args.search_getup,
                                                                                      search_particles=args.particles),
                                                              phase_reset=args.phase_reset), args.workers)
    graph = runner.graph
    bar = progress_bar(round(args.seconds, 3), f"graph {graph.name}", unit="s", enabled=not args.json,
                       bar_format=SECONDS_BAR)
    runner.on_visit = lambda visit: bar.update(min(visit.end, args.seconds) - bar.n)
    with _recording(runner, args.video):
        result = runner.run(args.seconds)
    bar.close()
    seconds_in = {node: round(result.seconds_in(node), 3) for node in graph.nodes}
    report = {"graph": graph.name, "seed": args.seed, "seconds": result.seconds, "falls": result.falls,
              "stood": result.stood, "restarts": result.restarts, "transitions": result.transitions,
              "seconds_in": seconds_in, "fall_times": list(result.fall_times),
              "visits": [asdict(v) for v in result.visits], "video": args.video}
    time_in = ", ".join(f"{node} {t:.1f} s" for node, t in seconds_in.items() if t > 0)
    text = (f"graph {graph.name}, seed {args.seed}: {result.seconds:.1f} s, {result.transitions} transitions, "
            f"{result.falls} falls ({result.stood} stood up, {result.restarts} restarts); time in {time_in}")
    return report_text.emit(report, args.json, text + (f". Video written to {args.video}." if args.video else "."),
                            1 if result.falls else 0)


def _waypoint(text: str) -> tuple[float, float]:
    from strider.errors import UsageError

    parts = text.split(",")
    try:
        x, y = (float(p) for p in parts)
    except ValueError:
        raise UsageError(f"--to {text!r}: expected X,Y in metres, e.g. --to 0,4") from None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise UsageError(f"--to {text!r}: the waypoint must be finite")
    return x, y


def _steer(args: argparse.Namespace) -> int:
    from strider.errors import UsageError
    from strider.methods.graphs.search import SearchParams
    from strider.methods.graphs.skills import load_named_skill
    from strider.methods.graphs.steering import Steering, SteerParams, falls_text
    from strider.parallel.executor import check_workers
    from strider.sim.render import check_video_path

    if not (math.isfinite(args.seconds) and 0 < args.seconds <= MAX_PLAY_SECONDS):
        raise UsageError(f"--seconds must be > 0 and at most {MAX_PLAY_SECONDS:g}, got {args.seconds}")
    waypoints = [_waypoint(text) for text in args.waypoints]
    if args.video is not None:
        check_video_path(args.video)
    check_workers(args.workers)
    given = {name: getattr(args, name) for name in ("max_turn", "reach", "stretch") if getattr(args, name) is not None}
    params = SteerParams(seed=args.seed, search=SearchParams(particles=args.particles), recover=args.recover, **given)
    skill = load_named_skill(args.skill)
    steering = Steering(skill, params, backend="processes" if args.workers > 1 else "serial", workers=args.workers)
    bar = progress_bar(round(args.seconds, 3), f"steering {skill.name}", unit="s", enabled=not args.json,
                       bar_format=SECONDS_BAR)
    steering.on_stretch = lambda seconds: bar.update(min(seconds, args.seconds) - bar.n)
    with _recording(steering, args.video):
        result = steering.run(waypoints, args.seconds)
    bar.close()
    report = {"skill": skill.name, "waypoints": [list(w) for w in waypoints], "seconds": result.seconds,
              "reached_at": list(result.reached), "falls_at": list(result.falls), "stood_at": list(result.stood),
              "gave_up": result.gave_up, "distance": result.distance,
              "searches": result.searches, "track": result.track.round(4).tolist(),
              "turns": result.turns.tolist(), "video": args.video}
    reached = ", ".join(f"({x:g}, {y:g}) at {t:.1f} s" for (x, y), t in zip(waypoints, result.reached))
    text = (f"{skill.name} steered {result.seconds:.1f} s: {len(result.reached)} of {len(waypoints)} waypoints "
            f"reached" + (f" ({reached})" if reached else "")
            + (f"; {result.distance:.2f} m from the next" if not result.all_reached else "")
            + falls_text(result.falls, result.stood) + ("; the run ended at the last" if result.gave_up else ""))
    return report_text.emit(report, args.json, text + (f". Video written to {args.video}." if args.video else "."),
                            0 if result.all_reached and not result.falls else 1)


def _recover(player, args: argparse.Namespace):
    from strider.methods.graphs.recovery import GETUPS, Recovery, RecoveryParams
    from strider.methods.graphs.skills import load_named_skill

    recovery = Recovery([load_named_skill(name) for name in GETUPS], player.world,
                        RecoveryParams(search=args.search_getup),
                        backend="processes" if args.workers > 1 else "serial", workers=args.workers)
    recovery.on_step = player.runner.on_step
    return recovery.recover()


def _play_group(args: argparse.Namespace, skill) -> int:
    from strider.methods.graphs.group import GroupPlayer

    group = GroupPlayer([skill] * args.group, radius=args.radius, phase_reset=args.phase_reset)
    with _recording(group, args.video):
        result = group.run(args.seconds)
    report = {"skill": skill.name, "characters": args.group, "seconds": result.seconds, "falls": result.falls,
              "restarts": result.restarts, "fragments": result.fragments, "video": args.video}
    text = (f"{args.group} x {skill.name} for {result.seconds:g} s: {result.falls} falls, the scene started over "
            f"{result.restarts} times")
    return report_text.emit(report, args.json, text + (f". Video written to {args.video}." if args.video else "."),
                            1 if result.falls else 0)


@contextmanager
def _recording(stepper, video: str | None):
    """While open, every frame's worth of ``stepper``'s physics steps (its ``on_step`` hook) goes to the MP4
    ``video``; without a video, nothing."""
    from strider.api import DEFAULT_FPS
    from strider.sim.render import VideoRecorder

    if video is None:
        yield
        return
    world = stepper.world
    every = max(1, round(1.0 / (DEFAULT_FPS * world.timestep)))   # physics steps per frame
    recorder = VideoRecorder(world, Path(video), DEFAULT_FPS)

    def frame(world) -> None:
        if round(world.time / world.timestep) % every == 0:
            recorder(world, world.time)

    stepper.on_step = frame
    try:
        yield
    finally:
        recorder.close()
