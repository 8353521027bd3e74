"""Online step planning for CW (seed 000, Sec. 3.5): at each foot strike, choose the next action by searching
the step-to-step model over a short horizon.

A planner samples action codes Â inside the model's capability box at each
predicted state and chains the predictions: step i from state s_i with code
Â_i lands the heel at h_i + l~_i in state s~'_i. A sample is rejected when its
uncertainty is U >= U_max, when its foot would land in a gap, or (stepping
stones) when it lands farther than the tolerance from its stone. Among
acceptable plans the score is the summed step error plus c_u U of the first
step. Three searches (Sec. 3.5):

* ``regular``: a regular grid over the box at every step of the horizon, the
  best plan kept (the source's choice for fully constrained stepping stones);
* ``random``: depth-first random sampling, the first plan that clears every
  gap taken, at most ``random_samples`` predictions; while the nearest gap is
  more than ``base_within`` ahead, the base gait's own action; if nothing
  clears, the plan that best avoids the gaps;
* ``hybrid``: footsteps of the preferred length planned first, one that falls
  in a gap moved to the nearer edge, matched by a sparse regular grid; if no
  plan lands within the tolerance of them, the full grid's plan that clears
  every gap nearest those footsteps (search ``nearest``); the random search if
  none clears.

The action executed is the model's blend of its neighbours' full actions for
the chosen code.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from strider.methods.cw.model import StepModel

GAP_SEARCHES = ("random", "hybrid")   # the searches that read a course; "regular" plans stepping stones


@dataclass(frozen=True)
class PlannerParams:
    horizon: int = 2                  # steps (Sec. 3.5)
    max_uncertainty: float = 0.75     # U_max (Sec. 3.5)
    stone_tolerance: float = 0.06     # m: a stepping-stone sample further off is rejected (Sec. 3.5)
    uncertainty_weight: float = 0.1   # c_u (Sec. 3.5)
    random_samples: int = 500         # predictions per random search (Sec. 3.5)
    random_per_state: int = 50        # strider: of those, at most this many from one predicted state
    regular_samples: int = 9          # strider: grid points per action component, regular search
    sparse_samples: int = 5           # strider: the same for the hybrid's sparse grid
    base_within: float = 1.0          # m: the base action while no gap starts nearer ahead (Sec. 3.5)
    preferred_step: float = 0.36      # m (Sec. 3.5, the 2-D and 3-D humanoids)
    edge_margin: float = 0.0          # m of support kept beyond each end of a landing foot (strider; source: 0)


class Footing:
    """Where feet may land along x: the course's support intervals, and the foot's length."""

    def __init__(self, intervals: list[tuple[float, float]], foot_length: float):
        self.intervals, self.foot = intervals, foot_length
        self.starts = np.array([a for a, _ in intervals])
        self.ends = np.array([b for _, b in intervals])

    def clearance(self, heels: np.ndarray) -> np.ndarray:
        """Per heel position: how far (m) the foot [heel, heel + foot] lies inside one support interval at its
        nearer end; negative when it is not wholly on one."""
        heels = np.asarray(heels, dtype=float)[..., None]
        inside = np.minimum(heels - self.starts, self.ends - (heels + self.foot))
        return inside.max(axis=-1)

    def supported_share(self, heel: float) -> float:
        """The share of the foot over support."""
        overlap = np.clip(np.minimum(self.ends, heel + self.foot) - np.maximum(self.starts, heel), 0.0, None)
        return float(overlap.sum() / self.foot)

    def next_gap(self, x: float) -> tuple[float, float] | None:
        """The first gap (start, end) that ends beyond ``x``, or None."""
        for (_, end), (start, _) in zip(self.intervals, self.intervals[1:]):
            if start > x:
                return end, start
        return None

    def footstep(self, heel: float) -> float:
        """``heel`` moved out of a gap to the nearer edge: the foot wholly before it, or its heel at its far end."""
        if self.clearance(heel) >= 0:
            return heel
        gap = self.next_gap(heel - self.foot)
        if gap is None:
            return heel
        before, after = gap[0] - self.foot, gap[1]
        return before if heel - before <= after - heel else after


@dataclass(frozen=True)
class Plan:
    action: np.ndarray | None    # None: the base gait's own action
    heels: tuple[float, ...]     # predicted heel landings over the horizon
    accepted: bool               # met every constraint over the whole horizon
    samples: int                 # predictions made
    search: str                  # which search gave it ('base', 'regular', 'random', 'hybrid')


def _grid_codes(lo: np.ndarray, hi: np.ndarray, count: int) -> np.ndarray:
    """The points of a regular grid over the box [lo, hi] (..., dim), ``count`` per axis, the first axis
    slowest: (..., count ** dim, dim)."""
    axes = np.linspace(lo, hi, count, axis=-1)   # (..., dim, count)
    dim = lo.shape[-1]
    lead = axes.shape[:-2]
    coords = [axes[..., j, :].reshape(lead + (1,) * j + (count,) + (1,) * (dim - 1 - j)) for j in range(dim)]
    return np.stack(np.broadcast_arrays(*coords), axis=-1).reshape(lead + (count ** dim, dim))


def _best(score: np.ndarray, ok: np.ndarray) -> int:
    """The lowest score among acceptable samples, or overall when none is acceptable."""
    return int(np.lexsort((score, ~ok))[0])


class Planner:
    def __init__(self, model: StepModel, params: PlannerParams = PlannerParams(), seed: int = 0):
        self.model, self.params = model, params
        self.rng = np.random.default_rng(seed)

    # --- the searches ---------------------------------------------------------------------------------------
    def stones(self, state: np.ndarray, heel: float, targets: np.ndarray, footing: Footing | None = None) -> Plan:
        """Regular search for fully constrained stepping stones: heel landings ``targets`` (the next steps')."""
        return self._regular(state, heel, np.asarray(targets, dtype=float), footing, self.params.regular_samples,
                             "regular")

    def gaps(self, state: np.ndarray, heel: float, footing: Footing, search: str = "random") -> Plan:
        """Plan the next step over a course with gaps, by the ``random`` or ``hybrid`` search."""
        if search not in GAP_SEARCHES:
            raise ValueError(f"unknown gap search {search!r}; choose from {', '.join(GAP_SEARCHES)}")
        p = self.params
        gap = footing.next_gap(heel)
        if gap is None or gap[0] - heel > p.base_within:
            return Plan(None, (), True, 0, "base")
        if search == "hybrid":
            targets = self.footsteps(heel, footing)
            plan = self._regular(state, heel, targets, footing, p.sparse_samples, "hybrid")
            if plan.accepted:
                return plan
            # Where the footsteps cannot be met, the step that clears the gap nearest them: the random search's
            # first clearing plan may be any length, and the long ones leave states the walker falls from.
            nearest = self._regular(state, heel, targets, footing, p.regular_samples, "nearest", tolerance=np.inf)
            spent = plan.samples + nearest.samples
            if nearest.accepted:
                return dataclasses.replace(nearest, samples=spent)
            fallback = self._random(state, heel, footing)
            return dataclasses.replace(fallback, samples=spent + fallback.samples)
        return self._random(state, heel, footing)

    def footsteps(self, heel: float, footing: Footing) -> np.ndarray:
        """The hybrid's targets over the horizon: steps of the preferred length from ``heel``, each moved out of a
        gap to the nearer edge."""
        targets, x = [], heel
        for _ in range(self.params.horizon):
            x = footing.footstep(x + self.params.preferred_step)
            targets.append(x)
        return np.array(targets)

    def _grid(self, state: np.ndarray, count: int):
        """A regular grid of ``count`` points per component over the capability box at ``state``, and the model's
        predictions for it. Many states (..., dim) are predicted together, each over its own box."""
        near = self.model.near(state)
        lo, hi = self.model.capability(state, near)
        codes = _grid_codes(lo, hi, count)
        return codes, self.model.predict_many(state, codes, near)

    def _regular(self, state, heel, targets, footing, count, search, tolerance: float | None = None) -> Plan:
        """Exhaustive grid over one or two steps: the best-scoring plan, acceptable if any is. A landing more than
        ``tolerance`` (default: the stone tolerance) from its target is not acceptable."""
        p = self.params
        tolerance = p.stone_tolerance if tolerance is None else tolerance
        if not 1 <= len(targets) <= 2:
            raise ValueError(f"the regular search plans one or two steps, got {len(targets)} targets")
        codes, first = self._grid(state, count)
        samples = len(codes)
        land = heel + first.lengths
        error = np.abs(land - targets[0])
        ok = (first.uncertainty < p.max_uncertainty) & (error <= tolerance)
        if footing is not None:
            ok &= footing.clearance(land) >= p.edge_margin
        score = error + p.uncertainty_weight * first.uncertainty
        second_land = np.full(len(codes), np.nan)
        if len(targets) > 1:
            # Only samples that pass step one are extended (the closest few if none passes); the others score
            # infinity.
            extend = np.flatnonzero(ok) if ok.any() else np.argsort(score)[:count]
            rest = np.full(len(codes), np.inf)
            rest_ok = np.zeros(len(codes), dtype=bool)
            # Every extended sample's second grid in one batch: the same predictions, to the bit, as one by one.
            _, nxt = self._grid(first.next_states[extend], count)
            samples += nxt.lengths.size
            land2 = land[extend][:, None] + nxt.lengths
            err2 = np.abs(land2 - targets[1])
            ok2 = (nxt.uncertainty < p.max_uncertainty) & (err2 <= tolerance)
            if footing is not None:
                ok2 &= footing.clearance(land2) >= p.edge_margin
            for row, i in enumerate(extend):
                pick = _best(err2[row], ok2[row])
                rest[i], rest_ok[i], second_land[i] = err2[row, pick], ok2[row, pick], land2[row, pick]
            score = score + rest
            ok &= rest_ok
        best = _best(score, ok)
        heels = (float(land[best]),) + (() if len(targets) == 1 else (float(second_land[best]),))
        return Plan(first.actions[best], heels, bool(ok[best]), samples, search)

    def _random(self, state, heel, footing: Footing) -> Plan:
        """Depth-first random sampling: the first plan clearing every gap; else the first step that best avoids
        them (the step taken now; the next is planned again from where it lands)."""
        p = self.params
        left = [p.random_samples]
        best: list = [(False, -np.inf), None, ()]   # ((certain enough, clearance), action, heels) of a first step

        def search(s, h, depth, first_action, heels):
            near = self.model.near(s)
            lo, hi = self.model.capability(s, near)
            for _ in range(min(left[0], p.random_samples if depth == 0 else p.random_per_state)):
                left[0] -= 1
                pred = self.model.predict(s, self.rng.uniform(lo, hi), near)
                land = h + pred.length
                clear = float(footing.clearance(land))
                certain = pred.uncertainty < p.max_uncertainty
                action = pred.action if depth == 0 else first_action
                if depth == 0 and (certain, clear) > best[0]:
                    best[:] = [(certain, clear), action, (land,)]
                if not certain or clear < p.edge_margin:
                    continue
                if depth + 1 == p.horizon:
                    return action, heels + (land,)
                found = search(pred.next_state, land, depth + 1, action, heels + (land,))
                if found is not None or left[0] <= 0:
                    return found
            return None

        found = search(state, heel, 0, None, ())
        used = p.random_samples - left[0]
        if found is not None:
            return Plan(found[0], found[1], True, used, "random")
        return Plan(best[1], best[2], False, used, "random")
