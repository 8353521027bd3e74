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


def search_path(reference: Reference, stages: np.ndarray, world: World, params: SearchParams, seed: int,
                iteration: int, backend: str = "serial", workers: int = 1) -> SamconPath:
    """SAMCON through the fragments ``stages`` of ``reference`` from ``world``'s current state (unchanged); the
    path's ``complete`` says whether it got through."""
    character = world.character()
    joints = tuple(character.joints)
    layout = ActionLayout.of(character, joints)
    policies = [LinearGaussian.zero(FEATURES, layout.size, params.sigma)] * reference.fragments
    with Sampler(reference, backend=backend, workers=workers, joints=joints) as sampler:
        return guided_samcon(sampler, np.asarray(stages), policies, world.integration_state(),
                             SamconParams(particles=params.particles, max_retries=params.retries), seed=seed,
                             iteration=iteration)


def play_path(reference: Reference, world: World, path: SamconPath,
              on_step: Callable[[World], None] | None = None,
              after_stage: Callable[[int], None] | None = None) -> bool:
    """Play a searched path's executed actions from the world's current state (the state it was searched from,
    so the same physics), calling ``after_stage(i)`` after its i-th fragment; True if its last fragment fell
    (never, for a path the search completed)."""
    runner = FragmentRunner(reference, joints=tuple(world.character().joints), world=world)
    runner.on_step = on_step
    state, fell = world.integration_state(), False
    for i, (k, action) in enumerate(zip(path.fragments, path.executed)):
        # from each stage's state as the search's samples ran, so the replay is the path bit for bit
        state, outcome = runner.sample(state, int(k), action, float(np.linalg.norm(action)))
        fell = outcome.fell
        if after_stage is not None:
            after_stage(i)
    return fell
