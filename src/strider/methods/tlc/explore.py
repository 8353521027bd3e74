"""Exploring the states the step controllers reach (Coros 2010, Sec. 4.4.1, Alg. 1).

Breadth first from the trusted states: every state taken off the frontier is branched once per action and
walked to the next foot strike. An outcome is kept as a transition if it is trusted (within T of a trusted
state) and queued as a new state if it is also novel (farther than N from every state so far). Frontier
states go out in batches to the executors, and the novelty test runs serially over each batch's outcomes
in their order, so the states found do not depend on the worker count (decision). The exploration stops
when a batch adds no novel state, or at its state budget.

The result (:class:`Exploration`) holds, for every state, each action's outcome: the next state, its shift
and turn, the step's duration and whether it fell or left the trusted region. An interrupted exploration
resumes from its checkpoint, written after every batch.
"""

from __future__ import annotations

import os
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from strider.errors import UsageError
from strider.methods.tlc.state import PACKED_WIDTH, DistanceWeights, StrikeStates, distances
from strider.methods.tlc.stepper import StepAction, TaskStepper
from strider.methods.tlc.tasks import Task

KEPT, UNTRUSTED, FELL = 0, 1, 2     # an outcome's kind
SEQUENCE, HIT = -1, -2              # a trusted state's origin, when not an action's limit cycle (its index)
HIT_STEPS = 3                       # steps a seeding throw may take to hit before it is dropped
FORMAT, VERSION = "strider-tlc-exploration", 1
CHECKPOINT_VERSION = 2      # what a checkpoint pickles (2: trusted origins, ball state in snapshots)


@dataclass(frozen=True)
class Exploration:
    """States (packed, :mod:`strider.methods.tlc.state`) and every action's outcome from each."""

    task: str
    character: str
    states: np.ndarray          # (n, PACKED_WIDTH)
    seeded: np.ndarray          # (n,) bool: a trusted seed state
    outcome: np.ndarray         # (n, actions) int8: KEPT, UNTRUSTED or FELL
    next_states: np.ndarray     # (n, actions, PACKED_WIDTH); NaN unless KEPT
    shift: np.ndarray           # (n, actions, 2) m, forward and left
    turn: np.ndarray            # (n, actions) rad
    duration: np.ndarray        # (n, actions) s
    info: dict                  # wall time, workers, batches, why it stopped
    trusted: np.ndarray = field(default_factory=lambda: np.zeros((0, PACKED_WIDTH)))   # every trusted state, packed
    trusted_origin: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))   # cycle action,
    # SEQUENCE or HIT

    def cycle_states(self, action: int) -> np.ndarray:
        """The trusted strikes of ``action``'s limit cycle, packed."""
        return self.trusted[self.trusted_origin == action]

    def __len__(self) -> int:
        return len(self.states)

    def outcome_counts(self) -> dict[str, int]:
        """How many steps were kept, left the trusted states, or fell."""
        return {name: int((self.outcome == kind).sum())
                for name, kind in (("kept", KEPT), ("untrusted", UNTRUSTED), ("fell", FELL))}

    def save(self, path) -> Path:
        from strider.datafile import save_array_file

        header = {"format": FORMAT, "version": VERSION, "task": self.task, "character": self.character,
                  "info": self.info}
        return save_array_file(path, header, {k: getattr(self, k) for k in (
            "states", "seeded", "outcome", "next_states", "shift", "turn", "duration", "trusted", "trusted_origin")})

    @staticmethod
    def load(path) -> Exploration:
        from strider.datafile import load_array_file

        header, a = load_array_file(path, FORMAT, VERSION, "TLC exploration")
        optional = {k: a[k] for k in ("trusted", "trusted_origin") if k in a}   # files before the trusted table
        return Exploration(header["task"], header["character"], a["states"], a["seeded"], a["outcome"],
                           a["next_states"], a["shift"], a["turn"], a["duration"], header["info"], **optional)


@dataclass(frozen=True)
class _Outcome:
    state: np.ndarray | None    # packed; None after a fall
    shift: np.ndarray
    turn: float
    duration: float
    snapshot: object


