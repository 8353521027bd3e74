"""Guided SAMCON (Liu et al. 2015, Alg. 1): a sequential Monte Carlo search for a walk of fragments that
tracks the reference, its samples drawn around the current policies.

At each stage k every particle draws a ~ N(M_k s + â_k, Σ_k), runs fragment C_k with a + ε (ε ~ N(0, σ_ε²)
is not recorded), and is scored by the cost of its end state. The n_s best that did not fall are kept and
systematically resampled back to N_s particles, with weights max(E_max − E, 0.05 (E_max − E_min)). When
every sample falls, the search rolls back a few cycles with a fresh random stream, and doubles N_s after
every few retries (control-graphs.md Sec. 4, "SAMCON details"). At the end the best path is traced back from
the lowest final cost. With the policies at zero mean and Σ = σ0² I this is the original SAMCON.

The spec does not say how long a doubled population lasts, nor whether the retries count per stall or over
the whole walk. Here they count over the whole walk, and a doubled population stays doubled for the rest of
the search. Counting them per stall and going back to N_s past each stall was tried and not kept: the first
search of a 100-cycle walk of ``walk`` then rolled back 176 times by stage 437, against 20 times over all 1200
stages with the doubled population kept (docs/graphs.md).

The master owns every random draw and every selection; the samplers only simulate. Each stage's stream is
seeded by (seed, iteration, stage, retries so far), so a search is the same for any worker count, on any
backend, and again after an interruption.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from strider.methods.graphs.features import FEATURES
from strider.methods.graphs.sampler import Sampler
from strider.optimize.sampling import LinearGaussian, cost_weights, systematic_resample

ACTION_NOISE = 0.0524   # σ_ε = 3° (seed 002, Sec. 5.3; control-graphs.md Sec. 4)
MIN_PARTICLES = 2       # a search keeps the best and resamples: one particle has nothing to choose from


@dataclass(frozen=True)
class SamconParams:
    particles: int = 200               # N_s (seed 002, Sec. 5.4)
    elite_share: float = 0.1           # n_s = N_s / 10 (control-graphs.md Sec. 4)
    action_noise: float = ACTION_NOISE
    rollback_fragments: int = 24       # three cycles of an 8-fragment run (seed 002, Sec. 5.4: "last 3 controllers")
    retries_per_doubling: int = 5      # double N_s after this many retries (control-graphs.md Sec. 4)
    max_retries: int = 30              # then give up and return the path so far

    def __post_init__(self) -> None:
        if self.particles < MIN_PARTICLES:
            raise ValueError(f"SAMCON needs at least {MIN_PARTICLES} particles, got {self.particles}")
        if not 0 < self.elite_share <= 1:
            raise ValueError(f"the elite share must lie in (0, 1], got {self.elite_share}")


@dataclass(frozen=True)
class SamconPath:
    """The best path found: per stage its fragment, the features at its start and the action taken (as the policy
    drew it, and as it ran with the unrecorded noise ε: replaying ``executed`` from the start state repeats the
    path)."""

    fragments: np.ndarray   # (stages,)
    features: np.ndarray    # (stages, 18)
    actions: np.ndarray     # (stages, action size)
    executed: np.ndarray    # (stages, action size): actions + ε
    costs: np.ndarray       # (stages,) of the path's samples
    walk_length: int        # stages asked for; len(fragments) < walk_length when the search gave up
    samples: int            # fragments simulated
    retries: int
    population: np.ndarray  # (stages,) particles each stage last ran with (N_s, or more after doublings)

    @property
    def complete(self) -> bool:
        return len(self.fragments) == self.walk_length

    def first(self, stages: int) -> SamconPath:
        """The path's first ``stages`` stages, as a search of that walk length that found them."""
        return replace(self, fragments=self.fragments[:stages], features=self.features[:stages],
                       actions=self.actions[:stages], executed=self.executed[:stages], costs=self.costs[:stages],
                       population=self.population[:stages], walk_length=stages)


@dataclass
class _Stage:
    parents: np.ndarray
    actions: np.ndarray
    features: np.ndarray
    costs: np.ndarray
    executed: np.ndarray

    def picked(self, rows: np.ndarray) -> _Stage:
        return _Stage(self.parents[rows], self.actions[rows], self.features[rows], self.costs[rows],
                      self.executed[rows])


