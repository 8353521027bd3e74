"""Tasks of task-level control (Coros 2010, Sec. 4.5): what a policy is asked to do, as data files.

A task file names the character, the step actions (V_d, turn, T), how the trusted states are seeded, the
exploration thresholds and budget (Table 4.2), the task parameter's samples, the value-iteration settings
and what counts as success. The task's kind says how its parameter w moves when the character takes a step
(instancing, Sec. 4.4.2: the dynamics do not depend on where the character is or which way it faces, so a
step's shift and turn carry w to w′ for every sample at once):

* ``goal-distance`` (GLT, Sec. 4.5.1): w is the goal's distance ahead along the facing direction, m;
  w′ = w − the step's forward shift. Success: within ``within`` of the goal, slower than ``speed_below``.
* ``heading`` (HT, Sec. 4.5.2): w is the desired heading relative to the facing, rad; w′ = w − the step's turn.
  Success: within ``within`` of it while walking forward faster than ``speed_above``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from strider.datafile import Fields, load_yaml, resolve_data_file
from strider.methods.tlc.state import StrikeStates
from strider.methods.tlc.stepper import StepAction

TASK_DIR = Path(__file__).parent / "data" / "tasks"
KINDS = ("goal-distance", "heading")
CONFIGS = ("default", "source")   # strider's exploration thresholds, or the thesis' (Table 4.2)


@dataclass(frozen=True)
class TrustedSeeds:
    """How the trusted states are made (Sec. 4.4.1: limit cycles plus a few short action sequences)."""

    cycles: tuple[int, ...]      # indices of actions walked repeatedly to their limit cycles
    cycle_steps: int = 8
    cycle_keep: int = 3          # the last strikes of each cycle are trusted
    sequences: int = 5
    sequence_steps: int = 5


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
    blend: bool = True                 # the runtime blends the commands of the two nearest task samples


@dataclass(frozen=True)
class Success:
    within: float                # m (goal-distance) or rad (heading)
    speed_below: float = np.inf  # m/s, forward, goal-distance
    speed_above: float = -np.inf  # m/s, forward, heading


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
    samples: np.ndarray          # the task parameter's sample values, increasing
    solve: SolveParams
    success: Success
    source: str

    @property
    def periodic(self) -> bool:
        return self.kind == "heading"

    @property
    def parameter_range(self) -> tuple[float, float]:
        """The goals a policy of this task can be asked for: between the end samples, or any heading."""
        if self.periodic:
            return -np.pi, np.pi
        return float(self.samples[0]), float(self.samples[-1])

    def after(self, w: np.ndarray, shift: np.ndarray, turn: np.ndarray) -> np.ndarray:
        """w′ for task parameters ``w`` after steps of ``shift`` (..., 2) and ``turn`` (...)."""
        if self.kind == "goal-distance":
            return w - shift[..., 0]
        return np.angle(np.exp(1j * (w - turn)))

    def succeeded(self, w: np.ndarray, forward_speed: np.ndarray) -> np.ndarray:
        s = self.success
        return ((np.abs(w) <= s.within) & (forward_speed < s.speed_below) & (forward_speed > s.speed_above))

    def bracket(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The samples on either side of each ``w`` and the share of the way to the upper one (beyond the
        samples: the end sample; a periodic parameter wraps)."""
        x = self.samples
        w = np.asarray(w, dtype=float)
        if self.periodic:
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

    def forward_speed(self, states: StrikeStates) -> np.ndarray:
        return states.velocity[:, 0]


def _samples(f: Fields, kind: str) -> np.ndarray:
    """Denser near the goal (Sec. 4.5): |w| grows as the ``density`` power of evenly spaced values."""
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
                      "samples", "solve", "success"})
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
    trusted = TrustedSeeds(cycles, t.whole("cycle_steps", 8, min=2), t.whole("cycle_keep", 3),
                           t.whole("sequences", 5, min=0), t.whole("sequence_steps", 5))
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
                        s.whole("neighbours", 6), s.flag("blend", True))
    c = f.mapping("success")
    below, above = c.number("speed_below", None), c.number("speed_above", None)
    success = Success(c.number("within", positive=True), np.inf if below is None else below,
                      -np.inf if above is None else above)
    return Task(f.string("name"), f.string("description"), kind, f.string("character", "bipv3"), tuple(actions),
                trusted, exploration, config, _samples(f.mapping("samples"), kind), solve, success, str(path))
