"""SAMCON stages on the executors: ``run_stage(states, actions, fragment)`` for a whole population.

Workers are resident: each builds its world and fragment tables once (the executor's ``setup``); a stage
ships only integration-state vectors and actions. The population goes out in contiguous chunks, one per
worker, and comes back in input order; every sample depends only on its own state and action, so the stage
is bit-identical for any worker count and on every backend (control-graphs.md Sec. 4, "Parallel SAMCON").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from strider.methods.graphs.actions import POLICY_JOINTS
from strider.methods.graphs.fragments import FragmentRunner
from strider.methods.graphs.reference import Reference
from strider.methods.graphs.scoring import DEFAULT_WEIGHTS, CostWeights
from strider.parallel import ClosedOnExit, Executor


@dataclass(frozen=True)
class StageTask:
    fragment: int
    states: np.ndarray         # (n, state size)
    actions: np.ndarray        # (n, action size) as executed
    action_norms: np.ndarray   # (n,) ‖a‖ of the recorded actions (E_a)
    heading: float | None = None   # rad: the frame the fragment is scored in (None: each sample's facing)


@dataclass(frozen=True)
class StageResult:
    states: np.ndarray
    features: np.ndarray
    costs: np.ndarray
    fell: np.ndarray

    @staticmethod
    def join(parts: list[StageResult]) -> StageResult:
        return StageResult(*(np.concatenate([getattr(p, f) for p in parts])
                             for f in ("states", "features", "costs", "fell")))


def _make_runner(reference: Reference, weights: CostWeights, joints: tuple[str, ...]) -> FragmentRunner:
    return FragmentRunner(reference, weights, joints)


def run_chunk(task: StageTask, runner: FragmentRunner) -> StageResult:
    ends = [runner.sample(s, task.fragment, a, n, task.heading)
            for s, a, n in zip(task.states, task.actions, task.action_norms)]
    return StageResult(np.array([s for s, _ in ends]), np.array([o.features for _, o in ends]),
                       np.array([o.cost for _, o in ends]), np.array([o.fell for _, o in ends]))


class Sampler(ClosedOnExit):
    """Runs SAMCON stages of one reference on ``workers`` resident workers (``serial``, ``processes`` or
    ``ray``)."""

    def __init__(self, reference: Reference, weights: CostWeights = DEFAULT_WEIGHTS, backend: str = "processes",
                 workers: int = 1, joints: tuple[str, ...] = POLICY_JOINTS):
        self.reference = reference
        self.executor = Executor(backend, workers, setup=partial(_make_runner, reference, weights, joints))
        self.workers = self.executor.workers
        self.samples = 0   # fragments simulated so far

    def initial_features(self, state: np.ndarray) -> np.ndarray:
        """The features of one state (a zero-length stage would say nothing; this asks a local runner)."""
        runner = FragmentRunner(self.reference)
        runner.world.set_integration_state(state)
        return runner.features()

    def run_stage(self, states: np.ndarray, actions: np.ndarray, action_norms: np.ndarray,
                  fragment: int, heading: float | None = None) -> StageResult:
        chunks = np.array_split(np.arange(len(states)), min(self.workers, len(states)))
        tasks = [StageTask(fragment, states[c], actions[c], action_norms[c], heading) for c in chunks]
        parts = [result for _, result in self.executor.map(run_chunk, tasks, ordered=True)]
        self.samples += len(states)
        return StageResult.join(parts)

    def close(self) -> None:
        self.executor.close()
