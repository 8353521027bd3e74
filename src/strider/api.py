"""The Python API behind ``strider walk`` and ``strider stand``: one function call per run.

Both build the same thing, the GBWC walking controller (Coros 2010, Ch. 5)
driving one character in a scene, run by the shared
:class:`~strider.runner.Runner`; they differ only in the starting command. The
CLI is a thin layer over :func:`walk` and :func:`stand`, so a run typed at the
shell and a run called from Python are the same run.

Every argument is checked before anything is built or simulated, and every
problem is a :class:`~strider.errors.StriderError` with one clear message.
MuJoCo and the controller are imported inside the functions, so that
``import strider`` stays fast.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strider.errors import UsageError, require_finite

if TYPE_CHECKING:
    from strider.characters.spec import CharacterSpec
    from strider.control.controller import LocomotionCommand
    from strider.runner.perturbation import Push
    from strider.runner.scenario import CommandChange, Result
    from strider.runner.throws import Throw
    from strider.sim.scene import Terrain

# Defaults shared by the API and the CLI flags. Period and step width are LocomotionCommand's own defaults.
DEFAULT_SECONDS = 10.0        # s of simulated time
DEFAULT_WALK_SPEED = 1.0      # m/s
DEFAULT_PERIOD = 0.5          # s per step
DEFAULT_STEP_WIDTH = 0.1      # m between the feet's centre lines
DEFAULT_STYLE = None          # the controller's own default style
DEFAULT_CONTROLLER = "gbwc"
DEFAULT_CHARACTER = "bipv3"   # the reference humanoid, specs/character-bipv3.md
DEFAULT_TERRAIN = "flat"
DEFAULT_FPS = 30.0            # video frames per simulated second
DEFAULT_WIDTH = 640           # video pixels
DEFAULT_HEIGHT = 360
MAX_FPS = 240.0               # beyond this a video is a slow-motion study, not a record of a run
MIN_VIDEO_SIZE = 16           # pixels; smaller frames show nothing
PROGRESS_RATE = 10.0          # progress-bar updates per simulated second when nothing else needs frames

ACTIONS = ("walk", "stand")

FrameSink = Callable[[Any, float], None]


@dataclass(frozen=True)
class RunRequest:
    """One walk or stand run as asked for, in plain values; :func:`run` checks and builds it."""

    action: str = "walk"
    controller: str | None = "gbwc"   # None: the action's default (see methods.registry.default_controller)
    seconds: float = DEFAULT_SECONDS
    speed: float = DEFAULT_WALK_SPEED
    period: float = DEFAULT_PERIOD
    turn_rate: float = 0.0
    heading_deg: float = 0.0
    step_width: float = DEFAULT_STEP_WIDTH
    style: str | None = DEFAULT_STYLE
    character: str = DEFAULT_CHARACTER
    scale: float = 1.0
    pushes: tuple = ()
    terrain: Any = DEFAULT_TERRAIN
    seed: int = 0
    timestep: float | None = None
    script: Any = None
    video: str | Path | None = None
    fps: float = DEFAULT_FPS
    width: int = DEFAULT_WIDTH
    height: int = DEFAULT_HEIGHT
    viewer: bool = False
    progress: bool = False
    bvh: str | Path | None = None
    actuation: str | None = None   # None: the character file's mode (see strider.characters.ACTUATION_MODES)
    config: str = "default"        # the controller's named configuration (GBWC: default, thesis, without:...)
    throws: tuple = ()             # balls thrown at the character (strider.runner.throws.Throw)


def walk(seconds: float = DEFAULT_SECONDS, speed: float = DEFAULT_WALK_SPEED, period: float = DEFAULT_PERIOD,
         turn_rate: float = 0.0, heading_deg: float = 0.0, step_width: float = DEFAULT_STEP_WIDTH,
         style: str | None = DEFAULT_STYLE, character: str = DEFAULT_CHARACTER, scale: float = 1.0,
         pushes: Iterable[Push | str] = (), terrain: Terrain | str = DEFAULT_TERRAIN, seed: int = 0,
         video: str | Path | None = None, timestep: float | None = None, *,
         script: str | Path | Sequence[CommandChange] | None = None, fps: float = DEFAULT_FPS,
         width: int = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT, viewer: bool = False,
         progress: bool = False, controller: str = DEFAULT_CONTROLLER, bvh: str | Path | None = None,
         actuation: str | None = None, config: str = "default", throws: Iterable[Throw] = ()) -> Result:
    """Walk the character for ``seconds`` of simulated time and return the measured :class:`Result`.

    ``speed`` is m/s along the facing direction (negative walks backwards);
    ``period`` is s per step; ``turn_rate`` rad/s turns continuously;
    ``heading_deg`` is the target facing direction in degrees (0 = +x);
    ``step_width`` is m between the feet. ``style`` and ``character`` are
    shipped names or YAML paths; ``scale`` resizes the character uniformly.
    ``pushes`` are :class:`~strider.runner.Push` objects or ``"F@T[:DIR_DEG[:DURATION]][@head]"``
    strings; ``terrain`` is a :class:`~strider.sim.Terrain`, a :class:`~strider.courses.Course`, or ``"flat"`` / ``"slope:DEG"`` / ``"course:NAME"``.
    ``script`` is a plan file (see :mod:`strider.runner.script`) or command changes.
    ``video`` writes an MP4 at ``fps`` and ``width`` x ``height``; ``viewer``
    opens MuJoCo's viewer; ``progress`` shows a progress bar on stderr.
    ``timestep`` is the physics step in s (None: the scene default, 1 ms).
    ``seed`` is recorded in the result; the simulation itself is deterministic.
    ``bvh`` writes the simulated motion as BVH at ``fps`` frames per second.
    ``controller`` names the locomotion controller (see :mod:`strider.methods.registry`);
    ``style`` None takes that controller's default style.
    ``actuation`` drives the joints by ``position`` servos, ``spd`` (stable PD) or ``torque`` motors (None: the
    character file's mode); the walking controllers take position or spd.
    ``config`` names the controller's configuration: for GBWC ``default`` (strider's best), ``thesis`` (Coros 2010
    Ch. 5 alone, every addition off) or ``without:ADDITION[,...]`` (see ``strider.methods.gbwc.params.ADDITIONS``).
    ``throws`` launch balls at the character (:class:`~strider.runner.throws.Throw`); the result says which hit.
    """
    return run(RunRequest("walk", controller, seconds, speed, period, turn_rate, heading_deg, step_width, style,
                          character, scale, tuple(pushes), terrain, seed, timestep, script, video, fps, width,
                          height, viewer, progress, bvh, actuation, config, tuple(throws)))


def stand(seconds: float = DEFAULT_SECONDS, period: float = DEFAULT_PERIOD, turn_rate: float = 0.0,
          heading_deg: float = 0.0, step_width: float = DEFAULT_STEP_WIDTH, style: str | None = DEFAULT_STYLE,
          character: str = DEFAULT_CHARACTER, scale: float = 1.0, pushes: Iterable[Push | str] = (),
          terrain: Terrain | str = DEFAULT_TERRAIN, seed: int = 0, video: str | Path | None = None,
          timestep: float | None = None, *, script: str | Path | Sequence[CommandChange] | None = None,
          fps: float = DEFAULT_FPS, width: int = DEFAULT_WIDTH, height: int = DEFAULT_HEIGHT,
          viewer: bool = False, progress: bool = False, controller: str | None = None,
          bvh: str | Path | None = None, actuation: str | None = None, config: str = "default",
          throws: Iterable[Throw] = ()) -> Result:
    """Stand in place (the command's ``walking`` is False, speed 0) for ``seconds``; see :func:`walk`.

    ``controller`` None picks the standing-balance controller (``balance``:
    COM virtual force, a ragdoll after a fall), or ``gbwc`` when a ``script``
    or a gait ``style`` is given, since a plan may make the character walk. GBWC steps when pushed
    too far; ``period`` and ``step_width`` shape those steps.
    """
    return run(RunRequest("stand", controller, seconds, 0.0, period, turn_rate, heading_deg, step_width, style,
                          character, scale, tuple(pushes), terrain, seed, timestep, script, video, fps, width,
                          height, viewer, progress, bvh, actuation, config, tuple(throws)))


def run(request: RunRequest) -> Result:
    """Check ``request``, build the scene and controller, run it and return the result.

    Everything that can be wrong with the input (flags, files, the video path,
    the display for the viewer) fails here before the first physics step.
    """
    from dataclasses import replace

    from strider.methods.registry import default_controller

    if request.controller is None:
        request = replace(request, controller=default_controller(request.action, request.script is not None,
                                                                     request.style is not None))
    _check_values(request)
    from strider.characters import load_character
    from strider.control.controller import LocomotionCommand
    from strider.methods.registry import controller_entry, locomotion_scenario
    from strider.runner.scenario import Runner
    from strider.runner.throws import Thrower, ball_props
    from strider.sim.scene import DEFAULT_TIMESTEP

    pushes = tuple(_as_push(p) for p in request.pushes)
    late = [p for p in pushes if p.time >= request.seconds]
    if late:
        raise UsageError(f"--push at {late[0].time:g} s comes after the end of the {request.seconds:g} s run")
    late_throws = [t for t in request.throws if t.time >= request.seconds]
    if late_throws:
        raise UsageError(f"a throw at {late_throws[0].time:g} s comes after the end of the {request.seconds:g} s run")
    terrain = _as_terrain(request.terrain)
    script = _as_script(request.script)
    entry = controller_entry(request.controller)
    if not entry.walks and (request.action == "walk" or script):
        raise UsageError(f"controller {request.controller!r} only stands; walking and --script plans need gbwc or simbicon")
    spec = load_character(request.character, request.scale, request.actuation)
    timestep = DEFAULT_TIMESTEP if request.timestep is None else float(request.timestep)
    if request.video is not None:
        from strider.sim.render import check_video_path

        check_video_path(request.video)
    if request.bvh is not None:
        from strider.outputs import check_writable

        if Path(request.bvh).suffix.lower() != ".bvh":
            raise UsageError(f"cannot write {request.bvh}: a BVH file name must end in .bvh")
        check_writable(request.bvh)
    if request.viewer:
        from strider.sim.viewer import require_display

        require_display()

    command = LocomotionCommand(speed=float(request.speed), period=float(request.period),
                                heading=math.radians(request.heading_deg), turn_rate=float(request.turn_rate),
                                step_width=float(request.step_width), walking=request.action == "walk")
    scenario = locomotion_scenario(request.controller, command, spec, style=request.style, ground=terrain,
                                   seconds=float(request.seconds), pushes=pushes, script=script,
                                   seed=operator.index(request.seed), timestep=timestep, config=request.config,
                                   props=ball_props(request.throws))
    frame_rate = _frame_rate(request, timestep)
    thrower = Thrower(request.throws)
    runner = Runner(scenario, frame_rate=frame_rate, hooks=(thrower,) if request.throws else ())
    with ExitStack() as cleanup:
        sinks = _open_sinks(request, runner, frame_rate, cleanup)
        runner.on_frame = _fan_out(sinks) if sinks else None
        result = runner.run()
    result.command = _describe(request, pushes, terrain, timestep, spec)
    result.throws = thrower.outcomes()
    if script:
        result.command["commands_run"] = commands_run(command, script)
    return result


def commands_run(start: LocomotionCommand, script: Sequence[CommandChange]) -> list[dict]:
    """What a plan actually asked for: the command in force from the start and from each change on, with the
    flags' values where the plan leaves a field alone (the flags set the command a plan starts from)."""
    rows, command = [], start
    for t, change in [(0.0, None)] + [(c.t, c) for c in sorted(script, key=lambda c: c.t)]:
        if change is not None:
            command = change.applied_to(command)
        rows.append({"t": float(t), "walking": command.walking, "speed": command.speed,
                     "lateral_speed": command.lateral_speed, "period": command.period,
                     "heading_deg": None if command.heading is None else math.degrees(command.heading),
                     "turn_rate": command.turn_rate, "step_width": command.step_width})
    return rows


# --- checking and converting arguments ----------------------------------------------------------
def _check_values(r: RunRequest) -> None:
    if r.action not in ACTIONS:
        raise UsageError(f"unknown action {r.action!r} (expected {' or '.join(ACTIONS)})")
    require_finite("--seconds", r.seconds, "s", positive=True)
    require_finite("--period", r.period, "s", positive=True)
    require_finite("--speed", r.speed, "m/s")
    require_finite("--turn-rate", r.turn_rate, "rad/s")
    require_finite("--heading-deg", r.heading_deg, "degrees")
    require_finite("--step-width", r.step_width, "m")
    require_finite("--scale", r.scale, "size factor", positive=True)
    if r.step_width < 0:
        raise UsageError(f"--step-width must be >= 0 m, got {r.step_width:g}")
    if r.timestep is not None:
        require_finite("--timestep", r.timestep, "s", positive=True)
    try:
        seed = operator.index(r.seed)
    except TypeError:
        raise UsageError(f"--seed must be an integer, got {r.seed!r}") from None
    if isinstance(r.seed, bool) or seed < 0:
        raise UsageError(f"--seed must be an integer >= 0, got {r.seed!r}")
    # Checked whether or not an output is asked for: a bad value is a mistake even where it would go unused.
    require_finite("--fps", r.fps, "frames per second", positive=True)
    if r.fps > MAX_FPS:
        raise UsageError(f"--fps must be at most {MAX_FPS:g}, got {r.fps:g}")
    for name, size in (("--width", r.width), ("--height", r.height)):
        if isinstance(size, bool) or not isinstance(size, int) or size < MIN_VIDEO_SIZE or size % 2:
            raise UsageError(f"{name} must be an even number of pixels >= {MIN_VIDEO_SIZE}, got {size!r}")


def _parsed(value: Any, kind: type, parse: Callable[[str], Any], expected: str) -> Any:
    """Accept an object of ``kind`` as it is, or parse it from its CLI string form."""
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        return parse(value)
    raise UsageError(f"expected {expected}, got {value!r}")


def _as_push(push: Push | str) -> Push:
    from strider.runner.perturbation import Push

    return _parsed(push, Push, Push.parse, "a push as a Push or an 'F@T[:DIR_DEG[:DURATION]][@head]' string")


def _as_terrain(terrain: Any) -> Any:
    """A :class:`~strider.sim.Terrain`, or a :class:`~strider.courses.Course` (given as one or as
    ``"course:NAME"``)."""
    from strider.courses import Course, load_course
    from strider.sim.scene import Terrain

    if isinstance(terrain, Course):
        return terrain
    if isinstance(terrain, str) and terrain.startswith("course:"):
        return load_course(terrain.partition(":")[2])
    return _parsed(terrain, Terrain, Terrain.parse, "terrain as a Terrain, a Course or 'flat' / 'slope:DEG' / "
                                                    "'course:NAME'")


def _terrain_name(terrain: Any) -> str:
    if not hasattr(terrain, "kind"):
        return f"course:{terrain.name}"
    return "flat" if terrain.kind == "flat" else f"slope:{terrain.slope_deg:g}"


def _as_script(script: Any) -> tuple[CommandChange, ...]:
    from strider.runner.scenario import CommandChange
    from strider.runner.script import load_script

    if script is None:
        return ()
    if isinstance(script, (str, Path)):
        return load_script(script)
    changes = tuple(script)
    if not all(isinstance(c, CommandChange) for c in changes):
        raise UsageError("script must be a plan file path or a sequence of CommandChange")
    return changes


# --- frames: video, viewer, progress ---------------------------------------------------------
def _frame_rate(r: RunRequest, timestep: float) -> float:
    """How often the runner hands out frames: the rate asked for (the runner's FrameClock puts each frame on the
    nearest physics step), at most one per step."""
    if r.video is not None or r.bvh is not None:
        wanted = r.fps
    elif r.viewer:
        from strider.sim.viewer import VIEWER_FPS

        wanted = VIEWER_FPS
    elif r.progress:
        wanted = PROGRESS_RATE
    else:
        return 0.0
    return min(wanted, 1.0 / timestep)


def _open_sinks(r: RunRequest, runner: Any, frame_rate: float, cleanup: ExitStack) -> list[FrameSink]:
    """Everything that wants frames, opened before the first step and closed by ``cleanup``."""
    sinks: list[FrameSink] = []
    world = runner.world
    if r.video is not None:
        from strider.sim.render import VideoRecorder

        recorder = VideoRecorder(world, r.video, frame_rate, r.width, r.height)
        cleanup.callback(recorder.close)
        sinks.append(recorder)
    if r.bvh is not None:
        from strider.motion.recording import BvhRecorder

        bvh = BvhRecorder(runner.character, r.bvh, frame_rate)
        cleanup.callback(bvh.close)
        sinks.append(bvh)
    if r.viewer:
        from strider.sim.viewer import LiveViewer

        character = runner.character
        viewer = LiveViewer(world, track_body=character.body(character.spec.roles.root))
        cleanup.callback(viewer.close)
        sinks.append(viewer)
    if r.progress:
        bar = _ProgressBar(r.seconds)
        cleanup.callback(bar.close)
        sinks.append(bar)
    return sinks


def _fan_out(sinks: list[FrameSink]) -> FrameSink:
    def on_frame(world: Any, t: float) -> None:
        for sink in sinks:
            sink(world, t)

    return on_frame


class _ProgressBar:
    """A tqdm bar on stderr over simulated seconds."""

    def __init__(self, seconds: float):
        import sys

        from tqdm import tqdm

        self.bar = tqdm(total=round(seconds, 3), unit="s", desc="simulating", file=sys.stderr, leave=False,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:g} s simulated "
                                   "[{elapsed}<{remaining}]")
        self.shown = 0.0

    def __call__(self, world: Any, t: float) -> None:
        step = round(t, 3) - self.shown
        if step > 0:
            self.bar.update(step)
            self.shown += step

    def close(self) -> None:
        self.bar.close()


