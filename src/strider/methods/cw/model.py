"""The step-to-step dynamics model of CW (seed 000, Sec. 3.4; coros-walking.md, Sec. 3.2).

From examples (s, A, s', l), predicts where a step with action A from state s
ends (s') and how long it is (l), with an uncertainty:

* states are compared by d(s_i, s_j)^2 = (s_i - s_j)^T X (s_i - s_j), X = diag(2, 1, 0.5, 0.5, 0.5);
* actions are reduced to their first two principal components Â;
* a query takes the K = 25 examples nearest s, the k = 3 of those nearest Â,
  and blends their s', l, A and U with w_i = 1 / (d_i + alpha |Â_i - Â|);
* each example's uncertainty is its leave-one-out error,
  U_i = d(s'_i, s~'_i) + beta |l_i - l~_i| (the spec's reading of the source's typo);
* the capability box at s is the axis-aligned box of its K neighbours' Â.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from strider.errors import UsageError
from strider.methods.cw.synthesis import Examples, load_examples
from strider.optimize.knn import Components, LinearFit, TwoStageKNN, local_linear, principal_components

STATE_WEIGHTS = np.array([2.0, 1.0, 0.5, 0.5, 0.5])   # X (Sec. 3.4)
EPSILON_DISTANCE = 1e-3   # m-scale: keeps the weight of an example at the query state finite
REGRESSIONS = ("knn", "local-linear")


@dataclass(frozen=True)
class ModelParams:
    components: int = 2       # Sec. 3.4: 2 PCs, 66% of the variance
    near: int = 25            # K (Sec. 3.4)
    best: int = 3             # k (Sec. 3.4)
    alpha: float = 1.0        # Sec. 3.4
    beta: float = 1.0         # Sec. 3.4
    # strider: how s' and l are predicted. "knn" is the source's blend of the k best examples; "local-linear"
    # fits s' and l linearly in (s, A) over the linear_near examples nearest s (leave-one-out step length error
    # on the shipped planar set: 2.2 cm against the blend's 5.5 cm).
    regression: str = "local-linear"
    linear_near: int = 60     # strider: examples a local-linear fit uses
    ridge: float = 1e-2       # strider: damping of its slopes

    def __post_init__(self) -> None:
        if self.regression not in REGRESSIONS:
            raise UsageError(f"unknown CW regression {self.regression!r} (choose from {', '.join(REGRESSIONS)})")


@dataclass(frozen=True)
class Prediction:
    next_state: np.ndarray
    length: float
    uncertainty: float
    action: np.ndarray


@dataclass(frozen=True)
class Predictions:
    """:class:`Prediction` for m actions from one state, as arrays with m rows."""

    next_states: np.ndarray
    lengths: np.ndarray
    uncertainty: np.ndarray
    actions: np.ndarray


@dataclass(frozen=True)
class Neighbourhood:
    """What a model knows around one state, reused for every action tried from it."""

    near: tuple[np.ndarray, np.ndarray]   # the K nearest examples: indices, distances
    fit: LinearFit | None                 # local-linear: (s', l) as a function of the full action


class StepModel:
    def __init__(self, examples: Examples, params: ModelParams = ModelParams(), character: str | None = None):
        """``character``: the walker the examples were made with (None: not known), so that a walk with another
        one is refused."""
        needed = params.near if params.regression == "knn" else max(params.near, params.linear_near)
        if len(examples) <= needed:
            raise ValueError(f"a step model needs more than {needed} examples, got {len(examples)}")
        self.examples, self.params, self.character = examples, params, character
        self.components: Components = principal_components(examples.actions, params.components)
        self.codes = self.components.encode(examples.actions)
        self.knn = TwoStageKNN(examples.states, self.codes, STATE_WEIGHTS, params.near, params.best, params.alpha)
        self._targets = np.column_stack([examples.next_states, examples.lengths])
        self.uncertainty = np.array([self._leave_one_out(i) for i in range(len(examples))])

    def state_distance(self, a: np.ndarray, b: np.ndarray) -> float:
        diff = np.asarray(a) - np.asarray(b)
        return float(np.sqrt(diff @ (STATE_WEIGHTS * diff)))

    def _fit(self, state: np.ndarray, exclude: int | None = None) -> LinearFit:
        """(s', l) linear in the full action over the examples nearest ``state``, their weights 1 / d. Many
        states (..., dim) give their fits stacked."""
        idx, dist = self.knn.near(state, exclude=exclude, count=self.params.linear_near)
        w = 1.0 / (dist + EPSILON_DISTANCE)
        ex = self.examples
        actions = ex.actions[idx]
        inputs = np.concatenate([(ex.states[idx] - state[..., None, :]) * np.sqrt(STATE_WEIGHTS), actions], axis=-1)
        mean_action = (w[..., None, :] @ actions)[..., 0, :] / w.sum(axis=-1, keepdims=True)
        centre = np.concatenate([np.zeros(state.shape), mean_action], axis=-1)
        full = local_linear(inputs, self._targets[idx], w, centre, self.params.ridge)
        dim = state.shape[-1]
        # At the query state the state terms vanish: keep the action part only.
        return LinearFit(mean_action, full.value, full.slope[..., dim:, :])

    def _outcomes(self, local: Neighbourhood, idx: np.ndarray, w: np.ndarray):
        """(s', l) and the action executed for each query: the blend of its k best examples' full actions (Sec.
        3.4), and their outcomes blended too ("knn") or the local fit at that action ("local-linear")."""
        blend = (lambda column: np.einsum("...mk,...mkc->...mc", w, column[idx]))
        actions = blend(self.examples.actions)
        return (blend(self._targets) if local.fit is None else local.fit(actions)), actions

    def _leave_one_out(self, i: int) -> float:
        ex = self.examples
        local = self._neighbourhood(ex.states[i], exclude=i)
        if local.fit is not None:
            out = local.fit(ex.actions[i][None, :])
        else:
            idx, w = self.knn.weights_many(local.near, self.codes[i][None, :])
            out, _ = self._outcomes(local, idx, w)
        return self.state_distance(ex.next_states[i], out[0, :-1]) + self.params.beta * abs(ex.lengths[i] - out[0, -1])

    def _neighbourhood(self, state: np.ndarray, exclude: int | None = None) -> Neighbourhood:
        state = np.asarray(state, dtype=float)
        fit = self._fit(state, exclude) if self.params.regression == "local-linear" else None
        return Neighbourhood(self.knn.near(state, exclude=exclude), fit)

    def near(self, state: np.ndarray) -> Neighbourhood:
        """What the model knows around ``state`` (cache it for the many actions tried from one state). Many
        states (..., dim) give their neighbourhoods stacked, each the same to the bit as asked alone."""
        return self._neighbourhood(state)

    def predict(self, state: np.ndarray, code: np.ndarray, near: Neighbourhood | None = None) -> Prediction:
        many = self.predict_many(state, np.asarray(code, dtype=float)[None, :], near)
        return Prediction(many.next_states[0], float(many.lengths[0]), float(many.uncertainty[0]), many.actions[0])

    def predict_many(self, state: np.ndarray, codes: np.ndarray, near: Neighbourhood | None = None) -> Predictions:
        """Predictions for many action codes (m, components) from one state; or, from many states (..., dim),
        for each its own codes (..., m, components), with arrays of shape (..., m, ...)."""
        local = near if near is not None else self.near(state)
        idx, w = self.knn.weights_many(local.near, codes)
        out, actions = self._outcomes(local, idx, w)
        return Predictions(out[..., :-1], out[..., -1], np.einsum("...mk,...mk->...m", w, self.uncertainty[idx]),
                           actions)

    def capability(self, state: np.ndarray, near: Neighbourhood | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The box of Â the model knows around ``state``: its K neighbours' codes' bounds (for many states,
        (..., components) each)."""
        idx, _ = (near if near is not None else self.near(state)).near
        return self.codes[idx].min(axis=-2), self.codes[idx].max(axis=-2)


DATA_DIR = Path(__file__).parent / "data"


def shipped_examples(character: str) -> Path:
    return DATA_DIR / f"{character}.examples.npz"


def load_model(character: str, examples: str | Path | None = None, params: ModelParams = ModelParams()) -> StepModel:
    """The step-to-step model of ``character`` from an example set file (default: the one shipped for it)."""
    path = Path(examples) if examples is not None else shipped_examples(character)
    if examples is None and not path.is_file():
        shipped = sorted(p.name.split(".")[0] for p in DATA_DIR.glob("*.examples.npz"))
        raise UsageError(f"no CW example set ships for {character!r} (shipped: {', '.join(shipped) or 'none'}); "
                         "make one with 'strider cw synthesize' and pass it with --examples")
    data, header = load_examples(path)
    if header.get("character") != character:
        raise UsageError(f"{path}: an example set for {header.get('character')!r}, not {character!r}")
    return StepModel(data, params, character)
