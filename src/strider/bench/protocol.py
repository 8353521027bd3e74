"""Benchmark protocols: validated YAML data files, one per bench, in ``strider/bench/protocols/``.

A protocol holds every number a bench uses (forces, directions, phases, speeds,
durations, seeds) and the *anchors*: the source's published figures and the
targets, shown beside the measured ones. Each value's source is cited in the
file. A bad file gives one line naming the file, the field and the problem; a
bad command-line override gives one line naming the flag.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strider.characters.library import SCALE_RANGE
from strider.characters.spec import GAIN_SCALING_RULES
from strider.datafile import Fields, load_yaml
from strider.errors import ConfigError, UsageError

PROTOCOL_DIR = Path(__file__).resolve().parent / "protocols"
SHIPPED_SOURCE = "strider/bench/protocols/"   # how a result names a shipped protocol, the same on every machine
BENCHES = ("push", "envelope", "turning", "terrain", "bodies", "crates", "speed", "soak", "slip-push", "slip-terrain")
TERRAIN_KINDS = ("flat", "slope", "step_up", "step_down", "stairs_up", "stairs_down", "bumps", "drop", "gap", "ramp",
                 "stones", "course")


@dataclass(frozen=True)
class Anchor:
    """A published figure or target to print beside a measured one; ``metric`` names the summary entry."""

    metric: str
    value: str
    source: str
    target: float | None = None   # the number a measured figure must reach, where the anchor is a target


@dataclass(frozen=True)
class PushProtocol:
    speed: float
    period: float
    settle_seconds: float
    force: float
    duration: float
    directions: int
    phases: int
    observe_seconds: float
    recovery_seconds: float
    speed_tolerance: float
    find_max_low: float
    find_max_high: float
    find_max_resolution: float


@dataclass(frozen=True)
class PushCase:
    """One gait pushed at random: ``trials`` runs of the controller's ``style`` at ``speed``."""

    name: str
    style: str
    speed: float
    trials: int


@dataclass(frozen=True)
class RandomPushProtocol:
    cases: tuple[PushCase, ...]
    settle_seconds: float                  # s of the gait before the push window (shared by a case's trials)
    force_range: tuple[float, float]       # N, uniform
    duration_range: tuple[float, float]    # s, uniform
    body: str                              # the role pushed: torso or head
    window: float                          # s: the push comes uniformly within this long after the settle
    observe_seconds: float                 # s after the push that the character must stay up


@dataclass(frozen=True)
class EnvelopeProtocol:
    speeds: tuple[float, ...]
    periods: tuple[float, ...]
    max_step_length: float
    seconds: float
    steady_from: float
    speed_tolerance: float


@dataclass(frozen=True)
class TurningProtocol:
    speeds: tuple[float, ...]
    period: float
    lead_in: float
    interval: float
    jumps_deg: tuple[float, ...]
    turn_rate: float
    turn_rate_tolerance: float
    facing_tolerance_deg: float
    settle_periods: float


@dataclass(frozen=True)
class Body:
    """A character the bodies bench walks: a shipped name or file, scaled uniformly by ``scale``."""

    name: str
    character: str
    scale: float = 1.0


@dataclass(frozen=True)
class BodiesProtocol:
    bodies: tuple[Body, ...]
    gain_rules: tuple[str, ...]
    speeds: tuple[float, ...]
    period: float
    walk_seconds: float
    steady_from: float
    speed_tolerance: float
    push_force: float
    push_protocol: str = "push"   # the P1 protocol whose grid it takes: the shipped one, or a file


@dataclass(frozen=True)
class CrateCase:
    """One crate skill the crates bench runs: ``lift`` a crate of ``mass`` kg from a table, or ``push`` one (then
    pull it back) over a floor with ``friction``."""

    name: str
    kind: str
    mass: float
    friction: float | None = None   # None: the task's own (lift: 0.8; push: 0.2, seed 000, Sec. 5.5.4)


@dataclass(frozen=True)
class CratesProtocol:
    cases: tuple[CrateCase, ...]
    seconds: float           # the time each task must be done within


@dataclass(frozen=True)
class TerrainFeature:
    """One terrain run: a feature of a ``kind`` laid as a course ``feature_at`` m ahead, or a whole ``course``
    (a shipped course name or a course file) with the ``finish_x`` its centre of mass must reach."""

    name: str
    kind: str = "course"
    value: float = 0.0        # slope or ramp degrees; step, stair, drop or bump height m; gap (mean) width m
    count: int = 1            # stairs, stones
    tread: float = 0.3        # m: a stair's tread, a ramp's length
    seeds: tuple[int, ...] = (0,)
    course: str | None = None
    finish_x: float | None = None


@dataclass(frozen=True)
class TerrainProtocol:
    speed: float
    period: float
    seconds: float
    feature_at: float
    finish_past: float
    features: tuple[TerrainFeature, ...]
    stagger: float = 0.0       # m a seed moves a fixed-shape feature (drop, step, gap, ramp) further ahead
    pass_share: float = 1.0    # a feature passes when at least this share of its runs do
    stop_at_finish: bool = False   # a run ends at its finish line, passed, instead of walking on to ``seconds``


@dataclass(frozen=True)
class SpeedProtocol:
    speed: float
    period: float
    seconds: float
    profile_seconds: float
    scaling: bool
    scaling_directions: int
    scaling_phases: int
    scaling_ray: bool
    scaling_settle_seconds: float
    scaling_observe_seconds: float
    scaling_bare_tasks: int
    scaling_bare_seconds: float
    timing_repeats: int = 3    # the walk, its replay and bare stepping each timed this often; the fastest kept


@dataclass(frozen=True)
class SoakProtocol:
    minutes: float
    segments: int
    speed_range: tuple[float, float]
    turn_rate_range: tuple[float, float]
    period: float
    command_interval: tuple[float, float]
    push_force_max: float
    push_interval: tuple[float, float]
    push_duration: float
    memory_every: float
    drift_window_minutes: float
    settle_after_change: float


@dataclass(frozen=True)
class DynamicsProtocol:
    settle_seconds: float
    rounds: int
    calls: int


@dataclass(frozen=True)
class RolloutProtocol:
    settle_seconds: float
    rollouts: int
    seconds: float
    control_noise: float
    workers: tuple[int, ...]
    ray: bool
    rounds: int
    closed_loop_rollouts: int


@dataclass(frozen=True)
class GraphParallelProtocol:
    clip: str
    fragments: int
    particles: int
    sigma: float
    all_joints: bool
    bare_seconds: float
    ray: bool


