"""Fitted value iteration over explored states and task samples, and the policy it gives
(Coros 2010, Sec. 4.4.3, Alg. 2).

The value lives on the grid (explored state i, task sample j). An action from state i lands in the explored
next state s′ with the task parameter carried to w′ (instancing, :meth:`Task.after`); V(s′, w′) is
interpolated over the k states nearest s′ with weights 1/d² (normalized) and multilinearly between the 2^D
task samples around w′ (D = 0, 1 or 2). The reward is the task's (:meth:`Task.reward`: 1 on success), and
``failure_reward`` (−1; 0 for a steady walk) when the step fell or left the trusted states, which ends the
episode; the discount is γ raised to the step's duration. At run time the policy takes the explored state
nearest the strike's and the actions stored at the grid points around w, and blends their commands by the
same weights (decision; ``SolveParams.blend`` off takes the heaviest point's action).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from strider.errors import UsageError
from strider.methods.tlc.explore import KEPT, Exploration
from strider.methods.tlc.state import LINKS, DistanceWeights, StrikeStates, distances
from strider.methods.tlc.stepper import StepAction
from strider.methods.tlc.tasks import Task
from strider.optimize.value_iteration import SeparableTransitions, separable_value_iteration

FORMAT, VERSION = "strider-tlc-policy", 1
EXACT = 1e-9                    # a neighbour nearer than this is the state itself: it takes (nearly) all the weight
CANDIDATES_PER_NEIGHBOUR = 4    # a KD-tree proposes this many candidates per neighbour; the true distance ranks them
STATES_PER_BLOCK = 256          # the solver carries task parameters through steps for this many states at once


class StateIndex:
    """Nearest explored states under the distance of Table 4.1: a KD-tree over a Euclidean embedding (whose
    distance bounds the true one from below, up to the chord-for-angle approximation) proposes candidates,
    and the true distance orders them."""

    def __init__(self, states: np.ndarray, weights: DistanceWeights):
        from scipy.spatial import cKDTree

        self.packed = np.asarray(states, dtype=float)
        self.states = StrikeStates.unpacked(self.packed)
        self.weights = weights
        self.tree = cKDTree(self._embed(self.states))

    def _embed(self, s: StrikeStates) -> np.ndarray:
        w_rate, w_rot = self.weights.per_link()
        n = len(s)
        # |q_a - q_b| ~ angle / 2 for nearby rotations, so 2 w_q q stands for w_q times the angle.
        return np.concatenate([self.weights.velocity * s.velocity, self.weights.root_rate * s.root_rate,
                               (w_rate[None, :, None] * s.rates).reshape(n, -1),
                               (2.0 * w_rot[None, :, None] * s.rotations).reshape(n, -1)], axis=1)

    def nearest(self, queries: StrikeStates, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(indices, distances), each (queries, k), nearest first."""
        k = min(k, len(self.states))
        candidates = min(len(self.states), k * CANDIDATES_PER_NEIGHBOUR)
        _, proposed = self.tree.query(self._embed(queries), k=candidates)
        proposed = np.asarray(proposed).reshape(len(queries), candidates)
        index = np.empty((len(queries), k), dtype=np.int64)
        dist = np.empty((len(queries), k))
        for q in range(len(queries)):
            cand = proposed[q]
            d = distances(queries.row(q), StrikeStates.unpacked(self.packed[cand]), self.weights)
            order = np.lexsort((cand, d))[:k]
            index[q], dist[q] = cand[order], d[order]
        return index, dist


@dataclass(frozen=True)
class SolveInfo:
    wall_seconds: float
    sweeps: int
    last_change: float
    states: int
    samples: int
    success_share: float     # of (state, sample) cells whose best action succeeds or leads to success


@dataclass(frozen=True)
class Policy:
    task: str
    character: str
    actions: tuple[StepAction, ...]
    samples: np.ndarray         # task parameter samples
    states: np.ndarray          # (n, packed) explored states
    best: np.ndarray            # (n, samples) int: the action at each grid point
    values: np.ndarray | None   # (n, samples), from solve; a policy file does not keep them (decision: size)
    blend: bool
    info: dict

    def save(self, path) -> Path:
        from strider.datafile import save_array_file

        header = {"format": FORMAT, "version": VERSION, "task": self.task, "character": self.character,
                  "actions": [[a.speed, a.turn, a.period] for a in self.actions], "blend": self.blend,
                  "links": list(LINKS), "info": self.info}
        return save_array_file(path, header, {"samples": self.samples, "states": self.states.astype(np.float32),
                                              "best": self.best.astype(np.int8 if len(self.actions) <= 127 else np.int16)})

    @staticmethod
    def load(path) -> Policy:
        from strider.datafile import load_array_file

        header, a = load_array_file(path, FORMAT, VERSION, "TLC policy")
        if header.get("links") != list(LINKS):
            raise UsageError(f"{path}: a policy over other joints ({header.get('links')})")
        return Policy(header["task"], header["character"], tuple(StepAction(*row) for row in header["actions"]),
                      a["samples"], a["states"].astype(float), a["best"].astype(np.int64),
                      a["values"].astype(float) if "values" in a else None, bool(header["blend"]), header["info"])


