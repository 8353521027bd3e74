"""Tasks of task-level control (Coros 2010, Sec. 4.5): what a policy is asked to do, as data files.

A task file names the character, the step actions (V_d, turn, T), how the trusted states are seeded, the
exploration thresholds and budget (Table 4.2), the task parameter's samples, the value-iteration settings
and what counts as success. The task's kind says how its parameter w moves when the character takes a step
(instancing, Sec. 4.4.2: the dynamics do not depend on where the character is or which way it faces, so a
step's shift and turn carry w to w′ for every sample at once):

* ``goal-distance`` (GLT, Sec. 4.5.1): w is the goal's distance ahead along the facing direction, m;
  w′ = w − the step's forward shift. Success: within ``within`` of the goal, the forward speed between
  ``speed_above`` and ``speed_below``.
* ``heading`` (HT, Sec. 4.5.2): w is the desired heading relative to the facing, rad; w′ = w − the step's turn.
  Success: within ``within`` of it while walking forward faster than ``speed_above``.
* ``goal-point`` (GPT, Sec. 4.5.3): w = (forward, left) is the goal's position in the character's frame, m;
  w′ = the goal seen from the next strike's frame, R(−turn)(w − shift). Success: within ``within`` of it while
  walking in place (forward speed between ``speed_above`` and ``speed_below``). A turn penalty shapes the reward
  near the goal (``shaping``).
* ``steady-walk`` (VRWT, Sec. 4.5.6): no task parameter; the reward is 1 for a step that ends near the steady
  walk (within ``steady.within`` of a trusted strike of its limit cycle) and 0 otherwise, a fall included. Its
  trusted states add the strikes that follow hits by thrown balls (``trusted.hits``).

A task parameter of D dimensions is sampled on a product grid of per-axis samples (``axes``); a value between
samples is interpolated multilinearly from the 2^D grid points around it (:meth:`Task.corners`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from strider.datafile import Fields, load_yaml, resolve_data_file
from strider.methods.tlc.state import StrikeStates
from strider.methods.tlc.stepper import StepAction
from strider.runner.throws import Throw

TASK_DIR = Path(__file__).parent / "data" / "tasks"
KINDS = ("goal-distance", "heading", "goal-point", "steady-walk")
DIMENSIONS = {"goal-distance": 1, "heading": 1, "goal-point": 2, "steady-walk": 0}
CONFIGS = ("default", "source")   # strider's exploration thresholds, or the thesis' (Table 4.2)


@dataclass(frozen=True)
class BallHits:
    """Balls thrown at the steady walk to seed trusted states (Sec. 4.5.6): ``count`` per mass, from random
    directions at random moments of a step, ``speed`` m/s from ``distance`` m at the centre of mass."""

    masses: tuple[float, ...] = ()
    count: int = 0
    radius: float = 0.12
    speed: float = 6.0
    distance: float = 1.0
    seed: int = 0

    def balls(self) -> tuple[Throw, ...]:
        """One ball per mass, for the scene (:class:`~strider.methods.tlc.stepper.TaskStepper`)."""
        return tuple(Throw(0.0, 0.0, self.distance, self.distance / self.speed, self.radius, m) for m in self.masses)

    def random_throw(self, rng: np.random.Generator, mass: float) -> Throw:
        """A ball of ``mass`` kg shaped and aimed as these, from a random direction, leaving a random ``time``
        within a step after a strike."""
        return Throw(float(rng.uniform(0.0, MAX_THROW_DELAY)), float(rng.uniform(-180.0, 180.0)), self.distance,
                     self.distance / self.speed, self.radius, mass)

    def throws(self) -> list[Throw]:
        """The seeding throws in order (deterministic in ``seed``)."""
        rng = np.random.default_rng(self.seed)
        return [self.random_throw(rng, m) for m in self.masses for _ in range(self.count)]


MAX_THROW_DELAY = 0.4   # s after a strike: within a 0.5 s step, so the ball leaves before the next strike


@dataclass(frozen=True)
class SteadyWalk:
    cycle: int                   # the action whose limit cycle is the steady walk
    within: float                # of a trusted strike of it (Table 4.1's distance)


@dataclass(frozen=True)
class TrustedSeeds:
    """How the trusted states are made (Sec. 4.4.1: limit cycles plus a few short action sequences)."""

    cycles: tuple[int, ...]      # indices of actions walked repeatedly to their limit cycles
    cycle_steps: int = 8
    cycle_keep: int = 3          # the last strikes of each cycle are trusted
    sequences: int = 5
    sequence_steps: int = 5
    hits: BallHits = BallHits()


@dataclass(frozen=True)
class ExplorationParams:
    trusted_within: float        # T of Table 4.2
    novel_beyond: float          # N of Table 4.2
    max_states: int              # 2 x Table 4.2's |s| (decision)
    batch: int = 256             # frontier states simulated at once (decision)
    seed: int = 0                # of the seeding sequences' random actions


@dataclass(frozen=True)
class SolveParams:
    discount_per_second: float = 0.9   # gamma (decision: not in the thesis)
    smoothing: float = 0.8             # alpha of Alg. 2 (Sec. 4.4.3)
    sweeps: int = 60                   # 50-70 in Sec. 4.4.3
    neighbours: int = 6                # k of the value interpolation (Sec. 4.4.3)
    blend: bool = True                 # the runtime blends the commands of the grid points around w
    # strider's: the runtime blends the commands of this many explored states nearest a strike, weighted 1/d^2 as
    # the value interpolation weighs them (1: the nearest state's alone, the thesis')
    runtime_neighbours: int = 1


@dataclass(frozen=True)
class Success:
    within: float                # m (goal-distance, goal-point: of the goal) or rad (heading)
    speed_below: float = np.inf  # m/s, forward
    speed_above: float = -np.inf  # m/s, forward


@dataclass(frozen=True)
class TurnPenalty:
    """Reward shaping (Sec. 4.5.3): near the goal, every radian a step turns costs ``per_radian``, so the policy
    does not turn and side-step to stop sooner."""

    per_radian: float = 0.0
    within: float = 0.0          # m of the goal


@dataclass(frozen=True)
class Task:
    name: str
    description: str
    kind: str
    character: str
    actions: tuple[StepAction, ...]
    trusted: TrustedSeeds
    exploration: ExplorationParams
    config: str                  # which thresholds ``exploration`` holds (:data:`CONFIGS`)
    axes: tuple[np.ndarray, ...]  # the task parameter's sample values per dimension, each increasing
    solve: SolveParams
    success: Success
    source: str
    shaping: TurnPenalty = TurnPenalty()
    steady: SteadyWalk | None = None     # steady-walk tasks
    failure_reward: float = -1.0         # a fall or an untrusted outcome (VRWT: 0, Sec. 4.5.6)

    def file_name(self, kind: str) -> str:
        """The name of this task's ``kind`` file ('exploration', 'policy'): TASK[-CONFIG].KIND.npz."""
        suffix = "" if self.config == "default" else f"-{self.config}"
        return f"{self.name}{suffix}.{kind}.npz"

    @property
    def periodic(self) -> bool:
        return self.kind == "heading"

    @property
    def dimensions(self) -> int:
        return len(self.axes)

    @property
    def has_goal(self) -> bool:
        return self.dimensions > 0

    @property
    def samples(self) -> np.ndarray:
        """The grid's points: (m,) for a one-dimensional parameter, else (m, D), the last axis varying fastest;
        without a parameter, one point of no dimensions."""
        if self.dimensions == 1:
            return self.axes[0]
        if self.dimensions == 0:
            return np.zeros((1, 0))
        return np.stack(np.meshgrid(*self.axes, indexing="ij"), axis=-1).reshape(-1, self.dimensions)

    @property
    def parameter_range(self) -> tuple[float, float]:
        """The goals a policy of this task can be asked for, per dimension: between the end samples, or any
        heading."""
        if self.periodic:
            return -np.pi, np.pi
        if not self.has_goal:
            return 0.0, 0.0
        return float(min(a[0] for a in self.axes)), float(max(a[-1] for a in self.axes))

    def with_runtime_neighbours(self, k: int) -> Task:
        """This task with its runtime blending the commands of the ``k`` nearest explored states (1: the thesis')."""
        return replace(self, solve=replace(self.solve, runtime_neighbours=k))

    def after(self, w: np.ndarray, shift: np.ndarray, turn: np.ndarray) -> np.ndarray:
        """w′ for task parameters ``w`` ((...) or (..., D)) after steps of ``shift`` (..., 2) and ``turn`` (...)."""
        if self.kind == "goal-distance":
            return w - shift[..., 0]
        if self.kind == "heading":
            return np.angle(np.exp(1j * (w - turn)))
        if self.kind == "steady-walk":
            return np.zeros(np.broadcast_shapes(np.shape(turn), np.shape(w)[:-1]) + (0,))
        d = w - shift
        c, s = np.cos(turn), np.sin(turn)
        return np.stack([c * d[..., 0] + s * d[..., 1], -s * d[..., 0] + c * d[..., 1]], axis=-1)

    def distance_to_goal(self, w: np.ndarray) -> np.ndarray:
        """|w|: m or rad from success's centre (the norm over a parameter's dimensions)."""
        return np.linalg.norm(w, axis=-1) if self.dimensions > 1 else np.abs(w)

    def succeeded(self, w: np.ndarray, forward_speed: np.ndarray) -> np.ndarray:
        s = self.success
        return ((self.distance_to_goal(w) <= s.within) & (forward_speed < s.speed_below)
                & (forward_speed > s.speed_above))

    def reward(self, w: np.ndarray, w_next: np.ndarray, forward_speed: np.ndarray, turn: np.ndarray,
               steady: np.ndarray | None = None) -> np.ndarray:
        """A step's reward from parameter ``w`` to ``w_next``: 1 on success, less the turn penalty near the goal;
        for a steady walk, 1 where ``steady`` (the step ends near the steady walk). A fall or an untrusted
        outcome (:attr:`failure_reward`) is the solver's."""
        if self.kind == "steady-walk":
            return np.broadcast_to(np.asarray(steady, dtype=float), np.shape(w_next)[:-1]).copy()
        r = self.succeeded(w_next, forward_speed).astype(float)
        if self.shaping.per_radian:
            r = r - self.shaping.per_radian * np.abs(turn) * (self.distance_to_goal(w) < self.shaping.within)
        return r

    def corners(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The grid points around each ``w`` ((...) or (..., D)) and their multilinear weights, each (..., 2^D);
        an index counts points as :attr:`samples` lists them."""
        w = np.asarray(w, dtype=float)
        if self.dimensions == 0:
            return np.zeros(w.shape[:-1] + (1,), dtype=np.int64), np.ones(w.shape[:-1] + (1,))
        if self.dimensions == 1:
            lo, hi, t = self.bracket(w)
            return np.stack([lo, hi], axis=-1), np.stack([1.0 - t, t], axis=-1)
        index = np.zeros(w.shape[:-1] + (1,), dtype=np.int64)
        weight = np.ones(w.shape[:-1] + (1,))
        for d, axis in enumerate(self.axes):
            lo, hi, t = _bracket(axis, w[..., d], False)
            index = np.concatenate([index * len(axis) + lo[..., None], index * len(axis) + hi[..., None]], axis=-1)
            weight = np.concatenate([weight * (1.0 - t)[..., None], weight * t[..., None]], axis=-1)
        return index, weight

    def bracket(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For a one-dimensional parameter: the samples on either side of each ``w`` and the share of the way to
        the upper one (beyond the samples: the end sample; a periodic parameter wraps)."""
        return _bracket(self.axes[0], w, self.periodic)

    def forward_speed(self, states: StrikeStates) -> np.ndarray:
        return states.velocity[:, 0]


def _bracket(x: np.ndarray, w: np.ndarray, periodic: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The samples of ``x`` on either side of each ``w`` and the share of the way to the upper one."""
    w = np.asarray(w, dtype=float)
    if periodic:
        span = 2 * np.pi
        w = x[0] + np.mod(w - x[0], span)
        hi = np.searchsorted(x, w, side="right") % len(x)
        lo = (hi - 1) % len(x)
        gap = np.mod(x[hi] - x[lo], span)
        gap = np.where(gap == 0, span, gap)
        return lo, hi, np.clip(np.mod(w - x[lo], span) / gap, 0.0, 1.0)
    w = np.clip(w, x[0], x[-1])
    hi = np.clip(np.searchsorted(x, w, side="right"), 1, len(x) - 1)
    lo = hi - 1
    return lo, hi, (w - x[lo]) / (x[hi] - x[lo])


def _samples(f: Fields, kind: str) -> np.ndarray:
    """Denser near the goal (Sec. 4.5): |w| grows as the ``density`` power of evenly spaced values. A goal point's
    grid is square: these samples on both axes."""
    count = f.whole("count", min=3)
    density = f.number("density", 1.0, min=1.0, max=4.0)
    if kind == "heading":
        u = np.linspace(-1.0, 1.0, count, endpoint=False) + 1.0 / count
        return np.sign(u) * np.pi * np.abs(u) ** density
    low, high = f.number("low", max=0.0), f.number("high", min=0.0)
    if high - low <= 0:
        raise f.error("high", "must be above low")
    below = max(1, round((count - 1) * -low / (high - low)))
    above = count - 1 - below
    neg = low * (np.arange(below, 0, -1) / below) ** density
    pos = high * (np.arange(1, above + 1) / max(above, 1)) ** density
    return np.concatenate([neg, [0.0], pos])


def load_task(name: str, config: str = "default") -> Task:
    """A shipped task by name (GLT, HT, ...; case-insensitive) or a task file by path. ``config`` 'source' takes
    the thesis' exploration thresholds (the file's ``exploration.thesis``) in place of strider's."""
    from strider.errors import UsageError

    if config not in CONFIGS:
        raise UsageError(f"--config must be one of {', '.join(CONFIGS)}; got {config!r}")
    path = resolve_data_file(name.lower() if not name.endswith((".yaml", ".yml")) else name, TASK_DIR, "task")
    f = Fields(load_yaml(path), str(path))
    f.reject_unknown({"name", "description", "kind", "character", "actions", "trusted", "exploration",
                      "samples", "solve", "success", "shaping", "steady", "failure_reward"})
    kind = f.string("kind", choices=KINDS)
    rows = f.raw("actions")
    if not isinstance(rows, list):
        raise f.error("actions", f"expected a list of [V_d m/s, turn rad, T s], got {rows!r}")
    actions = []
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != 3:
            raise f.error(f"actions[{i}]", f"expected [V_d m/s, turn rad, T s], got {row!r}")
        speed, turn, period = Fields({"a": row}, f.source).vector("a", 3)
        if not 0.2 <= period <= 1.0:
            raise f.error(f"actions[{i}]", f"step period must lie in [0.2, 1] s, got {period}")
        actions.append(StepAction(speed, turn, period))
    if len(actions) < 2:
        raise f.error("actions", "a task needs at least two actions to choose between")
    t = f.mapping("trusted")
    cycles = t.raw("cycles")
    if (not isinstance(cycles, list) or not cycles
            or any(isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < len(actions) for c in cycles)):
        raise t.error("cycles", f"expected a list of action indices in [0, {len(actions)}), got {cycles!r}")
    cycles = tuple(cycles)
    hits = BallHits()
    if "hits" in t.data:
        b, like = t.mapping("hits"), BallHits()
        hits = BallHits(b.numbers("masses", positive=True), b.whole("count", min=1),
                        b.number("radius", like.radius, positive=True), b.number("speed", like.speed, positive=True),
                        b.number("distance", like.distance, positive=True), b.whole("seed", 0, min=0))
    trusted = TrustedSeeds(cycles, t.whole("cycle_steps", 8, min=2), t.whole("cycle_keep", 3),
                           t.whole("sequences", 5, min=0), t.whole("sequence_steps", 5), hits)
    e = f.mapping("exploration")
    thresholds = (e.number("trusted_within", positive=True), e.number("novel_beyond", positive=True))
    if config == "source":
        thresholds = e.vector("thesis", 2)
        if min(thresholds) <= 0:
            raise e.error("thesis", f"thresholds must be > 0, got {list(thresholds)}")
    exploration = ExplorationParams(*thresholds, e.whole("max_states", min=2), e.whole("batch", 256),
                                    e.whole("seed", 0, min=0))
    s = f.mapping("solve", {})
    solve = SolveParams(s.number("discount_per_second", 0.9, positive=True, max=0.999),
                        s.number("smoothing", 0.8, positive=True, max=1.0), s.whole("sweeps", 60),
                        s.whole("neighbours", 6), s.flag("blend", True), s.whole("runtime_neighbours", 1, min=1))
    success = Success(np.inf)               # a steady walk's reward is ``steady``'s
    if kind != "steady-walk":
        c = f.mapping("success")
        below, above = c.number("speed_below", None), c.number("speed_above", None)
        success = Success(c.number("within", positive=True), np.inf if below is None else below,
                          -np.inf if above is None else above)
    steady = None
    if kind == "steady-walk":
        walk = f.mapping("steady")
        cycle = walk.whole("cycle", min=0)
        if cycle not in cycles:
            raise walk.error("cycle", f"must be one of the trusted cycles {list(cycles)}, got {cycle}")
        steady = SteadyWalk(cycle, walk.number("within", positive=True))
    sampled = _samples(f.mapping("samples"), kind) if kind != "steady-walk" else None
    h = f.mapping("shaping", {})
    shaping = TurnPenalty(h.number("turn_penalty", 0.0, min=0.0), h.number("within", 0.0, min=0.0))
    return Task(f.string("name"), f.string("description"), kind, f.string("character", "bipv3"), tuple(actions),
                trusted, exploration, config, (sampled,) * DIMENSIONS[kind], solve, success, str(path), shaping,
                steady, f.number("failure_reward", -1.0, max=0.0))