@dataclass(frozen=True)
class GraphLearnProtocol:
    clips: tuple[str, ...]
    workers: int
    iterations: int
    survive_seconds: float
    cycles: int
    checkpoints: str
    pooled_paths: int = 1
    phase_reset: tuple[str, ...] = ("walk", "run", "jog")   # seed 002, Sec. 6.1: walking and running controllers
    policy_joints: str = "source"   # LearnParams.policy_joints: "source" or "all" (strider's)
    loop_once: tuple[str, ...] = ()   # clips that play once, learned as a cycle (LearnParams.loop_once): the
                                      # source's kick loops, the DeepMimic kick does not


@dataclass(frozen=True)
class GraphSpeedProtocol:
    skill: str
    seconds: float
    characters: int = 4          # in the group scene (seed 002, Sec. 6.2: four)
    radius: float = 1.5          # m: the group's circle, each walker facing its centre


@dataclass(frozen=True)
class GraphPushProtocol:
    skills: tuple[str, ...]
    trials: int
    max_seconds: float
    workers: int
    kick: str | None = None                        # a one-pass skill pushed once per pass at its peak (P4)
    kick_forces: tuple[float, ...] = (400.0, 290.0, 0.0)   # N; 0: unpushed
    kick_trials: int = 50
    kick_cycles: int = 10
    kick_search_trials: int = 0                    # trials again with the unpushed fragments searched (strider's)
    kick_search_particles: int = 200


@dataclass(frozen=True)
class GraphRecoveryProtocol:
    skill: str                     # the skill that falls
    getups: tuple[str, ...]        # one-pass get-up skills
    trials: int
    max_seconds: float             # the push test's cap: a trial that has not fallen by then is left out
    give_up_seconds: float         # from the fall to standing (control-graphs P5 (b): 10 s)
    workers: int
    search: bool = True            # also the same falls with get-ups searched from the fall (strider's)
    search_particles: int = 200


@dataclass(frozen=True)
class GraphWalksProtocol:
    graph: str                     # a shipped graph's name or a graph file
    walks: int                     # random walks, one seed each
    seconds: float                 # simulated time of each walk
    workers: int
    search_walks: int = 1          # walks again with searched get-ups, then with everything searched (strider's)
    search_seconds: float = 60.0
    search_particles: int = 200


@dataclass(frozen=True)
class GraphSteerProtocol:
    skill: str                     # a shipped cyclic skill's name or a skill file
    seconds: float                 # simulated time per course
    courses: dict                  # name -> ((x, y), ...) waypoints in metres from the start, in order
    particles: int                 # SAMCON samples per fragment
    workers: int


@dataclass(frozen=True)
class SlipGaitsProtocol:
    gaits: tuple[str, ...]
    seconds: float
    skip_seconds: float
    min_flight: float
    tolerance: float
    transitions: tuple[tuple[tuple[str, float], ...], ...] = ()   # gaits in order, each held so many seconds
    planner_seeds: tuple[int, ...] = (1,)   # one episode per case and seed of the planner's CMA-ES
    flight_share: float = 0.8   # of the steps of a gait that rewards an apex (run, jump) that must fly
    apex_share: float = 0.6     # a jump's mean apex rise at least this share of its goal h_d
    jump_from: float = 0.1      # m: a gait whose apex goal is above this is a jump (the run's h_d is 0.05)


@dataclass(frozen=True)
class SlipSpeedProtocol:
    config: str
    evaluations: int
    cases: tuple[tuple[float, float, float], ...]   # (replan every N steps, on contact events 0/1, seconds)
    # the same kind of walks in strider's default configuration, with its own evaluation budget and refinement
    strider_cases: tuple[tuple[float, float, float], ...] = ()


@dataclass(frozen=True)
class SimbiconGaitsProtocol:
    gaits: tuple[tuple[str, str], ...]   # (character, gait style)
    runs: tuple[str, ...]                # gait styles judged as runs (flight share)
    seconds: float
    skip_seconds: float
    min_flight: float
    min_flight_share: float
    push_forces: tuple[float, ...]
    push_duration: float
    push_phases: int
    push_stride: float
    push_settle: float
    push_observe: float
    timing_repeats: int = 3              # times the walk, replay and bare stepping are each timed; the fastest kept


@dataclass(frozen=True)
class TrackSpeedProtocol:
    clip: str                  # the motion capture to rectify (P4a, b)
    track: str                 # the rectified motion to walk (P4d) and to make the FRI table for (P4c)
    walk_seconds: float
    vi_workers: int            # processes sampling the FRI transitions (P4c)


@dataclass(frozen=True)
class TlcTasksProtocol:
    tasks: tuple[tuple[str, dict], ...]   # (task, {starts, low, high, seconds, configs})
    workers: int
    speed_task: str | None = None         # P10: this task's policy walks ``speed_seconds`` toward ``speed_goal``
    speed_goal: float = 0.0
    speed_seconds: float = 60.0
    speed_repeats: int = 3                # the walk, its replay and bare stepping each timed this often; fastest kept


@dataclass(frozen=True)
class TlcVrwtProtocol:
    masses: tuple[float, ...]     # kg: a column of hits per mass
    hits: int                     # throws per mass and walker
    throw_strike: int             # the throw comes in the step from this strike of the task on
    observe: float                # s after that strike: a fall within it fails
    workers: int


@dataclass(frozen=True)
class TlcCostProtocol:
    task: str
    config: str                # the task's exploration thresholds: default or source
    workers: int


@dataclass(frozen=True)
class CwAccuracyProtocol:
    seeds: tuple[int, ...]     # new stepping-stone sequences (not among the synthesis' seeds)
    steps: int                 # stones per sequence
    configs: tuple[tuple[str, dict], ...]   # (name, {regression, search, edge_margin, early_touchdown,
                                            # preferred_step})
    workers: int


@dataclass(frozen=True)
class CwGapsProtocol:
    widths: tuple[float, ...]     # m (Table 3.1's w)
    spacings: tuple[float, ...]   # m (Table 3.1's s)
    walks: int                    # per cell and config
    lead: tuple[float, float]     # m: range of the start's distance before the first gap
    configs: tuple[tuple[str, dict], ...]
    workers: int


@dataclass(frozen=True)
class CwRealtimeProtocol:
    course: str                   # a course name or file the walks cross
    walks: int                    # per config; walk k plans with the protocol's seed + k
    start: tuple[float, float]    # m: the walks stand at evenly spaced x over this range
    configs: tuple[tuple[str, dict], ...]
    max_steps: int


@dataclass(frozen=True)
class TrackMocapProtocol:
    clip: str
    seconds: float
    speed_tolerance: float     # share of the clip's speed the walk may miss it by


@dataclass(frozen=True)
class TrackPushProtocol:
    track: str
    phases: int                # pushes spread evenly over one stride
    warmup_steps: int
    observe_seconds: float     # after the push, with no fall ...
    min_steps: int             # ... and at least this many steps
    high: float                # N: the bisection's upper end
    resolution: float          # N
    policies: tuple[str, ...]  # FRI policies to bisect, each on its own: integral, constant, vi
    source_policies: tuple[str, ...]   # ... and these again with the source's controller (strider's additions off)