class _StepperSetup:
    """A worker's context: one stepper, built once (picklable, unlike a closure)."""

    def __init__(self, character: str, balls: tuple = ()):
        self.character, self.balls = character, balls

    def __call__(self) -> TaskStepper:
        return TaskStepper(self.character, balls=self.balls)


def branch_task(task: tuple, stepper: TaskStepper) -> list[_Outcome]:
    """Every action from one state: ``task`` = (snapshot, actions)."""
    snapshot, actions = task
    out = []
    for action in actions:
        stepper.restore(snapshot)
        o = stepper.step(action)
        if o.fell:
            out.append(_Outcome(None, o.shift, o.turn, o.duration, None))
        else:
            out.append(_Outcome(o.strike.state.packed()[0], o.shift, o.turn, o.duration, stepper.snapshot()))
    return out


def trusted_seeds(task: Task, stepper: TaskStepper) -> tuple[list[np.ndarray], list, list[int]]:
    """The trusted states, their snapshots and origins: the last strikes of each action's limit cycle, the
    strikes of short random action sequences from the walk-in (a sequence that falls is dropped), and for a task
    with ball hits, the strike after each hit on the first cycle's walk (a throw that fells it or misses is
    dropped)."""
    seeds = task.trusted
    root = stepper.snapshot()
    states, snaps, origins = [], [], []

    def walk(actions: list[StepAction], keep: int, origin: int) -> None:
        stepper.restore(root)
        got = []
        for a in actions:
            o = stepper.step(a)
            if o.fell:
                return
            got.append((o.strike.state.packed()[0], stepper.snapshot()))
        for state, snap in got[len(got) - keep:]:
            states.append(state)
            snaps.append(snap)
            origins.append(origin)

    for c in seeds.cycles:
        walk([task.actions[c]] * seeds.cycle_steps, seeds.cycle_keep, c)
    rng = np.random.default_rng(task.exploration.seed)
    for _ in range(seeds.sequences):
        picks = rng.integers(0, len(task.actions), seeds.sequence_steps)
        walk([task.actions[i] for i in picks], seeds.sequence_steps, SEQUENCE)
    if seeds.hits.count:
        walking = task.actions[seeds.cycles[0]]
        stepper.restore(root)
        for _ in range(seeds.cycle_steps):
            stepper.step(walking)
        steady = stepper.snapshot()
        for throw in seeds.hits.throws():
            stepper.restore(steady)
            o = stepper.step(walking, throw, ball=seeds.hits.masses.index(throw.mass))
            for _ in range(HIT_STEPS - 1):
                if o.fell or o.hit:
                    break
                o = stepper.step(walking)
            if o.hit and not o.fell:
                stepper.park_ball()
                states.append(o.strike.state.packed()[0])
                snaps.append(stepper.snapshot())
                origins.append(HIT)
    if not states:
        raise UsageError(f"task {task.name}: every trusted seed sequence fell; no state to explore from")
    return states, snaps, origins


class _Progress:
    """The exploration's state between batches (what a checkpoint holds)."""

    def __init__(self, trusted: np.ndarray, origins: np.ndarray, capacity: int):
        self.trusted = trusted
        self.trusted_origin = origins
        self.table = np.empty((capacity, PACKED_WIDTH))    # the states so far, in rows [:known]
        self.known = 0
        self.snaps: list = []
        self.seeded: list[bool] = []
        self.rows: dict[int, list] = {}     # state index -> per-action (kind, next, shift, turn, duration)
        self.next = 0                       # frontier: states[next:] not yet branched
        self.batches = 0
        self.wall = 0.0

    def add_if_novel(self, state: np.ndarray, snap, novel_beyond: float, weights: DistanceWeights,
                     seeded: bool = False) -> bool:
        n = self.known
        if n >= len(self.table):
            return False
        if n and distances(StrikeStates.unpacked(state), StrikeStates.unpacked(self.table[:n]),
                           weights).min() <= novel_beyond:
            return False
        self.table[n] = state
        self.known += 1
        self.snaps.append(snap)
        self.seeded.append(seeded)
        return True


