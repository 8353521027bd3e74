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

import numpy as np

from strider.methods.cw.synthesis import Examples
from strider.optimize.knn import Components, TwoStageKNN, principal_components

STATE_WEIGHTS = np.array([2.0, 1.0, 0.5, 0.5, 0.5])   # X (Sec. 3.4)


@dataclass(frozen=True)
class ModelParams:
    components: int = 2       # Sec. 3.4: 2 PCs, 66% of the variance
    near: int = 25            # K (Sec. 3.4)
    best: int = 3             # k (Sec. 3.4)
    alpha: float = 1.0        # Sec. 3.4
    beta: float = 1.0         # Sec. 3.4


@dataclass(frozen=True)
class Prediction:
    next_state: np.ndarray
    length: float
    uncertainty: float
    action: np.ndarray


class StepModel:
    def __init__(self, examples: Examples, params: ModelParams = ModelParams()):
        if len(examples) < params.near + 1:
            raise ValueError(f"a step model needs more than {params.near} examples, got {len(examples)}")
        self.examples, self.params = examples, params
        self.components: Components = principal_components(examples.actions, params.components)
        self.codes = self.components.encode(examples.actions)
        self.knn = TwoStageKNN(examples.states, self.codes, STATE_WEIGHTS, params.near, params.best, params.alpha)
        self.uncertainty = np.array([self._leave_one_out(i) for i in range(len(examples))])

    def state_distance(self, a: np.ndarray, b: np.ndarray) -> float:
        diff = np.asarray(a) - np.asarray(b)
        return float(np.sqrt(diff @ (STATE_WEIGHTS * diff)))

    def _blend(self, idx: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, float]:
        ex = self.examples
        return w @ ex.next_states[idx], float(w @ ex.lengths[idx])

    def _leave_one_out(self, i: int) -> float:
        ex = self.examples
        idx, w = self.knn.weights(self.knn.near(ex.states[i], exclude=i), self.codes[i])
        next_state, length = self._blend(idx, w)
        return self.state_distance(ex.next_states[i], next_state) + self.params.beta * abs(ex.lengths[i] - length)

    def near(self, state: np.ndarray):
        """The K examples nearest ``state`` (cache it for the many actions tried from one state)."""
        return self.knn.near(state)

    def predict(self, state: np.ndarray, code: np.ndarray, near=None) -> Prediction:
        idx, w = self.knn.weights(near if near is not None else self.near(state), np.asarray(code))
        next_state, length = self._blend(idx, w)
        return Prediction(next_state, length, float(w @ self.uncertainty[idx]), w @ self.examples.actions[idx])

    def capability(self, state: np.ndarray, near=None) -> tuple[np.ndarray, np.ndarray]:
        """The box of Â the model knows around ``state``: its K neighbours' codes' bounds."""
        idx, _ = near if near is not None else self.near(state)
        return self.codes[idx].min(axis=0), self.codes[idx].max(axis=0)