@dataclass(frozen=True)
class TrackBaselineProtocol:
    track: str
    steps: int                 # the reference walk's steps; a trial passes with no fall to the end of the last
    push_step: int             # the push comes at the middle of this step
    push_seconds: float
    resolution: float          # N: the interval is scanned outward from 0 in these steps ...
    high: float                # N: ... up to this force each way
    max_torque: float          # N m, both controllers
    clamps: tuple[str, ...]    # how the phase-indexed walker meets the clamp, a row each: clip (the source's), qp, none
    contain: tuple[float, float]     # N: the phase-indexed interval must contain this one (the target)
    nqr_low: tuple[float, float]     # N: the NQR's F- within this range ...
    nqr_high: tuple[float, float]    # N: ... and its F+ within this one ("near the source's")
    point_foot_track: str = ""       # the spec's 5-link point-foot walker's motion, measured the same way ("": none)
    point_foot_warmup: int = 0       # steps it walks before the reference is recorded, to settle on its gait
    # how the NQR measures the body's horizontal position, a row each: from the stance foot (the spec's pinned stance
    # point) or in the world (the reference's absolute position)
    nqr_positions: tuple[str, ...] = ("stance",)


@dataclass(frozen=True)
class TrackExtraProtocol:
    track: str
    steps: int                 # steps the policy must take without falling ...
    seconds: float             # ... within this time
    policy: str                # the policy on trial (the source's VI)
    baseline: str              # the policy that fails on the same gait (the source's constant FRI)
    clip: str                  # the capture the edits are rectified from
    lengths: tuple[float, ...] # length edits, x the capture's step: each rectified, fitted, then walked ...
    slopes: tuple[float, ...]  # slope edits, degrees: each rectified for its ramp, fitted, then walked on it ...
    edit_steps: int            # ... this many steps without a fall (integral policy), like the length edits
    jump: str                  # the broad jump (a .track or shipped motion) and its VI table
    jumps: int                 # jumps it must take without a fall ...
    jump_seconds: float        # ... within this time, from each start
    jump_flight: tuple[float, ...]       # starts in the air: shares of the flight's phase range ...
    jump_rates: tuple[float, ...]        # ... at these phase rates, x the rectified one (and the rectified landing)
    return_map: tuple[float, ...]        # phase rates at heel-off a return map starts from, x the rectified one
    jump_clip: str             # the capture the source's configuration is rectified from ...
    source_grid: tuple[float, ...]       # ... and the (phases, rates, actions) of its own VI table


@dataclass(frozen=True)
class TrackSlopesProtocol:
    track: str
    slopes: tuple[float, ...]  # degrees
    level: float               # m of level ground before the slope
    slope_length: float        # m along the ramp
    progress: float            # m to make along the slope ...
    seconds: float             # ... within this time
    policies: tuple[str, ...]  # FRI policies to walk them with, each on its own: integral, constant, vi
    source_policies: tuple[str, ...]   # ... and these again with the source's controller (strider's additions off)


@dataclass(frozen=True)
class SlipDodgeProtocol:
    seeds: int                 # trials per case, seeds 0 .. seeds - 1
    blind: bool                # also run strider's configuration with the planner not told of the ball
    throw_at: float            # s after the settle
    watch_seconds: float       # s after the throw to stay unhit and up
    spread_deg: float          # azimuths uniform within this either side of the facing


@dataclass(frozen=True)
class Protocol:
    """A bench's protocol: shared fields plus the bench's own (``params``)."""

    bench: str
    description: str
    character: str
    style: str | None
    seed: int
    anchors: tuple[Anchor, ...]
    params: Any
    source: str = ""
    changed: tuple[str, ...] = ()   # params the command line changed: the run covers part of the protocol only

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    @property
    def shipped(self) -> bool:
        """One of strider's own protocols, whose anchors are the published figures and strider's targets (a
        protocol file of the user's own is theirs to change)."""
        return self.source.startswith(SHIPPED_SOURCE)

    def anchor(self, metric: str) -> str:
        """The anchors of a summary figure, as one line: value (source); ..."""
        return "; ".join(f"{a.value} ({a.source})" for a in self.anchors if a.metric == metric)

    def target(self, metric: str) -> float | None:
        return next((a.target for a in self.anchors if a.metric == metric and a.target is not None), None)

    def meets(self, metric: str, value: float, at_most: bool = False) -> bool | None:
        """Whether ``value`` reaches the target of ``metric`` (at least it; ``at_most``: at most it), or None when
        the protocol sets no target for it (a protocol file of the user's own may leave its anchors out)."""
        target = self.target(metric)
        if target is None:
            return None
        return bool(value <= target) if at_most else bool(value >= target)

    def replace(self, **changes: Any) -> Protocol:
        """A copy with bench parameters changed (command-line overrides), checked like the file's values."""
        changes = {k: v for k, v in changes.items() if v is not None}
        top = {k: changes.pop(k) for k in ("seed", "character", "style") if k in changes}
        if top.get("seed", 0) < 0:
            raise UsageError(f"--seed must be >= 0, got {top['seed']}")
        params = dataclasses.replace(self.params, **changes) if changes else self.params
        _check(self.bench, params, lambda field, problem: UsageError(f"--{field.replace('_', '-')} {problem}"))
        moved = tuple(k for k, v in changes.items() if getattr(self.params, k) != v and k not in self.changed)
        return dataclasses.replace(self, params=params, changed=self.changed + moved, **top)

    def features_named(self, text: str) -> tuple[TerrainFeature, ...]:
        """The terrain features whose names contain any of the comma-separated words of ``text`` (``stairs,slope
        +5``), in the protocol's order; a word that matches none is an error listing the names."""
        words = [w.strip().lower() for w in text.split(",") if w.strip()]
        if not words:
            raise UsageError("--features needs at least one feature name")
        names = [f.name for f in self.params.features]
        for w in words:
            if not any(w in n.lower() for n in names):
                raise UsageError(f"--features: no feature of the {self.bench} protocol is named like {w!r}; "
                                 f"the features are: {'; '.join(names)}")
        return tuple(f for f in self.params.features if any(w in f.name.lower() for w in words))


def protocol_path(bench: str) -> Path:
    return PROTOCOL_DIR / f"{bench}.yaml"