# --- reporting ---------------------------------------------------------------------------------
def _describe(r: RunRequest, pushes: tuple[Push, ...], terrain: Terrain, timestep: float, spec: CharacterSpec) -> dict:
    """The run's arguments as JSON-ready values: enough to repeat it."""
    from strider.methods.registry import controller_entry

    if isinstance(r.script, (str, Path)):
        script: Any = str(r.script)
    elif r.script is None:
        script = None
    else:
        script = [{"t": c.t, **c.changes} for c in r.script]
    described = {
        "action": r.action, "seconds": float(r.seconds), "speed": float(r.speed), "period": float(r.period),
        "turn_rate": float(r.turn_rate), "heading_deg": float(r.heading_deg), "step_width": float(r.step_width),
        "controller": r.controller, "config": r.config, "style": r.style or controller_entry(r.controller).default_style, "character": r.character, "scale": float(r.scale),
        "pushes": [str(p) for p in pushes],
        "terrain": _terrain_name(terrain),
        "timestep": timestep, "script": script, "video": None if r.video is None else str(r.video),
        "actuation": spec.actuation,
        "torque_limits": {group: "none" if g.limit is None else g.limit for group, g in spec.gains.items()},
    }
    if r.bvh is not None:
        described["bvh"] = str(r.bvh)
    if r.video is not None or r.bvh is not None:
        described.update(fps=float(r.fps), width=r.width, height=r.height)
    return described
