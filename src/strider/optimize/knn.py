"""Nearest-neighbour regression tools: principal components, a two-stage weighted k-NN query (seed 000,
Sec. 3.4) and a local linear fit, on SciPy's KD-tree and NumPy's linear algebra.

The two-stage query first takes the K examples nearest a query point in a
(weighted) input space, then, of those, the k whose second coordinates (an
action) lie nearest a query action, and blends their outputs with weights
w_i = 1 / (d_i + alpha |a_i - a|), normalized.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPSILON = 1e-9   # keeps a weight finite when a query lands on an example
PARTITION_FROM = 50_000   # values: below this many a stable sort finds the k smallest sooner (measured)


@dataclass(frozen=True)
class Components:
    """The leading principal components of a data set: x ~ mean + code @ axes."""

    mean: np.ndarray
    axes: np.ndarray          # (n_components, dim), orthonormal rows
    explained: np.ndarray     # share of the variance each component carries

    def encode(self, x: np.ndarray) -> np.ndarray:
        return (np.asarray(x) - self.mean) @ self.axes.T

    def decode(self, code: np.ndarray) -> np.ndarray:
        return self.mean + np.asarray(code) @ self.axes


def principal_components(data: np.ndarray, count: int) -> Components:
    data = np.asarray(data, dtype=float)
    mean = data.mean(axis=0)
    _, singular, vt = np.linalg.svd(data - mean, full_matrices=False)
    variance = singular ** 2
    # A component's sign is arbitrary: fix it (largest entry positive) so the same data give the same codes.
    axes = vt[:count] * np.sign(vt[:count][np.arange(count), np.abs(vt[:count]).argmax(axis=1)])[:, None]
    return Components(mean, axes, variance[:count] / variance.sum())


class TwoStageKNN:
    """Examples (x_i, a_i) -> outputs y_i; queries (x, a) -> the blend of the k best of the K nearest x."""

    def __init__(self, inputs: np.ndarray, actions: np.ndarray, input_weights: np.ndarray, first: int, second: int,
                 alpha: float):
        from scipy.spatial import cKDTree

        self.scale = np.sqrt(np.asarray(input_weights, dtype=float))
        self.tree = cKDTree(np.asarray(inputs, dtype=float) * self.scale)
        self.actions = np.asarray(actions, dtype=float)
        self.first, self.second, self.alpha = min(first, len(self.actions)), second, alpha

    def near(self, x: np.ndarray, exclude: int | None = None, count: int | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
        """Indices and distances of the K (or ``count``) examples nearest ``x`` (leaving out example
        ``exclude``). ``x`` may hold many points (..., dim), without ``exclude``: the answers then have the
        points' leading shape, each row what that point alone would get."""
        count = self.first if count is None else min(count, len(self.actions) - (exclude is not None))
        x = np.asarray(x, dtype=float)
        if exclude is None:
            dist, idx = self.tree.query(x * self.scale, k=count)
            return np.reshape(idx, x.shape[:-1] + (count,)), np.reshape(dist, x.shape[:-1] + (count,))
        if x.ndim != 1:
            raise ValueError("leaving an example out is for one query point at a time")
        dist, idx = self.tree.query(x * self.scale, k=count + 1)
        keep = idx != exclude
        return idx[keep][:count], dist[keep][:count]

    def weights(self, near: tuple[np.ndarray, np.ndarray], action: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Of the K near examples, the k nearest ``action``, and their normalized weights."""
        idx, w = self.weights_many(near, np.asarray(action, dtype=float)[None, :])
        return idx[0], w[0]

    def weights_many(self, near: tuple[np.ndarray, np.ndarray], actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`weights` for many query actions (..., m, dim) at once: indices and weights, each (..., m, k).
        Leading dimensions pair each set of actions with its own neighbourhood (``near`` of many points)."""
        idx, dist = near
        actions = np.asarray(actions, dtype=float)
        near_actions = self.actions[idx]
        # The Euclidean norm summed in component order, as np.linalg.norm does, without its (..., m, K, dim) array.
        d = near_actions[..., None, :, 0] - actions[..., :, None, 0]
        squared = d * d
        for j in range(1, actions.shape[-1]):
            d = near_actions[..., None, :, j] - actions[..., :, None, j]
            squared += d * d
        gap = np.sqrt(squared)
        order = _smallest(gap, self.second)
        if idx.ndim == 1:   # one neighbourhood (a single prediction's path): plain indexing costs less
            near_idx, near_dist = idx[order], dist[order]
        else:
            near_idx = np.take_along_axis(idx[..., None, :], order, axis=-1)
            near_dist = np.take_along_axis(dist[..., None, :], order, axis=-1)
        w = 1.0 / (near_dist + self.alpha * np.take_along_axis(gap, order, axis=-1) + EPSILON)
        return near_idx, w / w.sum(axis=-1, keepdims=True)


def _smallest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` smallest along the last axis, in order, equal values by index: what a stable
    argsort's first k are. Many values are partitioned instead of sorted (a plan's batched queries keep 3 of
    each 25), which costs less from ``PARTITION_FROM`` values on."""
    if values.shape[-1] <= k or values.size < PARTITION_FROM:
        return np.argsort(values, axis=-1, kind="stable")[..., :k]
    part = np.argpartition(values, k - 1, axis=-1)[..., :k]
    chosen = np.take_along_axis(values, part, axis=-1)
    order = np.take_along_axis(part, np.lexsort((part, chosen), axis=-1), axis=-1)
    # Where the k-th value is shared with one left out, the partition may have kept the wrong one.
    kth = chosen.max(axis=-1)
    tied = ((values <= kth[..., None]).sum(axis=-1) > k) | np.isnan(kth)
    if tied.any():
        order[tied] = np.argsort(values[tied], axis=-1, kind="stable")[..., :k]
    return order


@dataclass(frozen=True)
class LinearFit:
    """y ~ value + (x - centre) @ slope, fitted to a neighbourhood; or many such fits stacked along leading
    dimensions, each applied to its own rows of x."""

    centre: np.ndarray        # (..., dim)
    value: np.ndarray         # (..., outputs)
    slope: np.ndarray         # (..., dim, outputs)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """x (..., m, dim) gives (..., m, outputs); one fit also takes a single point (dim,)."""
        x = np.asarray(x)
        if x.ndim == 1:
            return self.value + (x - self.centre) @ self.slope
        return self.value[..., None, :] + (x - self.centre[..., None, :]) @ self.slope


def local_linear(inputs: np.ndarray, outputs: np.ndarray, weights: np.ndarray, centre: np.ndarray,
                 ridge: float) -> LinearFit:
    """Weighted least squares of ``outputs`` (..., n, o) on ``inputs`` (..., n, dim) around ``centre``
    (..., dim), the slopes damped by ``ridge`` (the offset is not), solved with NumPy's linear algebra. Leading
    dimensions are independent fits, each the same to the bit as fitted alone."""
    centre = np.asarray(centre, dtype=float)
    x = np.asarray(inputs, dtype=float) - centre[..., None, :]
    design = np.concatenate([np.ones(x.shape[:-1] + (1,)), x], axis=-1)
    w = np.asarray(weights, dtype=float)[..., None]
    design_t = np.swapaxes(design, -1, -2)
    normal = design_t @ (w * design)
    normal[..., 1:, 1:] += ridge * np.eye(x.shape[-1])
    coef = np.linalg.solve(normal, design_t @ (w * np.asarray(outputs, dtype=float)))
    return LinearFit(centre, coef[..., 0, :], coef[..., 1:, :])