def load_protocol(bench: str, path: str | Path | None = None) -> Protocol:
    """Read and validate the protocol of ``bench`` (the shipped one unless ``path`` is given)."""
    path = Path(path) if path is not None else protocol_path(bench)
    # Shipped protocols are named from the package, so result files do not record one machine's paths.
    shipped = path.resolve().parent == PROTOCOL_DIR
    source = f"{SHIPPED_SOURCE}{path.name}" if shipped else str(path)
    try:
        data = load_yaml(path)
    except ConfigError as exc:
        raise ConfigError(source, exc.field, exc.problem) from None
    top = Fields(data, source)
    declared = top.string("bench")
    if declared != bench:
        raise top.error("bench", f"this is a {declared!r} protocol, not {bench!r}")
    params_fields = top.mapping("params")
    params = _PARSERS[bench](params_fields)
    top.reject_unknown({"bench", "description", "character", "style", "seed", "anchors", "params"})
    anchors = []
    for a in top.items("anchors", []):
        a.reject_unknown({"metric", "value", "source", "target"})
        anchors.append(Anchor(a.string("metric"), str(a.raw("value")), a.string("source"), a.number("target", None)))
    seed = top.number("seed", 0, min=0)
    if seed != int(seed):
        raise top.error("seed", f"expected a whole number, got {seed}")
    _check(bench, params, lambda field, problem: params_fields.error(field, problem))
    return Protocol(bench, top.string("description", ""), top.string("character", "bipv3"),
                    top.string("style", None), int(seed), tuple(anchors), params, source)


def _pair(f: Fields, key: str, default: Any = ..., positive: bool = False) -> tuple[float, float]:
    """[low, high] with low <= high (and low > 0 if ``positive``: the times between events a loop draws, which
    would never end at 0)."""
    lo, hi = f.vector(key, 2, default)
    if lo > hi:
        raise f.error(key, f"expected [low, high] with low <= high, got {[lo, hi]}")
    if positive and lo <= 0:
        raise f.error(key, f"expected [low, high] with 0 < low, got {[lo, hi]}")
    return lo, hi


def _flag(f: Fields, key: str, default: Any = ...) -> bool:
    value = f.raw(key, default)
    if not isinstance(value, bool):
        raise f.error(key, f"expected true or false, got {value!r}")
    return value


def _push(f: Fields) -> PushProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(PushProtocol)})
    num = {k: f.number(k) for k in ("speed", "period", "settle_seconds", "force", "duration", "observe_seconds",
                                     "recovery_seconds", "speed_tolerance", "find_max_low", "find_max_high",
                                     "find_max_resolution")}
    return PushProtocol(directions=f.whole("directions"), phases=f.whole("phases"), **num)


def _random_push(f: Fields) -> RandomPushProtocol:
    from strider.runner.perturbation import MAX_PUSH_DURATION, PUSHED_BODIES

    f.reject_unknown({f.name for f in dataclasses.fields(RandomPushProtocol)})
    cases = []
    for item in f.items("cases"):
        item.reject_unknown({x.name for x in dataclasses.fields(PushCase)})
        cases.append(PushCase(item.string("name"), item.string("style"), item.number("speed", min=0),
                              item.whole("trials", min=1)))
    if not cases:
        raise f.error("cases", "needs at least one gait to push")
    if _pair(f, "force_range")[0] < 0:
        raise f.error("force_range", "forces must be >= 0 N")
    if not 0 < _pair(f, "duration_range")[0] <= _pair(f, "duration_range")[1] <= MAX_PUSH_DURATION:
        raise f.error("duration_range", f"durations must lie in (0, {MAX_PUSH_DURATION:g}] s")
    return RandomPushProtocol(tuple(cases), f.number("settle_seconds", min=0),
                              _pair(f, "force_range"), _pair(f, "duration_range"),
                              f.string("body", choices=PUSHED_BODIES), f.number("window", min=0),
                              f.number("observe_seconds"))


def _envelope(f: Fields) -> EnvelopeProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(EnvelopeProtocol)})
    return EnvelopeProtocol(f.numbers("speeds"), f.numbers("periods"), f.number("max_step_length"),
                            f.number("seconds"), f.number("steady_from"), f.number("speed_tolerance"))


def _turning(f: Fields) -> TurningProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(TurningProtocol)})
    jumps = f.numbers("jumps_deg")
    if any(not 0 < abs(j) <= 180 for j in jumps):
        raise f.error("jumps_deg", f"each jump must be non-zero and at most 180 degrees either way, got {list(jumps)}")
    p = TurningProtocol(f.numbers("speeds"), f.number("period"), f.number("lead_in"), f.number("interval"),
                        jumps, f.number("turn_rate"), f.number("turn_rate_tolerance"),
                        f.number("facing_tolerance_deg"), f.number("settle_periods"))
    # The facing is judged on whole strides after the turn and its settling, before the next jump.
    needed = math.radians(max(abs(j) for j in jumps)) / p.turn_rate + (p.settle_periods + 2) * p.period
    if p.turn_rate > 0 and p.interval <= needed:
        raise f.error("interval", f"must leave a stride to judge the facing after the largest jump: > {needed:.2f} s, "
                                  f"got {p.interval:g}")
    return p


def _bodies(f: Fields) -> BodiesProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(BodiesProtocol)})
    bodies = []
    for item in f.items("bodies"):
        item.reject_unknown({x.name for x in dataclasses.fields(Body)})
        bodies.append(Body(item.string("name"), item.string("character"),
                           item.number("scale", 1.0, min=SCALE_RANGE[0], max=SCALE_RANGE[1])))
    if not bodies:
        raise f.error("bodies", "needs at least one body")
    rules = f.raw("gain_rules")
    if not isinstance(rules, list) or not rules or any(r not in GAIN_SCALING_RULES for r in rules):
        raise f.error("gain_rules", f"expected a non-empty list of {', '.join(GAIN_SCALING_RULES)}, got {rules!r}")
    return BodiesProtocol(tuple(bodies), tuple(rules), f.numbers("speeds"), f.number("period"),
                          f.number("walk_seconds"), f.number("steady_from"), f.number("speed_tolerance"),
                          f.number("push_force"), f.string("push_protocol", "push"))


def _crates(f: Fields) -> CratesProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(CratesProtocol)})
    cases = []
    for item in f.items("cases"):
        item.reject_unknown({x.name for x in dataclasses.fields(CrateCase)})
        cases.append(CrateCase(item.string("name"), item.string("kind", choices=("lift", "push")),
                               item.number("mass", positive=True), item.number("friction", None, positive=True)))
    if not cases:
        raise f.error("cases", "needs at least one crate task")
    return CratesProtocol(tuple(cases), f.number("seconds", positive=True))


