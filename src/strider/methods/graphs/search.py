"""Searching a skill from where the character is, and playing the path found (strider's ``search`` switches; not
real time): original SAMCON (Liu et al. 2010, as the one-pass refinement runs it, every servo sampled around the
open-loop targets) reconstructs some fragments of a skill's reference from the world's current state, and the
path it found plays out. The samples are deterministic, so the path replays as found, bit for bit.

A get-up after a fall (:class:`~strider.methods.graphs.recovery.Recovery`) and every visit of a control graph
(:class:`~strider.methods.graphs.graph_runner.GraphRunner`) can be searched so, where the learned policies fail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from strider.errors import UsageError
from strider.methods.graphs.actions import ActionLayout
from strider.methods.graphs.features import FEATURES
from strider.methods.graphs.fragments import FragmentRunner
from strider.methods.graphs.reference import Reference
from strider.methods.graphs.samcon import MIN_PARTICLES, SamconParams, SamconPath, guided_samcon
from strider.methods.graphs.sampler import Sampler
from strider.methods.graphs.scoring import DEFAULT_WEIGHTS, CostWeights
from strider.optimize.sampling import LinearGaussian
from strider.sim import World


@dataclass(frozen=True)
class SearchParams:
    particles: int = 400     # as a one-pass refinement (LearnParams.refine_particles)
    sigma: float = 0.15      # rad, on every servo target (LearnParams.refine_sigma)
    retries: int = 10        # rollbacks before a search gives up (a learning walk's allows 30)

    def __post_init__(self) -> None:
        if self.particles < MIN_PARTICLES:
            raise UsageError(f"search particles must be at least {MIN_PARTICLES}, got {self.particles}")
        if not self.sigma > 0:
            raise UsageError(f"search sigma must be positive, got {self.sigma}")
        if self.retries < 1:
            raise UsageError(f"search retries must be at least 1, got {self.retries}")


def search_sampler(reference: Reference, world: World, backend: str = "serial", workers: int = 1,
                   weights: CostWeights = DEFAULT_WEIGHTS) -> Sampler:
    """Resident workers for searches of ``reference`` on ``world``'s character (every servo sampled), scoring
    with ``weights``, to pass to :func:`search_path` when many searches follow one another."""
    return Sampler(reference, weights, backend=backend, workers=workers, joints=tuple(world.character().joints))


def search_path(reference: Reference, stages: np.ndarray, world: World, params: SearchParams, seed: int,
                iteration: int, backend: str = "serial", workers: int = 1,
                sampler: Sampler | None = None, headings: np.ndarray | None = None) -> SamconPath:
    """SAMCON through the fragments ``stages`` of ``reference`` from ``world``'s current state (unchanged); the
    path's ``complete`` says whether it got through. It runs on ``sampler`` (:func:`search_sampler`) when one is
    given, else on workers started for it. ``headings`` (rad, one per stage) score each stage in a frame of that
    heading (:func:`guided_samcon`)."""
    if sampler is None:
        with search_sampler(reference, world, backend, workers) as own:
            return search_path(reference, stages, world, params, seed, iteration, sampler=own, headings=headings)
    character = world.character()
    layout = ActionLayout.of(character, tuple(character.joints))
    policies = [LinearGaussian.zero(FEATURES, layout.size, params.sigma)] * reference.fragments
    return guided_samcon(sampler, np.asarray(stages), policies, world.integration_state(),
                         SamconParams(particles=params.particles, max_retries=params.retries), seed=seed,
                         iteration=iteration, headings=headings)


def play_path(reference: Reference, world: World, path: SamconPath,
              on_step: Callable[[World], None] | None = None,
              after_stage: Callable[[int], None] | None = None, limit: int | None = None) -> bool:
    """Play a searched path's executed actions from the world's current state (the state it was searched from,
    so the same physics), its first ``limit`` fragments (all by default), calling ``after_stage(i)`` after its
    i-th fragment; True if its last fragment played fell (never, for a path the search completed)."""
    runner = FragmentRunner(reference, joints=tuple(world.character().joints), world=world)
    runner.on_step = on_step
    state, fell = world.integration_state(), False
    played = slice(None, limit)
    for i, (k, action) in enumerate(zip(path.fragments[played], path.executed[played])):
        # from each stage's state as the search's samples ran, so the replay is the path bit for bit
        state, outcome = runner.sample(state, int(k), action, float(np.linalg.norm(action)))
        fell = outcome.fell
        if after_stage is not None:
            after_stage(i)
    return fell