def solve(exploration: Exploration, task: Task, weights: DistanceWeights | None = None,
          progress: Callable[[], None] | None = None) -> Policy:
    """Alg. 2 over ``exploration`` for ``task``; ``progress`` is called after each sweep."""
    if exploration.task != task.name:
        raise UsageError(f"an exploration for task {exploration.task} cannot be solved for task {task.name}")
    weights = weights or DistanceWeights()
    p = task.solve
    start = time.perf_counter()
    n, actions = exploration.outcome.shape
    samples = task.samples
    m = len(samples)
    kept = exploration.outcome == KEPT
    index = StateIndex(exploration.states, weights)
    k = p.neighbours
    near = np.zeros((n, actions, k), dtype=np.int64)
    near_w = np.zeros((n, actions, k))
    rows, cols = np.nonzero(kept)
    if len(rows):
        nxt = StrikeStates.unpacked(exploration.next_states[rows, cols])
        idx, dist = index.nearest(nxt, k)
        inv = 1.0 / np.maximum(dist, EXACT) ** 2
        near[rows, cols], near_w[rows, cols] = idx, inv / inv.sum(axis=1, keepdims=True)
    speed = np.nan_to_num(exploration.next_states[:, :, 0])        # forward COM speed at the next strike
    steady = _ends_steady(exploration, task, weights, kept)
    corners = 2 ** task.dimensions
    corner = np.empty((n, actions, m, corners), dtype=np.int32)
    corner_w = np.empty((n, actions, m, corners))
    reward = np.empty((n, actions, m))
    w = samples if task.dimensions == 1 else samples[None, None]     # broadcast over (state, action)
    for lo in range(0, n, STATES_PER_BLOCK):        # w' for every (state, action, sample), a block at a time
        b = slice(lo, min(n, lo + STATES_PER_BLOCK))
        shift = exploration.shift[b][:, :, None, :]
        turn = exploration.turn[b][:, :, None]
        w_next = task.after(w, shift, turn)
        corner[b], corner_w[b] = task.corners(w_next)
        reward[b] = np.where(kept[b][:, :, None], task.reward(w, w_next, speed[b][:, :, None], turn,
                                                              steady[b][:, :, None]), task.failure_reward)
    discount = np.where(kept, p.discount_per_second ** exploration.duration, 0.0)
    result = separable_value_iteration(SeparableTransitions(near, near_w, corner, corner_w, reward, discount),
                                       p.sweeps, p.smoothing, progress)
    info = SolveInfo(time.perf_counter() - start, result.sweeps, result.change, n, m,
                     float(np.mean(result.values > 0)))
    return Policy(task.name, task.character, task.actions, samples, exploration.states, result.policy,
                  result.values, p.blend, info.__dict__)


def _ends_steady(exploration: Exploration, task: Task, weights: DistanceWeights, kept: np.ndarray) -> np.ndarray:
    """(states, actions) bool: the step ends within ``task.steady.within`` of a trusted strike of the steady
    walk's limit cycle (all False for a task without one)."""
    steady = np.zeros(kept.shape, dtype=bool)
    if task.steady is None:
        return steady
    cycle = exploration.cycle_states(task.steady.cycle)
    if not len(cycle):
        raise UsageError(f"the exploration holds no trusted strike of action {task.steady.cycle}'s limit cycle "
                         "(made before explorations kept them?); explore the task again")
    reference = StrikeStates.unpacked(cycle)
    rows, cols = np.nonzero(kept)
    for r, c in zip(rows, cols, strict=True):
        d = distances(StrikeStates.unpacked(exploration.next_states[r, c]), reference, weights)
        steady[r, c] = d.min() < task.steady.within
    return steady


class PolicyRunner:
    """The policy at run time: the command for a strike's state and task parameter."""

    def __init__(self, policy: Policy, task: Task, weights: DistanceWeights | None = None):
        self.policy, self.task = policy, task
        self.index = StateIndex(policy.states, weights or DistanceWeights())

    def act(self, state: StrikeStates, w) -> StepAction:
        """The command for task parameter ``w`` (a number, or D numbers, or none) at the explored state nearest
        ``state``: the commands stored at the grid points around ``w`` blended by their weights, or without
        blending the heaviest one's. With ``runtime_neighbours`` k > 1 (SolveParams), the commands of the k
        nearest explored states are blended too, weighted 1/d^2."""
        p = self.policy
        index, dist = self.index.nearest(state, self.task.solve.runtime_neighbours)
        near = 1.0 / np.maximum(dist[0], EXACT) ** 2
        d = self.task.dimensions
        w = np.asarray(w, dtype=float).reshape(d) if d != 1 else float(w)
        corner, weight = (x.ravel() for x in self.task.corners(np.asarray(w)))
        if not p.blend:
            corner, weight = corner[[int(np.argmax(weight))]], np.ones(1)
        chosen = [p.actions[p.best[i, c]] for i in index[0] for c in corner]
        return StepAction.mix(chosen, np.outer(near / near.sum(), weight).ravel())