def _terrain(f: Fields) -> TerrainProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(TerrainProtocol)})
    features = []
    for item in f.items("features"):
        item.reject_unknown({x.name for x in dataclasses.fields(TerrainFeature)})
        seeds = item.raw("seeds", [0])
        if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds):
            raise item.error("seeds", f"expected a list of whole numbers >= 0, got {seeds!r}")
        kind = item.string("kind", "course" if item.has("course") else ..., choices=TERRAIN_KINDS)
        course = item.string("course", None)
        if (kind == "course") != (course is not None):
            raise item.error("course", "a feature is either a kind with its numbers or kind: course with a "
                                       "course (a shipped name or a file) and its finish_x")
        finish_x = item.number("finish_x", None)
        if course is not None and finish_x is None:
            raise item.error("finish_x", "a course feature needs the x (m) its centre of mass must reach")
        features.append(TerrainFeature(item.string("name"), kind, item.number("value", 0.0), item.whole("count", 1),
                                       item.number("tread", 0.3), tuple(seeds), course, finish_x))
    if not features:
        raise f.error("features", "needs at least one terrain feature")
    stop_at_finish = _flag(f, "stop_at_finish", _default(TerrainProtocol, "stop_at_finish"))
    return TerrainProtocol(f.number("speed"), f.number("period"), f.number("seconds"), f.number("feature_at"),
                           f.number("finish_past"), tuple(features), f.number("stagger", 0.0, min=0),
                           f.number("pass_share", 1.0, min=0, max=1), stop_at_finish)


def _speed(f: Fields) -> SpeedProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(SpeedProtocol)})
    return SpeedProtocol(f.number("speed"), f.number("period"), f.number("seconds"), f.number("profile_seconds"),
                         _flag(f, "scaling"), f.whole("scaling_directions"), f.whole("scaling_phases"),
                         _flag(f, "scaling_ray"), f.number("scaling_settle_seconds"), f.number("scaling_observe_seconds"),
                         f.whole("scaling_bare_tasks"), f.number("scaling_bare_seconds"),
                         f.whole("timing_repeats", _default(SpeedProtocol, "timing_repeats"), min=1))


def _soak(f: Fields) -> SoakProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(SoakProtocol)})
    return SoakProtocol(f.number("minutes"), f.whole("segments"), _pair(f, "speed_range"),
                        _pair(f, "turn_rate_range"), f.number("period"), _pair(f, "command_interval", positive=True),
                        f.number("push_force_max"), _pair(f, "push_interval", positive=True), f.number("push_duration"),
                        f.number("memory_every"), f.number("drift_window_minutes"), f.number("settle_after_change"))


def _dynamics(f: Fields) -> DynamicsProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(DynamicsProtocol)})
    return DynamicsProtocol(f.number("settle_seconds"), f.whole("rounds"), f.whole("calls"))


def _rollout(f: Fields) -> RolloutProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(RolloutProtocol)})
    workers = f.numbers("workers")
    if any(w != int(w) or w < 1 for w in workers):
        raise f.error("workers", f"expected whole numbers >= 1, got {list(workers)}")
    return RolloutProtocol(f.number("settle_seconds", min=0), f.whole("rollouts"), f.number("seconds"),
                           f.number("control_noise", min=0), tuple(int(w) for w in workers),
                           _flag(f, "ray"), f.whole("rounds"), f.whole("closed_loop_rollouts", min=0))


def _graph_parallel(f: Fields) -> GraphParallelProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(GraphParallelProtocol)})
    return GraphParallelProtocol(f.string("clip"), f.whole("fragments", min=1), f.whole("particles", min=2),
                                 f.number("sigma", positive=True), _flag(f, "all_joints"),
                                 f.number("bare_seconds", positive=True), _flag(f, "ray"))


def _default(protocol: type, name: str):
    """The default a protocol dataclass gives an optional key: the one place it is written."""
    return next(field.default for field in dataclasses.fields(protocol) if field.name == name)


def _graph_learn(f: Fields) -> GraphLearnProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(GraphLearnProtocol)})
    return GraphLearnProtocol(_names(f, "clips"), f.whole("workers", min=1), f.whole("iterations", min=0),
                              f.number("survive_seconds", positive=True), f.whole("cycles", min=1),
                              f.string("checkpoints"),
                              f.whole("pooled_paths", _default(GraphLearnProtocol, "pooled_paths"), min=1),
                              _names(f, "phase_reset", _default(GraphLearnProtocol, "phase_reset"), empty=True),
                              f.string("policy_joints", _default(GraphLearnProtocol, "policy_joints")),
                              _names(f, "loop_once", _default(GraphLearnProtocol, "loop_once"), empty=True))


def _graph_speed(f: Fields) -> GraphSpeedProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(GraphSpeedProtocol)})
    return GraphSpeedProtocol(f.string("skill"), f.number("seconds", positive=True),
                              f.whole("characters", _default(GraphSpeedProtocol, "characters"), min=1),
                              f.number("radius", _default(GraphSpeedProtocol, "radius"), positive=True))


def _graph_push(f: Fields) -> GraphPushProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(GraphPushProtocol)})
    forces = f.numbers("kick_forces", list(_default(GraphPushProtocol, "kick_forces")))
    if min(forces) < 0:
        raise f.error("kick_forces", f"forces must be >= 0 (0: unpushed), got {list(forces)}")
    return GraphPushProtocol(_names(f, "skills"), f.whole("trials", min=1), f.number("max_seconds", positive=True),
                             f.whole("workers", min=1), f.string("kick", None), forces,
                             f.whole("kick_trials", _default(GraphPushProtocol, "kick_trials"), min=1),
                             f.whole("kick_cycles", _default(GraphPushProtocol, "kick_cycles"), min=1),
                             f.whole("kick_search_trials", _default(GraphPushProtocol, "kick_search_trials"), min=0),
                             f.whole("kick_search_particles", _default(GraphPushProtocol, "kick_search_particles"),
                                     min=2))


def _graph_recovery(f: Fields) -> GraphRecoveryProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(GraphRecoveryProtocol)})
    return GraphRecoveryProtocol(f.string("skill"), _names(f, "getups"), f.whole("trials", min=1),
                                 f.number("max_seconds", positive=True), f.number("give_up_seconds", positive=True),
                                 f.whole("workers", min=1), f.flag("search", _default(GraphRecoveryProtocol, "search")),
                                 f.whole("search_particles", _default(GraphRecoveryProtocol, "search_particles"),
                                         min=2))


def _graph_walks(f: Fields) -> GraphWalksProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(GraphWalksProtocol)})
    return GraphWalksProtocol(f.string("graph"), f.whole("walks", min=1), f.number("seconds", positive=True),
                              f.whole("workers", min=1),
                              f.whole("search_walks", _default(GraphWalksProtocol, "search_walks"), min=0),
                              f.number("search_seconds", _default(GraphWalksProtocol, "search_seconds"),
                                       positive=True),
                              f.whole("search_particles", _default(GraphWalksProtocol, "search_particles"), min=2))


def _graph_steer(f: Fields) -> GraphSteerProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(GraphSteerProtocol)})
    courses = f.mapping("courses")
    if not courses.data:
        raise f.error("courses", "expected one or more courses, each a name and a list of [x, y] waypoints")
    waypoints = {}
    for name, points in courses.data.items():
        if not (isinstance(points, list) and points and all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                            and math.isfinite(v) for v in p) for p in points)):
            raise courses.error(str(name), f"expected a list of [x, y] waypoints in metres, got {points!r}")
        waypoints[str(name)] = tuple((float(x), float(y)) for x, y in points)
    return GraphSteerProtocol(f.string("skill"), f.number("seconds", positive=True), waypoints,
                              f.whole("particles", min=2), f.whole("workers", min=1))