def guided_samcon(sampler: Sampler, walk: Sequence[int], policies: Sequence[LinearGaussian], start_state: np.ndarray,
                  params: SamconParams = SamconParams(), seed: int = 0, iteration: int = 0,
                  progress: Callable[[int, int], None] | None = None, pass_length: int | None = None,
                  headings: Sequence[float] | None = None) -> SamconPath:
    """Search the walk (a sequence of fragment indices) from ``start_state``; ``policies[k]`` guides fragment k.

    With ``pass_length`` (a clip that plays once: a get-up) the walk is passes of that many stages, and every
    particle starts each pass from ``start_state`` again; a pass's path still traces back through the passes
    before it. With ``headings`` (one per stage, rad) each stage is scored in a frame of that heading instead of
    the particle's own facing at the stage's start (:meth:`FragmentRunner.advance`): a path that must keep to
    a heading, as a steered walk must."""
    walk = np.asarray(walk, dtype=int)
    n = params.particles
    start_features = sampler.initial_features(start_state)
    populations = {0: (np.tile(start_state, (n, 1)), np.tile(start_features, (n, 1)))}
    stages: dict[int, _Stage] = {}
    samples_before = sampler.samples
    i, retries = 0, 0
    population = np.zeros(len(walk), dtype=int)
    while i < len(walk):
        k = int(walk[i])
        states, feats = populations[i]
        n = len(states)
        if pass_length is not None and i % pass_length == 0:
            states, feats = np.tile(start_state, (n, 1)), np.tile(start_features, (n, 1))
        policy = policies[k]
        rng = np.random.default_rng([seed, iteration, i, retries])
        recorded = policy.mean(feats) + rng.standard_normal((n, len(policy.bias))) * np.sqrt(policy.variance)
        executed = recorded + rng.standard_normal(recorded.shape) * params.action_noise
        result = sampler.run_stage(states, executed, np.linalg.norm(recorded, axis=1), k,
                                   None if headings is None else float(headings[i]))
        alive = np.flatnonzero(~result.fell)
        if len(alive) == 0:
            retries += 1
            if retries > params.max_retries:
                break
            i = max(min(populations), i - params.rollback_fragments)   # no further back than the kept window
            if retries % params.retries_per_doubling == 0:
                states, feats = populations[i]
                twice = np.arange(2 * len(states)) % len(states)
                populations[i] = (states[twice], feats[twice])
                if i > 0:   # the stage that made this population: its records follow the copies
                    stages[i - 1] = stages[i - 1].picked(twice)
            continue
        order = alive[np.argsort(result.costs[alive], kind="stable")]
        elites = order[:max(1, round(params.elite_share * n))]
        pick = elites[systematic_resample(cost_weights(result.costs[elites]), n, float(rng.random()))]
        population[i] = n
        stages[i] = _Stage(pick, recorded[pick], feats[pick], result.costs[pick], executed[pick])
        populations[i + 1] = (result.states[pick], result.features[pick])
        populations.pop(i + 1 - params.rollback_fragments - 1, None)
        i += 1
        if progress is not None:
            progress(i, len(walk))
    return _trace(stages, walk, i, sampler.samples - samples_before, retries, len(policies[0].bias), population[:i])


def _trace(stages: dict[int, _Stage], walk: np.ndarray, end: int, samples: int, retries: int,
           action_size: int, population: np.ndarray) -> SamconPath:
    """The path of the lowest-cost particle of the last completed stage, traced back through its parents."""
    if end == 0:
        no_actions = np.zeros((0, action_size))
        return SamconPath(walk[:0], np.zeros((0, FEATURES)), no_actions, no_actions.copy(), np.zeros(0), len(walk),
                          samples, retries, population)
    j = int(np.argmin(stages[end - 1].costs))
    rows = []
    for i in range(end - 1, -1, -1):
        rows.append(j)
        j = int(stages[i].parents[j])
    path = [stages[i].picked(np.array([j])) for i, j in enumerate(rows[::-1])]
    return SamconPath(walk[:end].copy(), *(np.concatenate([getattr(p, f) for p in path])
                                           for f in ("features", "actions", "executed", "costs")),
                      len(walk), samples, retries, population)
