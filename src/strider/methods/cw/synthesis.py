"""Offline synthesis of CW examples (seed 000, Sec. 3.3.2): a base gait adapted, step by step, to random
stepping stones by a windowed optimization.

For a sequence of desired step lengths l_i ~ U[0.1, 0.9] m, stone i lies at
x_i^d = x_{i-1}^d + l_i from the first stance heel. Over a window of three
steps the actions A_1..A_3 minimize

    f = sum_i (x_i - x_i^d)^2 + gamma (A_i - A_base)^T W (A_i - A_base)

where x_i is where the i-th step's heel lands; the first action is taken, the
window slides by one step and starts from the previous solution, shifted. A
3-D walker's f adds (z_i - z^d)^2 per step, z_i the lateral spacing of its
feet and z^d = 15 cm (Sec. 3.3.3), which keeps the optimization out of the
actions that disturb it sideways.

The source descends along centred finite differences with a bisection line
search. f is a sum of squares, so strider takes Gauss-Newton steps instead
(Levenberg-Marquardt damping, the same line search), with one-sided
differences whose rollouts branch the episode where a perturbed action first
acts: perturbing A_3 replays one step, not three. ``max_iterations`` bounds
the iterations per window (the source: at most 15, 11.9 on average).

Each taken step is one example (s, A, s', l): the reduced state at the strike
it starts from, its action, the state at the strike it ends on, and the step
length it made. On a fall the sequence ends and its last ``drop_on_fall``
examples are dropped (Sec. 3.3.2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider.errors import UsageError
from strider.methods.cw.actions import action_space
from strider.methods.cw.stepping import StepRunner, check_walker

COLUMNS = ("states", "actions", "next_states", "lengths", "desired", "errors")   # of an example set
FALL_RESIDUAL = 10.0   # m: a window that falls scores as if each of its steps missed by this much
SOURCE_GAMMA = 0.1     # the action term's weight, 2-D and 3-D (seed 000, Sec. 3.3.2)


@dataclass(frozen=True)
class SynthesisParams:
    window: int = 3                    # steps (Sec. 3.3.2)
    min_length: float = 0.1            # m (Sec. 3.3)
    max_length: float = 0.9            # m (Sec. 3.3)
    warmup_steps: int = 6              # base-gait steps from standing before the first stone
    max_iterations: int = 3            # Gauss-Newton iterations per window
    line_search_halvings: int = 3      # bisection of a step that does not lower f
    damping: float = 1e-3              # Levenberg-Marquardt damping, relative to the normal matrix's trace
    difference: float = 0.02           # finite-difference step, as a share of each action bound's range
    drop_on_fall: int = 5              # examples dropped before a fall (Sec. 3.3.2)
    lateral_spacing: float = 0.15      # m: z^d, a 3-D walker's lateral foot spacing (Sec. 3.3.3)
    # gamma, the weight of the actions' distance from the base gait. A smaller one lands the optimized steps
    # nearer their stones but plans worse: 2000 examples at 0.01 landed 2.7 cm from their stones on average (87%
    # within 6 cm; the source's 0.1: 6.4 cm, 70%), yet with them the planned walks drifted off the stones for good
    # on 2 of the accuracy bench's 5 sequences and cleared 7 of Table 3.1's 16 cells (0.1: 10). Its sequences fell
    # 40 times in 48 (0.1: 16 in 31), so its examples crowd the states before a fall.
    gamma: float = SOURCE_GAMMA
    early_touchdown: float | None = None   # SIMBICON's switch (None: the source's state machine)


@dataclass
class Examples:
    """(s, A, s', l) per step, plus the desired length and the heel landing error."""

    states: np.ndarray
    actions: np.ndarray
    next_states: np.ndarray
    lengths: np.ndarray
    desired: np.ndarray
    errors: np.ndarray

    @staticmethod
    def empty(action_size: int) -> Examples:
        return Examples(np.zeros((0, 5)), np.zeros((0, action_size)), np.zeros((0, 5)), np.zeros(0), np.zeros(0),
                        np.zeros(0))

    @staticmethod
    def concatenate(parts: list[Examples]) -> Examples:
        """The examples of ``parts`` (at least one) in order."""
        return Examples(*(np.concatenate([getattr(p, k) for p in parts]) for k in COLUMNS))

    def __len__(self) -> int:
        return len(self.lengths)


def _rollout(runner: StepRunner, actions: np.ndarray, snaps: list | None = None) -> np.ndarray | None:
    """(heel x, lateral spacing) of each step taken with ``actions`` from where the runner is; None on a fall.
    With ``snaps``, the snapshot before each step is appended to it."""
    landings = []
    for a in actions:
        if snaps is not None:
            snaps.append(runner.snapshot())
        before = runner.last.lateral
        out = runner.step(a)
        if out.fell:
            return None
        landings.append((out.strike.heel, abs(out.strike.lateral - before)))
    return np.array(landings).reshape(-1, 2)


class WindowOptimizer:
    def __init__(self, runner: StepRunner, params: SynthesisParams):
        self.runner, self.params = runner, params
        self.space = runner.actions
        self.base = self.space.base(runner.base)
        self.scale = np.sqrt(params.gamma * self.space.weights)
        self.h = params.difference * (self.space.high - self.space.low)
        self.lateral = not runner.character.planar

    def _residuals(self, landings: np.ndarray | None, actions: np.ndarray, targets: np.ndarray) -> np.ndarray:
        n = len(targets)
        if landings is None:
            misses = np.full(2 * n if self.lateral else n, FALL_RESIDUAL)
        else:
            misses = landings[:, 0] - targets
            if self.lateral:
                misses = np.concatenate([misses, landings[:, 1] - self.params.lateral_spacing])
        return np.concatenate([misses, ((actions - self.base) * self.scale).ravel()])

    def evaluate(self, start, actions: np.ndarray, targets: np.ndarray, snaps: list | None = None):
        self.runner.restore(start)
        landings = _rollout(self.runner, actions, snaps)
        return landings, self._residuals(landings, actions, targets)

    def solve(self, start, actions: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, float]:
        """Gauss-Newton from ``actions`` (window x action size) from the snapshot ``start``; the best actions and
        f."""
        p, n, size = self.params, len(targets), self.space.size
        low, high = self.space.low, self.space.high
        actions = np.clip(actions, low, high)
        snaps: list = []
        landings, r = self.evaluate(start, actions, targets, snaps)
        cost = float(r @ r)
        for _ in range(p.max_iterations):
            if landings is None:
                break   # no gradient through a fall: keep the best found
            jac = np.zeros((len(r), actions.size))
            for k in range(actions.size):
                i, j = divmod(k, size)
                trial = actions.copy()
                up = actions[i, j] + self.h[j]
                trial[i, j] = up if up <= high[j] else actions[i, j] - self.h[j]   # step back from an upper bound
                delta = trial[i, j] - actions[i, j]
                # Steps before i are unchanged: branch from the strike where the changed action first acts.
                self.runner.restore(snaps[i])
                tail = _rollout(self.runner, trial[i:])
                full = None if tail is None else np.concatenate([landings[:i], tail])
                jac[:, k] = (self._residuals(full, trial, targets) - r) / delta
            normal = jac.T @ jac
            grad = jac.T @ r
            step = -np.linalg.solve(normal + p.damping * np.trace(normal) / len(normal) * np.eye(len(normal)), grad)
            improved = False
            for _ in range(p.line_search_halvings + 1):
                trial = np.clip(actions + step.reshape(n, size), low, high)
                trial_snaps: list = []
                l2, r2 = self.evaluate(start, trial, targets, trial_snaps)
                c2 = float(r2 @ r2)
                if c2 < cost:
                    actions, landings, r, cost, snaps, improved = trial, l2, r2, c2, trial_snaps, True
                    break
                step *= 0.5
            if not improved:
                break
        return actions, cost


def stepping_stones(first_heel: float, seed: int, count: int, params: SynthesisParams = SynthesisParams()
                    ) -> np.ndarray:
    """Where ``count`` random stones lie (heel positions) past ``first_heel``: lengths U[min, max] from ``seed``."""
    rng = np.random.default_rng(seed)
    return first_heel + np.cumsum(rng.uniform(params.min_length, params.max_length, count))


def synthesize_sequence(seed: int, steps: int, params: SynthesisParams = SynthesisParams(),
                        gait: str = "walk", character: str = "planar7") -> tuple[Examples, bool]:
    """One random stepping-stone sequence of ``steps`` stones: its examples, and whether it ended in a fall."""
    runner = StepRunner(character, gait, seed=seed, early_touchdown=params.early_touchdown)
    if not runner.warm_up(params.warmup_steps):
        return Examples.empty(runner.actions.size), True
    opt = WindowOptimizer(runner, params)
    stones = stepping_stones(runner.last.heel, seed, steps + params.window, params)
    plan = np.tile(opt.base, (params.window, 1))
    rows: list[tuple] = []
    fell = False
    for i in range(steps):
        start = runner.snapshot()
        before = runner.last
        plan, _ = opt.solve(start, plan, stones[i:i + params.window])
        runner.restore(start)
        out = runner.step(plan[0])
        if out.fell:
            fell = True
            rows = rows[:max(0, len(rows) - params.drop_on_fall)]
            break
        rows.append((before.state, plan[0], out.strike.state, out.strike.heel - before.heel, stones[i] - before.heel,
                     out.strike.heel - stones[i]))
        plan = np.vstack([plan[1:], opt.base])
    if not rows:
        return Examples.empty(runner.actions.size), fell
    s, a, s2, l, d, e = (np.array(col) for col in zip(*rows))
    return Examples(s, a, s2, l, d, e), fell


EXAMPLES_FORMAT = "strider-cw-examples"
EXAMPLES_VERSION = 1
STEPS_PER_SEQUENCE = 100     # stones per random sequence (Sec. 3.6: 100-step sequences)
BARREN_SEQUENCES = 8         # sequences in a row without an example before synthesis gives up: the walker cannot walk


@dataclass(frozen=True)
class SequenceTask:
    seed: int
    steps: int
    params: SynthesisParams
    gait: str
    character: str


def sequence_task(task: SequenceTask, context=None) -> dict:
    """One sequence in a worker, as plain lists (a sweep's results pass through JSON)."""
    examples, fell = synthesize_sequence(task.seed, task.steps, task.params, task.gait, task.character)
    return {"fell": fell, **{k: getattr(examples, k).tolist() for k in COLUMNS}}


def _examples(record: dict, action_size: int) -> Examples:
    shapes = {"states": (-1, 5), "actions": (-1, action_size), "next_states": (-1, 5)}
    return Examples(*(np.asarray(record[k], dtype=float).reshape(shapes.get(k, (-1,))) for k in COLUMNS))


def synthesize(examples: int, executor, *, seed: int = 0, params: SynthesisParams = SynthesisParams(),
               gait: str = "walk", character: str = "planar7", steps_per_sequence: int = STEPS_PER_SEQUENCE,
               checkpoint: str | None = None, progress: bool = False) -> tuple[Examples, dict]:
    """At least ``examples`` examples from random sequences ``seed``, ``seed + 1``, ... run on ``executor``,
    the first ``examples`` of them in sequence order (so the set is the same for any worker count). With
    ``checkpoint``, finished sequences are kept there and a rerun resumes."""
    from strider.characters import load_character
    from strider.methods.simbicon.gait import body_of, load_gait
    from strider.parallel.sweep import Checkpoint, fingerprint, run_sweep

    if examples < 1:
        raise ValueError(f"examples must be >= 1, got {examples}")
    key = fingerprint("cw-synthesis", seed, steps_per_sequence, gait, character, repr(params))
    store = Checkpoint(checkpoint, key) if checkpoint is not None else None
    spec = load_character(character)
    check_walker(spec)   # here, not first in a worker
    load_gait(gait, body_of(spec))   # a bad gait file too
    size = action_space(spec).size
    parts: list[Examples] = []
    falls = sequences = barren = 0
    batch = -(-examples // steps_per_sequence)
    while sum(map(len, parts)) < examples:
        tasks = {f"sequence-{seed + k}": SequenceTask(seed + k, steps_per_sequence, params, gait, character)
                 for k in range(sequences, sequences + batch)}
        results = run_sweep(executor, sequence_task, tasks, store, progress=progress,
                            description="CW synthesis (sequences)")
        for record in results.values():
            parts.append(_examples(record, size))
            falls += bool(record["fell"])
            barren = 0 if len(parts[-1]) else barren + 1
        sequences += batch
        if barren >= BARREN_SEQUENCES:
            raise UsageError(f"CW synthesis: the last {barren} sequences gave no example, each falling in its "
                             f"warm-up or first step: the {character} walker cannot walk gait {gait!r}")
        batch = max(1, -(-(examples - sum(map(len, parts))) // steps_per_sequence))
    merged = Examples.concatenate(parts)
    keep = Examples(*(getattr(merged, k)[:examples] for k in COLUMNS))
    return keep, {"sequences": sequences, "falls": falls}


def save_examples(path, examples: Examples, header: dict) -> None:
    from strider.datafile import save_array_file

    save_array_file(path, {"format": EXAMPLES_FORMAT, "version": EXAMPLES_VERSION, **header},
                    {k: getattr(examples, k) for k in COLUMNS})


def load_examples(path) -> tuple[Examples, dict]:
    from strider.datafile import load_array_file

    header, arrays = load_array_file(path, EXAMPLES_FORMAT, EXAMPLES_VERSION, "CW example set")
    return Examples(*(arrays[k] for k in COLUMNS)), header