def _names(f: Fields, key: str, default: tuple[str, ...] | None = None, empty: bool = False) -> tuple[str, ...]:
    value = f.raw(key, ...) if default is None else f.raw(key, list(default))
    if not isinstance(value, list) or not (value or empty) or not all(isinstance(v, str) for v in value):
        raise f.error(key, f"expected a {'' if empty else 'non-empty '}list of names, got {value!r}")
    return tuple(value)


def _slip_gaits(f: Fields) -> SlipGaitsProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(SlipGaitsProtocol)})
    transitions = []
    for i, legs in enumerate(f.raw("transitions", None) or ()):
        if not isinstance(legs, list) or len(legs) < 2 or not all(
                isinstance(leg, list) and len(leg) == 2 and isinstance(leg[0], str)
                and isinstance(leg[1], (int, float)) and not isinstance(leg[1], bool) and leg[1] > 0
                for leg in legs):
            raise f.error("transitions", f"entry {i} should list two or more [gait, seconds] pairs with positive "
                                         f"seconds, got {legs!r}")
        transitions.append(tuple((str(gait), float(seconds)) for gait, seconds in legs))
    return SlipGaitsProtocol(_names(f, "gaits"), f.number("seconds"), f.number("skip_seconds", min=0),
                             f.number("min_flight", min=0), f.number("tolerance", min=0), tuple(transitions),
                             _seeds(f, "planner_seeds", default=[1]),
                             f.number("flight_share", SlipGaitsProtocol.flight_share, min=0, max=1),
                             f.number("apex_share", SlipGaitsProtocol.apex_share, min=0),
                             f.number("jump_from", SlipGaitsProtocol.jump_from, min=0))


def _simbicon_gaits(f: Fields) -> SimbiconGaitsProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(SimbiconGaitsProtocol)})
    gaits = f.raw("gaits")
    if not isinstance(gaits, list) or not gaits or not all(
            isinstance(g, list) and len(g) == 2 and all(isinstance(v, str) for v in g) for g in gaits):
        raise f.error("gaits", f"expected a list of [character, gait] pairs, got {gaits!r}")
    forces = f.numbers("push_forces")
    if any(v <= 0 for v in forces) or list(forces) != sorted(forces):
        raise f.error("push_forces", f"expected rising positive forces, got {list(forces)}")
    seconds = f.number("seconds", positive=True)
    runs = _names(f, "runs")
    unknown = sorted(set(runs) - {g for _, g in gaits})
    if unknown:
        raise f.error("runs", f"names gaits the protocol does not walk: {', '.join(unknown)}")
    return SimbiconGaitsProtocol(tuple((c, g) for c, g in gaits), runs, seconds,
                                 f.number("skip_seconds", min=0, max=seconds), f.number("min_flight", min=0),
                                 f.number("min_flight_share", min=0, max=1), tuple(forces),
                                 f.number("push_duration", positive=True), f.whole("push_phases", min=1),
                                 f.number("push_stride", positive=True), f.number("push_settle", min=0),
                                 f.number("push_observe", positive=True),
                                 f.whole("timing_repeats", _default(SimbiconGaitsProtocol, "timing_repeats"), min=1))


def _slip_speed(f: Fields) -> SlipSpeedProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(SlipSpeedProtocol)})
    cases = []
    for case in f.items("cases"):
        cases.append(_case(case))
    if not cases:
        raise f.error("cases", "needs at least one replanning case")
    strider_cases = tuple(_case(case) for case in f.items("strider_cases", []))
    return SlipSpeedProtocol(f.string("config"), f.whole("evaluations"), tuple(cases), strider_cases)


def _slip_dodge(f: Fields) -> SlipDodgeProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(SlipDodgeProtocol)})
    return SlipDodgeProtocol(f.whole("seeds", min=1), _flag(f, "blind"), f.number("throw_at", min=0),
                             f.number("watch_seconds", positive=True), f.number("spread_deg", min=0, max=180))


def _track_speed(f: Fields) -> TrackSpeedProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(TrackSpeedProtocol)})
    return TrackSpeedProtocol(_clip(f), f.string("track"), f.number("walk_seconds", positive=True),
                              f.whole("vi_workers", min=1))


def _cw_configs(f: Fields, searches: tuple[str, ...]) -> tuple[tuple[str, dict], ...]:
    from strider.methods.cw.model import REGRESSIONS

    configs, named = [], f.mapping("configs")
    for name in named.data:
        c = named.mapping(name)
        c.reject_unknown({"regression", "search", "edge_margin", "early_touchdown", "preferred_step"})
        configs.append((str(name), {"regression": c.string("regression", choices=REGRESSIONS),
                                    "search": c.string("search", searches[0], choices=searches),
                                    "edge_margin": c.number("edge_margin", 0.0, min=0.0),
                                    "early_touchdown": c.number("early_touchdown", None, min=0.0),
                                    "preferred_step": c.number("preferred_step", None, positive=True)}))
    if not configs:
        raise f.error("configs", "name at least one configuration")
    return tuple(configs)


def _cw_accuracy(f: Fields) -> CwAccuracyProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(CwAccuracyProtocol)})
    return CwAccuracyProtocol(_seeds(f), f.whole("steps", min=1), _cw_configs(f, ("regular",)),
                              f.whole("workers", min=1))


def _seeds(f: Fields, name: str = "seeds", default: Any = ...) -> tuple[int, ...]:
    seeds = f.numbers(name, default)
    if not seeds or any(v < 0 or v != int(v) for v in seeds):
        raise f.error(name, f"expected whole numbers >= 0, got {list(seeds)}")
    if len(set(seeds)) < len(seeds):
        # the same seed twice is the same episode twice, counted twice in every share
        raise f.error(name, f"names a seed twice: {list(seeds)}")
    return tuple(int(v) for v in seeds)


def _cw_gaps(f: Fields) -> CwGapsProtocol:
    from strider.methods.cw.planner import GAP_SEARCHES

    f.reject_unknown({f.name for f in dataclasses.fields(CwGapsProtocol)})
    widths, spacings, lead = f.numbers("widths"), f.numbers("spacings"), f.numbers("lead")
    for key, values in (("widths", widths), ("spacings", spacings)):
        if not values or any(v <= 0 for v in values):
            raise f.error(key, f"expected positive lengths, got {list(values)}")
    if len(lead) != 2 or not 0 < lead[0] <= lead[1]:
        raise f.error("lead", f"expected [low, high] with 0 < low <= high, got {list(lead)}")
    return CwGapsProtocol(widths, spacings, f.whole("walks", min=1), (lead[0], lead[1]),
                          _cw_configs(f, GAP_SEARCHES),
                          f.whole("workers", min=1))