def explore(task: Task, executor, *, checkpoint: Path | None = None, weights: DistanceWeights | None = None,
            progress=None) -> Exploration:
    """Alg. 1 for ``task`` on ``executor``; ``checkpoint`` (a file) makes it resumable. ``progress`` is called
    with (states branched, states known) after each batch."""
    weights = weights or DistanceWeights()
    e = task.exploration
    fingerprint = _fingerprint(task, weights)
    state = _resume(checkpoint, fingerprint)
    if state is None:
        start = time.perf_counter()
        stepper = TaskStepper(task.character, balls=task.trusted.hits.balls())
        seeds, snaps, origins = trusted_seeds(task, stepper)
        state = _Progress(np.array(seeds), np.array(origins, dtype=np.int64), e.max_states)
        for s, snap in zip(seeds, snaps, strict=True):
            state.add_if_novel(s, snap, e.novel_beyond, weights, seeded=True)
        state.wall = time.perf_counter() - start
    trusted = StrikeStates.unpacked(state.trusted)
    while state.next < state.known:
        start = time.perf_counter()
        batch = range(state.next, min(state.known, state.next + e.batch))
        tasks = [(state.snaps[i], task.actions) for i in batch]
        results = [r for _, r in executor.map(branch_task, tasks, ordered=True)]
        for i, outcomes in zip(batch, results, strict=True):
            row = []
            for o in outcomes:
                if o.state is None:
                    row.append((FELL, None, o.shift, o.turn, o.duration))
                    continue
                s = StrikeStates.unpacked(o.state)
                if distances(s, trusted, weights).min() >= e.trusted_within:
                    row.append((UNTRUSTED, None, o.shift, o.turn, o.duration))
                    continue
                row.append((KEPT, o.state, o.shift, o.turn, o.duration))
                state.add_if_novel(o.state, o.snapshot, e.novel_beyond, weights)
            state.rows[i] = row
            state.snaps[i] = None           # branched: its snapshot is no longer needed
        state.next = batch.stop
        state.batches += 1
        state.wall += time.perf_counter() - start
        _save_checkpoint(checkpoint, fingerprint, state)
        if progress is not None:
            progress(state.next, state.known)
    reason = "state budget reached" if state.known >= e.max_states else "no novel state left"
    return _result(task, state, {"wall_seconds": state.wall, "batches": state.batches, "stopped": reason,
                                 "workers": getattr(executor, "workers", 1),
                                 "trusted_seeds": len(state.trusted)})


def _result(task: Task, state: _Progress, info: dict) -> Exploration:
    n, a = state.known, len(task.actions)
    outcome = np.zeros((n, a), dtype=np.int8)
    next_states = np.full((n, a, PACKED_WIDTH), np.nan)
    shift, turn, duration = np.zeros((n, a, 2)), np.zeros((n, a)), np.zeros((n, a))
    for i, row in state.rows.items():
        for j, (kind, nxt, sh, tu, du) in enumerate(row):
            outcome[i, j] = kind
            if nxt is not None:
                next_states[i, j] = nxt
            shift[i, j], turn[i, j], duration[i, j] = sh, tu, du
    return Exploration(task.name, task.character, state.table[:n].copy(), np.array(state.seeded), outcome,
                       next_states, shift, turn, duration, info, state.trusted, state.trusted_origin)


def _fingerprint(task: Task, weights: DistanceWeights) -> str:
    from strider.parallel.sweep import fingerprint

    return fingerprint(Path(task.source).read_text(), task.config, repr(weights), VERSION, CHECKPOINT_VERSION)


def _resume(path: Path | None, fingerprint: str) -> _Progress | None:
    if path is None or not path.exists():
        return None
    try:
        with path.open("rb") as f:
            saved_fingerprint, state = pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError):
        raise UsageError(f"{path}: not a readable exploration checkpoint; delete it to start again") from None
    if saved_fingerprint != fingerprint:
        raise UsageError(f"{path}: checkpoint of a different task file or strider version; delete it to start "
                         "again")
    return state


def _save_checkpoint(path: Path | None, fingerprint: str, state: _Progress) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("wb") as f:
        pickle.dump((fingerprint, state), f, protocol=pickle.HIGHEST_PROTOCOL)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def worker_setup(task: Task) -> _StepperSetup:
    """The executor's ``setup`` for exploring ``task``: its character, with its balls in the scene."""
    return _StepperSetup(task.character, task.trusted.hits.balls())
