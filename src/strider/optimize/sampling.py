"""Sequential Monte Carlo helpers: selecting elites and resampling a weighted population, and the ridge
regression of a linear-Gaussian policy from state-action pairs (Liu et al. 2015, Sec. 5.2).

Kept apart from any simulation so that other samplers (a particle filter over a plan, a cross-entropy
search) use the same pieces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RIDGE = 1e-6                # λ of seed 002, Eq. 19
WEIGHT_FLOOR_SHARE = 0.05   # resampling weight floor, a share of the cost range (control-graphs.md Sec. 4)


def systematic_resample(weights: np.ndarray, count: int, u: float) -> np.ndarray:
    """Indices of ``count`` draws from ``weights`` by systematic resampling, with the one uniform ``u`` in
    [0, 1): each index i appears floor or ceil of count * w_i times, in order."""
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 1 or len(weights) == 0 or not np.all(weights >= 0) or weights.sum() <= 0:
        raise ValueError("resampling needs a non-empty vector of non-negative weights with a positive sum")
    edges = np.cumsum(weights / weights.sum())
    edges[-1] = 1.0
    points = (u + np.arange(count)) / count
    return np.searchsorted(edges, points, side="right").clip(0, len(weights) - 1)


def cost_weights(costs: np.ndarray, floor_share: float = WEIGHT_FLOOR_SHARE) -> np.ndarray:
    """Resampling weights of a population by cost: max(E_max − E, floor_share · (E_max − E_min)); all equal
    when every cost is the same."""
    costs = np.asarray(costs, dtype=float)
    spread = costs.max() - costs.min()
    if spread <= 0:
        return np.ones_like(costs)
    return np.maximum(costs.max() - costs, floor_share * spread)


@dataclass(frozen=True)
class LinearGaussian:
    """a ~ N(M s + bias, diag(variance)): a linear feedback policy with exploration noise."""

    gain: np.ndarray       # M, (actions, states)
    bias: np.ndarray       # â, (actions,)
    variance: np.ndarray   # diag Σ, (actions,)

    @staticmethod
    def zero(states: int, actions: int, sigma: float) -> LinearGaussian:
        return LinearGaussian(np.zeros((actions, states)), np.zeros(actions), np.full(actions, sigma ** 2))

    def mean(self, s: np.ndarray) -> np.ndarray:
        # An elementwise product and sum rather than BLAS: a matrix product's rounding may depend on where the
        # arrays sit in memory, and a policy loaded from a file must act bit for bit as the one learned.
        return (np.asarray(s)[..., None, :] * self.gain).sum(axis=-1) + self.bias


def fit_linear_gaussian(states: np.ndarray, actions: np.ndarray, ridge: float = RIDGE,
                        variance_floor: float = 0.0, scaled_ridge: float = 0.0,
                        unbiased_variance: bool = False) -> LinearGaussian:
    """Ridge regression of actions on states (seed 002, Eqs. 14-19): M = [(SᵀS + λI)⁻¹ SᵀA]ᵀ on centred
    data, â = ā − M s̄, diag Σ the mean squared residual (Eq. 16's N_τ read as the sample count), floored.

    ``scaled_ridge`` (beyond the source) adds ρ N diag(var s) to λI: the same shrinkage as a ridge of ρ on
    standardized states, so a state component that barely varies cannot take a huge gain from noise.

    ``unbiased_variance`` (beyond the source) divides the residuals' sum of squares by the residual degrees of
    freedom, N − 1 − tr H with H the ridge's hat matrix, instead of N. The fit takes up about tr H + 1 of the
    residuals' spread, so with N = 50 tuples and 18 features Eq. 16 returns about 0.6 of the true variance,
    and an exploration fed back from it shrinks by that factor every iteration, whatever the search found."""
    states, actions = np.atleast_2d(states), np.atleast_2d(actions)
    if len(states) != len(actions) or len(states) == 0:
        raise ValueError(f"regression needs as many states as actions, at least one; got {len(states)} and "
                         f"{len(actions)}")
    s_mean, a_mean = states.mean(axis=0), actions.mean(axis=0)
    S, A = states - s_mean, actions - a_mean
    penalty = ridge * np.eye(S.shape[1]) + scaled_ridge * len(S) * np.diag((S ** 2).mean(axis=0))
    gram = S.T @ S
    gain = np.linalg.solve(gram + penalty, S.T @ A).T
    residual = A - S @ gain.T
    count = float(len(S))
    if unbiased_variance:
        fitted = 1.0 + float(np.trace(np.linalg.solve(gram + penalty, gram)))
        count = max(count - fitted, 1.0)
    variance = np.maximum((residual ** 2).sum(axis=0) / count, variance_floor)
    return LinearGaussian(gain, a_mean - gain @ s_mean, variance)