def _cw_realtime(f: Fields) -> CwRealtimeProtocol:
    from strider.courses import load_course
    from strider.methods.cw.planner import GAP_SEARCHES

    f.reject_unknown({f.name for f in dataclasses.fields(CwRealtimeProtocol)})
    course = f.string("course")
    load_course(course)   # an unknown course is refused with the protocol, before any walk
    start = f.numbers("start")
    if len(start) != 2 or not start[0] <= start[1]:
        raise f.error("start", f"expected [low, high] with low <= high, got {list(start)}")
    return CwRealtimeProtocol(course, f.whole("walks", min=1), (start[0], start[1]), _cw_configs(f, GAP_SEARCHES),
                              f.whole("max_steps", min=1))


def _tlc_tasks(f: Fields) -> TlcTasksProtocol:
    from strider.methods.tlc.tasks import CONFIGS, load_task

    f.reject_unknown({"tasks", "workers", "speed"})
    tasks, named = [], f.mapping("tasks")
    for name in named.data:
        t = named.mapping(name)
        t.reject_unknown({"starts", "low", "high", "seconds", "configs"})
        task = load_task(str(name))
        low, high = t.number("low"), t.number("high")
        first, last = task.parameter_range
        if not first <= low <= high <= last:
            raise t.error("low", f"goals must lie within the task's parameter range [{first:.4g}, {last:.4g}] with "
                                 f"low <= high; got [{low:g}, {high:g}]")
        configs = t.raw("configs", ["default"])
        if not isinstance(configs, list) or not configs or any(c not in CONFIGS for c in configs):
            raise t.error("configs", f"expected a list of {', '.join(CONFIGS)}, got {configs!r}")
        tasks.append((task.name, {"starts": t.whole("starts"), "low": low, "high": high,
                                  "seconds": t.number("seconds", positive=True), "configs": tuple(configs)}))
    if not tasks:
        raise f.error("tasks", "name at least one task")
    speed = f.mapping("speed", {})
    speed.reject_unknown({"task", "goal", "seconds", "repeats"})
    speed_task = speed.string("task", None)
    if speed_task is not None:
        task = load_task(speed_task)
        if task.dimensions != 1:
            raise speed.error("task", f"the speed walk takes a task with one parameter, not {task.name}")
        speed_task = task.name
    return TlcTasksProtocol(tuple(tasks), f.whole("workers", min=1), speed_task, speed.number("goal", 0.0),
                            speed.number("seconds", 60.0, positive=True),
                            speed.whole("repeats", _default(TlcTasksProtocol, "speed_repeats"), min=1))


def _tlc_vrwt(f: Fields) -> TlcVrwtProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(TlcVrwtProtocol)})
    return TlcVrwtProtocol(f.numbers("masses", positive=True), f.whole("hits", min=1), f.whole("throw_strike", min=0),
                           f.number("observe", positive=True), f.whole("workers", min=1))


def _tlc_cost(f: Fields) -> TlcCostProtocol:
    from strider.methods.tlc.tasks import CONFIGS, load_task

    f.reject_unknown({f.name for f in dataclasses.fields(TlcCostProtocol)})
    task, config = f.string("task"), f.string("config", "default", choices=CONFIGS)
    load_task(task, config)
    return TlcCostProtocol(task, config, f.whole("workers", min=1))


def _track_mocap(f: Fields) -> TrackMocapProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(TrackMocapProtocol)})
    return TrackMocapProtocol(_clip(f), f.number("seconds", positive=True), f.number("speed_tolerance", positive=True))


def _track_push(f: Fields) -> TrackPushProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(TrackPushProtocol)})
    return TrackPushProtocol(f.string("track"), f.whole("phases", min=1), f.whole("warmup_steps", min=0),
                             f.number("observe_seconds", positive=True), f.whole("min_steps", min=0),
                             f.number("high", positive=True), f.number("resolution", positive=True),
                             _policies(f), _policies(f, "source_policies", allow_none=True))


FRI_POLICIES = ("integral", "constant", "vi")   # the phase tracker's policies a protocol may name


def _policies(f: Fields, key: str = "policies", allow_none: bool = False) -> tuple[str, ...]:
    """FRI policies listed under ``key``; ``allow_none``: the list may be empty or left out."""
    policies = _names(f, key, () if allow_none else None, empty=allow_none)
    unknown = [p for p in policies if p not in FRI_POLICIES]
    if unknown or not (policies or allow_none):
        raise f.error(key, f"must list FRI policies among {', '.join(FRI_POLICIES)}; got {list(policies)}")
    return policies


def _policy(f: Fields, name: str) -> str:
    value = f.string(name)
    if value not in FRI_POLICIES:
        raise f.error(name, f"must be an FRI policy among {', '.join(FRI_POLICIES)}; got {value!r}")
    return value


def _track_extra(f: Fields) -> TrackExtraProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(TrackExtraProtocol)})
    return TrackExtraProtocol(f.string("track"), f.whole("steps", min=1), f.number("seconds", positive=True),
                              _policy(f, "policy"), _policy(f, "baseline"), _clip(f), _edits(f, "lengths"), _edits(f, "slopes"),
                              f.whole("edit_steps", min=1), f.string("jump"), f.whole("jumps", min=1),
                              f.number("jump_seconds", positive=True), _shares(f, "jump_flight"),
                              f.numbers("jump_rates", positive=True),
                              f.numbers("return_map", positive=True), _clip(f, "jump_clip"), _grid(f, "source_grid"))


def _grid(f: Fields, key: str) -> tuple[float, ...]:
    """A VI grid's (phases, rates, actions)."""
    grid = f.numbers(key, positive=True)
    if len(grid) != 3 or any(v != int(v) or v < 2 for v in grid):
        raise f.error(key, f"must be three whole numbers >= 2 (phases, rates, actions), got {list(grid)}")
    return grid


def _shares(f: Fields, key: str) -> tuple[float, ...]:
    values = f.numbers(key)
    if any(not 0.0 <= v <= 1.0 for v in values):
        raise f.error(key, f"each must be a share from 0 to 1, got {list(values)}")
    return values


def _edits(f: Fields, key: str) -> tuple[float, ...]:
    """The rectifier's edits of one kind, each within the range it accepts: ``lengths`` (x the capture's step) or
    ``slopes`` (degrees)."""
    from strider.methods.tracking.rectify import LENGTH_EDIT, SLOPE_EDIT

    (lo, hi), unit = (LENGTH_EDIT, "x the capture's step") if key == "lengths" else (SLOPE_EDIT, "degrees")
    values = f.numbers(key)
    if any(not lo <= x <= hi for x in values):
        raise f.error(key, f"each edit must be within {lo:g} to {hi:g} {unit}; got {list(values)}")
    return values


def _track_baseline(f: Fields) -> TrackBaselineProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(TrackBaselineProtocol)})
    steps = f.whole("steps", min=2)
    push_step = f.whole("push_step", min=1)
    if push_step >= steps:
        raise f.error("push_step", f"must be a step before the last ({steps}), got {push_step}")
    resolution, high = f.number("resolution", positive=True), f.number("high", positive=True)
    if resolution > high:
        raise f.error("resolution", f"must not exceed high ({high:g} N), got {resolution:g}")
    point_foot = f.string("point_foot_track", default="")
    return TrackBaselineProtocol(f.string("track"), steps, push_step, f.number("push_seconds", positive=True),
                                 resolution, high, f.number("max_torque", positive=True), _clamps(f),
                                 _pair(f, "contain"), _pair(f, "nqr_low"), _pair(f, "nqr_high"), point_foot,
                                 f.whole("point_foot_warmup", min=0, default=0),
                                 _choices(f, "nqr_positions", NQR_POSITIONS, "ways of measuring the body's position",
                                          default=("stance",)))


CLAMP_HANDLING = ("clip", "qp", "none")   # the phase tracker's ways with a torque clamp (bench/tracking.py)
NQR_POSITIONS = ("stance", "world")       # where the NQR measures the body from (NqrParams.stance_anchored)


def _clamps(f: Fields) -> tuple[str, ...]:
    return _choices(f, "clamps", CLAMP_HANDLING, "ways of meeting the clamp")


def _choices(f: Fields, key: str, allowed: tuple[str, ...], what: str,
             default: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """A non-empty list of names from ``allowed``."""
    chosen = _names(f, key, default)
    if not chosen or any(c not in allowed for c in chosen):
        raise f.error(key, f"must list {what} among {', '.join(allowed)}; got {list(chosen)}")
    return tuple(chosen)


def _track_slopes(f: Fields) -> TrackSlopesProtocol:
    f.reject_unknown({f.name for f in dataclasses.fields(TrackSlopesProtocol)})
    slopes = f.numbers("slopes")
    if any(abs(s) > 45 for s in slopes):
        raise f.error("slopes", f"must be within +-45 degrees, got {list(slopes)}")
    return TrackSlopesProtocol(f.string("track"), tuple(slopes), f.number("level", positive=True),
                               f.number("slope_length", positive=True), f.number("progress", positive=True),
                               f.number("seconds", positive=True), _policies(f),
                               _policies(f, "source_policies", allow_none=True))


def _clip(f: Fields, key: str = "clip") -> str:
    """A motion file, relative to the current folder (the README runs benchmarks from the repository)."""
    clip = f.string(key)
    if not Path(clip).is_file():
        raise f.error(key, f"no motion file {clip!r} (run from the repository, beside ../shared, or give a path)")
    return clip


def _case(case: Fields) -> tuple[float, float, float]:
    case.reject_unknown({"every", "on_contact", "seconds"})
    every = case.whole("every", min=0)
    contact = _flag(case, "on_contact")
    if every == 0 and not contact:
        raise case.error("every", "a case needs a positive interval, contact events, or both")
    return float(every), float(contact), case.number("seconds", positive=True)


_PARSERS = {"push": _push, "envelope": _envelope, "turning": _turning, "terrain": _terrain, "bodies": _bodies,
            "crates": _crates,
            "speed": _speed, "soak": _soak, "dynamics": _dynamics, "rollout": _rollout,
            "slip-push": _random_push, "slip-terrain": _terrain, "slip-gaits": _slip_gaits, "simbicon-gaits": _simbicon_gaits, "slip-speed": _slip_speed, "slip-dodge": _slip_dodge,
            "cw-accuracy": _cw_accuracy, "cw-gaps": _cw_gaps, "cw-realtime": _cw_realtime, "tlc-tasks": _tlc_tasks, "tlc-cost": _tlc_cost,
            "tlc-vrwt": _tlc_vrwt,
            "track-speed": _track_speed, "track-mocap": _track_mocap, "track-push": _track_push,
            "track-slopes": _track_slopes, "track-extra": _track_extra, "track-baseline": _track_baseline,
            "graph-parallel": _graph_parallel, "graph-learn": _graph_learn, "graph-table2": _graph_learn,
            "graph-speed": _graph_speed, "graph-push": _graph_push,
            "graph-recovery": _graph_recovery, "graph-walks": _graph_walks, "graph-steer": _graph_steer}

# Range checks shared by files and flags: (field, test, problem).
_POSITIVE = ("period", "settle_seconds", "duration", "observe_seconds", "recovery_seconds", "speed_tolerance",
             "find_max_resolution", "max_step_length", "seconds", "profile_seconds", "minutes",
             "scaling_observe_seconds", "scaling_bare_seconds", "push_duration", "memory_every",
             "drift_window_minutes", "lead_in", "interval", "turn_rate", "turn_rate_tolerance",
             "facing_tolerance_deg", "walk_seconds")
_NON_NEGATIVE = ("force", "find_max_low", "scaling_settle_seconds", "push_force_max", "settle_after_change",
                 "steady_from", "feature_at", "finish_past", "settle_periods", "push_force")
_AT_LEAST_ONE = ("directions", "phases", "segments", "scaling_bare_tasks", "scaling_directions", "scaling_phases",
                 "rounds", "calls", "rollouts")


def _check(bench: str, params: Any, error) -> None:
    """Raise ``error(field, problem)`` for the first value out of range."""
    values = dataclasses.asdict(params)
    for key in _POSITIVE:
        if key in values and not values[key] > 0:
            raise error(key, f"must be > 0, got {values[key]}")
    for key in _NON_NEGATIVE:
        if key in values and values[key] < 0:
            raise error(key, f"must be >= 0, got {values[key]}")
    for key in _AT_LEAST_ONE:
        if key in values and (values[key] != int(values[key]) or values[key] < 1):
            raise error(key, f"must be a whole number >= 1, got {values[key]}")
    if bench == "push" and not values["find_max_low"] < values["find_max_high"]:
        raise error("find_max_high", "must be above find_max_low")
    if bench == "envelope" and any(p <= 0 for p in values["periods"]):
        raise error("periods", "must all be > 0")
    if bench == "envelope" and not values["steady_from"] < values["seconds"]:
        raise error("seconds", f"must be above the {values['steady_from']:g} s the steady speed is measured from, "
                               f"got {values['seconds']:g}")
    if bench == "envelope" and not any(abs(v) * t <= values["max_step_length"] + 1e-9
                                       for v in values["speeds"] for t in values["periods"]):
        raise error("speeds", f"and periods give no case with a step length |speed| x period within "
                              f"{values['max_step_length']:g} m")
