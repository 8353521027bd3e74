"""C5: the value-iteration FRI policy (Abe 2012, Sec. 5.2.1, Eqs. 5.2-5.15; phase-tracking.md Sec. 3-4).

On the zero dynamics of a fitted step the state is two numbers, the phase theta and its rate. A grid of
``phases`` x ``rates`` states spans the step's phase range and rates from 0 to ``rate_span`` x the largest
reference rate. From every state, for every one of ``actions`` FRI placements (shares of the support from its
rear end to its front), the walker is placed on the zero dynamics (:meth:`PhaseTrackingController.start_at`)
and simulated in MuJoCo, the FRI held, until the phase reaches the next grid row; the rate it arrives with falls
between two grid rates, which is the transition. Soft contacts spread impacts over several steps, so the last
row is simulated through the heel strike into the next step (the legs relabelled, the rows shared): the
transition lands in the first row at or after the phase the new step begins at. A transition fails when the
walker falls, an output strays more than ``max_output``, a trailing toe slips more than ``max_slip``, the phase
turns back, the rate leaves the grid, or the next row is not reached within ``max_seconds``.

The reward is k2 exp(-k1 (rate - rate_ref(theta))^2), k1 = 1 / (``speed_width`` rate_ref)^2 (Sec. 4's
decisions); value iteration (:mod:`strider.optimize.value_iteration`) then gives each state its best action.
Rows whose support is a single point (the heel or the toe alone) have one action: the FRI is the point.

A jump's table (Sec. 5.2.1, "FRI Policy for Jumping") covers its flat-footed ground phase, the one stage with an FRI
to place, and scores only its last row: minus the distance of the rate there, as the heels rise, from the
motion's own (Eq. 5.17).

Every transition starts from the same restored world, so a row's results do not depend on which worker ran it,
nor on the rows before: the table is the same for every worker count and backend.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path

import numpy as np

from strider.datafile import load_array_file, save_array_file
from strider.errors import UsageError
from strider.methods.tracking.constraints import PhaseConstraints
from strider.methods.tracking.controller import PhaseTrackingController, TrackParams, places_fri
from strider.methods.tracking.mocap_import import FLAT, FREE
from strider.optimize.value_iteration import FAILURE, Transitions, value_iteration

FORMAT = "strider-fri-table"
VERSION = 1
SUFFIX = ".fri"
TIMESTEP = 0.002          # s, the controller's and the benches' (phase-tracking.md Sec. 4)
CHARACTER = "planar14"
SETTLING_SHARE = 0.5      # the FRI mid-support while a placed walker settles (and for rows with one action)


@dataclass(frozen=True)
class FriGrid:
    """The sampled grid and the value iteration over it."""

    phases: int = 100              # m (Sec. 5.3.1: 100 theta x 100 theta_dot x 10 FRI)
    rates: int = 100               # n
    actions: int = 10              # p
    rate_span: float = 2.0         # theta_dot_max = this x the largest reference rate (phase-tracking.md Sec. 4)
    discount: float = 0.999        # alpha (Sec. 5.3.1)
    sweeps: int = 1000             # (Sec. 5.3.1)
    speed_width: float = 0.1       # k1 = 1 / (speed_width rate_ref)^2; k2 = 1 (phase-tracking.md Sec. 4)
    failure: float = FAILURE       # the value of a failed transition (same: -1e9)
    max_output: float = 0.2        # rad: an output further off its constraint fails the transition (same)
    max_slip: float = 0.03         # m: a trailing toe that slides further fails it (same)
    max_seconds: float = 0.3       # s to reach the next row before the transition counts as stalled
    settle_seconds: float = 0.02   # s for the soft contacts to take the load after a placing or a strike
    lead_seconds: float = 0.03     # s between the placing and the row (more than settle_seconds)

    def __post_init__(self):
        for name in ("phases", "rates", "actions"):
            if getattr(self, name) < 2:
                raise UsageError(f"the FRI grid needs at least 2 {name}; got {getattr(self, name)}")
        if not 0.0 <= self.discount < 1.0:
            raise UsageError(f"the discount must lie in [0, 1); got {self.discount}")
        if self.sweeps < 1 or self.rate_span <= 0 or self.max_seconds <= 0:
            raise UsageError("sweeps, rate_span and max_seconds must be positive")
        if not 0 <= self.settle_seconds < self.lead_seconds:
            raise UsageError("the FRI grid's lead_seconds must exceed its settle_seconds")


@dataclass(frozen=True)
class FriTableInfo:
    track: str
    theta_range: tuple[float, float]
    max_rate: float
    grid: FriGrid
    sample_seconds: float = 0.0      # wall time of the sampling
    solve_seconds: float = 0.0       # wall time of the value iteration
    workers: int = 1
    backend: str = "serial"
    transitions: int = 0             # simulated transitions
    feasible: float = 0.0            # share of grid states with at least one action that does not fail
    change: float = 0.0              # largest value change in the last sweep


@dataclass(frozen=True)
class FriTable:
    """The VI policy: the best share of the support per grid state, NaN where every action fails."""

    info: FriTableInfo
    shares: np.ndarray               # (phases, rates)
    values: np.ndarray               # (phases, rates)
    phases: np.ndarray = field(init=False)

    def __post_init__(self):
        lo, hi = self.info.theta_range
        object.__setattr__(self, "phases", np.linspace(lo, hi, self.info.grid.phases))

    @property
    def rate_step(self) -> float:
        return self.info.max_rate / (self.info.grid.rates - 1)

    def action(self, theta: float, rate: float, nearest_answer: bool = False) -> float | None:
        """The share at the grid state nearest (theta, rate); where the table has no answer there, None, or with
        ``nearest_answer`` the share of the nearest rate in the same phase row that has one (None if none has)."""
        lo, hi = self.info.theta_range
        m, n = self.shares.shape
        i = min(max(round((theta - lo) / (hi - lo) * (m - 1)), 0), m - 1)
        j = min(max(round(rate / self.rate_step), 0), n - 1)
        share = self.shares[i, j]
        if not math.isnan(share):
            return float(share)
        if not nearest_answer:
            return None
        answered = np.flatnonzero(~np.isnan(self.shares[i]))
        if not len(answered):
            return None
        return float(self.shares[i, answered[np.argmin(np.abs(answered - j))]])

    def matches(self, constraints: PhaseConstraints) -> bool:
        return bool(np.allclose(self.info.theta_range, table_range(constraints), atol=1e-9))


# --- sampling ---------------------------------------------------------------------------------------------------
def table_range(constraints: PhaseConstraints) -> tuple[float, float]:
    """The phases a table covers: a walk's whole step; a jump's ground phase on flat feet (landing to heel-off),
    the only stage where it has an FRI to place (Abe 2012, Sec. 5.2.1, "FRI Policy for Jumping")."""
    if constraints.motion != "jump":
        return constraints.theta_range
    flat = next((s for s in constraints.stages if s.stance == FLAT), None)
    if flat is None:
        raise UsageError(f"{constraints.name}: the jump has no stage on flat feet, so no FRI to choose")
    return flat.theta


def grid_axes(constraints: PhaseConstraints, grid: FriGrid) -> tuple[np.ndarray, float]:
    """The grid's phase rows and its largest rate (its rates run evenly from 0 to that)."""
    return (np.linspace(*table_range(constraints), grid.phases),
            grid.rate_span * float(np.max(constraints.reference_rate)))


@dataclass
class _Run:
    """One sampled walk's bookkeeping (copied at the branch point, one copy per action)."""

    row: int
    rate: float                               # the grid rate the transition starts from
    settles: bool                             # placed ahead of the row (False at rate 0: measured at once)
    target: float | None                      # the next phase that counts; None until settled after a strike
    passed: float | None                      # the rate as the walker passed the row
    strikes: int = 0                          # heel strikes before the transition proper begins
    struck: float = 0.0                       # when the last strike (or the placing) jolted the rate
    end: float = 0.0                          # give up at this time
    last_rate: float = 0.0                    # the rate at the last control step, settled or not
    previous: tuple[float, float] | None = None   # the last settled (phase, rate)
    slip_from: np.ndarray | None = None       # where the trailing toe was when it came down
    resume: bool = False                      # stopped at the branch point, its control step already taken


class _Sampler:
    """A worker's walker: one world, one controller, one restorable start."""

    def __init__(self, constraints: PhaseConstraints, grid: FriGrid, params: TrackParams):
        from strider.characters import load_character
        from strider.sim import CharacterPlacement, Scene, World

        spec = load_character(CHARACTER).with_actuation("torque")
        self.world = World(Scene((CharacterPlacement(spec),), timestep=TIMESTEP, terrain=constraints.terrain))
        self.controller = PhaseTrackingController(constraints, params)
        self.controller.reset(self.world, self.world.character())
        self.start = self.world.snapshot()
        self.constraints, self.grid = constraints, grid
        self.phases, self.max_rate = grid_axes(constraints, grid)

    def transitions(self, row: int, rate: float, shares: tuple[float, ...]) -> list[tuple[int, float] | None]:
        """(next row, rate on arrival), or None where it failed, from grid row ``row`` at ``rate`` with the FRI
        held at each of ``shares``.

        Soft contacts take about ``settle_seconds`` to carry a body placed on them or struck against them, longer
        than most rows last, and the rate jolts meanwhile. So the walker is placed ``lead_seconds`` before the row
        (in an earlier stage, or before the previous heel strike, if need be) with the FRI mid-support, and only
        phases passed at least ``settle_seconds`` after a placing or a strike count. Where it passes the row the
        world is branched, once per share: each transition is the change of rate from there to the next row
        counted, added to the grid rate. A transition through a heel strike lands a few rows into the next step."""
        run = self._place(row, rate)
        if run.passed is None and self._advance(run) != "passed":
            return [None] * len(shares)

        def follow() -> tuple[int, float] | None:
            outcome = self._advance(replace(run))
            return outcome if isinstance(outcome, tuple) else None

        return self._each_share(shares, follow)

    def _each_share(self, shares: tuple[float, ...], follow) -> list:
        """From the world as it stands, once per share: back to here, the FRI held at the share, ``follow()``."""
        world, ctl = self.world, self.controller
        fork, phase = world.snapshot(), ctl.phase_state()
        out = []
        for share in shares:
            world.restore(fork)
            ctl.set_phase_state(phase)
            ctl.hold_fri = share
            out.append(follow())
        return out

    def _place(self, row: int, rate: float) -> _Run:
        world, ctl, grid = self.world, self.controller, self.grid
        theta = float(self.phases[row])
        lead = rate * grid.lead_seconds
        lo, hi = self.phases[0], self.phases[-1]
        before_strike = theta - lead < lo            # placed at the end of the step before
        world.restore(self.start)
        ctl.start_at(hi - lead if before_strike else theta - lead, rate)
        ctl.hold_fri = SETTLING_SHARE
        ctl.stats.steps = 0
        run = _Run(row, rate, lead > 0, theta if lead > 0 else self._next(row), None if lead > 0 else rate,
                   strikes=1 if before_strike else 0, struck=world.time,
                   end=world.time + grid.lead_seconds + grid.max_seconds, last_rate=rate)
        return run

    def _advance(self, run: _Run) -> tuple[int, float] | str | None:
        """Walk on until the row is passed (``"passed"``, the world stopped there), the transition ends (next row,
        arrival rate) or fails (None)."""
        world, ctl, grid = self.world, self.controller, self.grid
        while world.time < run.end:
            if run.resume:       # a branch resumes after the control step that passed the row
                run.resume = False
            else:
                steps = ctl.stats.steps
                ctl.control(world.time)
                if ctl.has_fallen() or ctl.last_output_peak > grid.max_output:
                    return None
                now_theta, now = ctl.last_theta, ctl.last_rate
                if ctl.stats.steps != steps:
                    run.slip_from, run.struck, run.previous = None, world.time, None
                    if ctl.stats.steps > run.strikes + 1:
                        return None
                    if ctl.stats.steps > run.strikes:    # struck within the transition: on in the new step
                        run.target = None
                        if run.passed is None:           # before reaching the row (the last rows): it ends there
                            run.passed, run.resume = run.last_rate, True
                            return "passed"
                settled = world.time >= run.struck + grid.settle_seconds or not run.settles
                if now < 0.0 and settled:                # a jolt may reverse the rate briefly
                    return None
                if settled:
                    if run.target is None:               # the first settled phase after a strike: the next row on
                        later = np.flatnonzero(self.phases > now_theta)
                        if not len(later):
                            return None
                        run.row, run.target = int(later[0]) - 1, float(self.phases[later[0]])
                    if now_theta >= run.target:
                        if run.previous is None:         # passed before it settled: no clean measure of it
                            return None
                        t0, r0 = run.previous
                        at = r0 + (now - r0) * (run.target - t0) / (now_theta - t0)
                        if run.passed is not None:
                            return run.row + 1, run.rate + at - run.passed
                        run.passed, run.target = at, self._next(run.row)
                        run.previous, run.last_rate, run.resume = (now_theta, now), now, True
                        return "passed"
                    run.previous = (now_theta, now)
                run.last_rate = now
            rear = self._trailing_toe()
            if rear is not None:
                run.slip_from = rear if run.slip_from is None else run.slip_from
                if np.hypot(*(rear - run.slip_from)) > grid.max_slip:
                    return None
            world.step()
        return None

    def _next(self, row: int) -> float:
        """The phase that ends a transition from ``row`` (none for the last: it ends in the next step)."""
        return float(self.phases[row + 1]) if row + 1 < self.grid.phases else math.inf

    def _trailing_toe(self) -> np.ndarray | None:
        ctl = self.controller
        if ctl.stage_now.swing == FREE:
            return None
        point = ctl.foot_point(ctl.swing_side, "toe")
        return np.array([point[0], point[2]])


class _JumpSampler(_Sampler):
    """A jump's ground phase: from a grid state, the FRI held at each share until the next row. No heel strike
    falls inside the table (it ends at heel-off), so a transition is one stretch of flat-footed ground phase."""

    def transitions(self, row: int, rate: float, shares: tuple[float, ...]) -> list[tuple[int, float] | None]:
        world, ctl, grid = self.world, self.controller, self.grid
        theta, target = float(self.phases[row]), float(self.phases[row + 1])
        lead = rate * grid.lead_seconds
        world.restore(self.start)
        ctl.start_at(max(theta - lead, float(self.phases[0])), rate)
        ctl.hold_fri = SETTLING_SHARE
        placed = world.time
        passed = self._run_to(theta, placed + grid.lead_seconds + grid.max_seconds, placed + grid.settle_seconds
                              if lead > 0 else placed)
        if passed is None:
            return [None] * len(shares)

        def follow() -> tuple[int, float] | None:
            world.step()      # the control step that passed the row is already taken
            arrival = self._run_to(target, world.time + grid.max_seconds, world.time)
            return None if arrival is None else (row + 1, rate + arrival - passed)

        return self._each_share(shares, follow)

    def _run_to(self, theta: float, end: float, settled: float) -> float | None:
        """Walk on until the phase reaches ``theta`` after ``settled``: the rate there (interpolated between control
        steps, the world stopped at the control step that passed it), or None if it failed or ran out of time."""
        world, ctl, grid = self.world, self.controller, self.grid
        stage, previous = ctl.stage, None
        while world.time < end:
            ctl.control(world.time)
            if ctl.has_fallen() or ctl.last_output_peak > grid.max_output or ctl.stage != stage:
                return None
            now_theta, now = ctl.last_theta, ctl.last_rate
            if world.time >= settled:
                if now < 0.0:
                    return None
                if now_theta >= theta:
                    if previous is None:
                        return now
                    t0, r0 = previous
                    return r0 + (now - r0) * (theta - t0) / (now_theta - t0)
                previous = (now_theta, now)
            world.step()
        return None


def _sample_row(task: tuple[int, tuple[float, ...], tuple[float, ...]], sampler: _Sampler) -> dict:
    row, rates, shares = task
    nxt = np.full((len(rates), len(shares)), -1)
    arrival = np.full((len(rates), len(shares)), np.nan)
    for j, rate in enumerate(rates):
        for k, out in enumerate(sampler.transitions(row, rate, shares)):
            if out is not None:
                nxt[j, k], arrival[j, k] = out
    return {"next": nxt.tolist(), "rate": [[None if math.isnan(v) else v for v in r] for r in arrival.tolist()]}


def make_sampler(constraints: PhaseConstraints, grid: FriGrid, params: TrackParams) -> _Sampler:
    return (_JumpSampler if constraints.motion == "jump" else _Sampler)(constraints, grid, params)


def solve_fri_table(constraints: PhaseConstraints, grid: FriGrid = FriGrid(), params: TrackParams | None = None,
                    backend: str = "processes", workers: int | None = None, checkpoint: str | Path | None = None,
                    progress: bool = False) -> FriTable:
    """Sample every transition of ``grid`` on ``workers`` (one task per phase row, resumable through
    ``checkpoint``) and solve the value iteration."""
    from strider.parallel import Checkpoint, Executor, run_sweep
    from strider.parallel.sweep import fingerprint

    check_fri_choice(constraints)
    params = params or TrackParams()
    phases, max_rate = grid_axes(constraints, grid)
    rates = tuple(float(v) for v in np.linspace(0.0, max_rate, grid.rates))
    shares = tuple(float(v) for v in np.linspace(0.0, 1.0, grid.actions))
    jump = constraints.motion == "jump"
    flat = [constraints.stages[constraints.stage_at(float(t))].stance == FLAT for t in phases]
    # a jump's last row is where its value is scored (Eq. 5.17), not left
    sampled = range(grid.phases - 1) if jump else range(grid.phases)
    tasks = {str(i): (i, rates, shares if flat[i] else (SETTLING_SHARE,)) for i in sampled}
    solving = ("discount", "sweeps", "speed_width", "failure")    # these do not change the samples
    sampling = {k: v for k, v in asdict(grid).items() if k not in solving}
    mark = fingerprint(FORMAT, constraints.name, constraints.theta_range, sampling, asdict(params))
    store = Checkpoint(checkpoint, mark) if checkpoint is not None else None
    start = time.perf_counter()
    with Executor(backend, workers=workers, setup=partial(make_sampler, constraints, grid, params)) as ex:
        used = ex.workers
        rows = run_sweep(ex, _sample_row, tasks, store, progress=progress, description="FRI transitions")
    sample_seconds = time.perf_counter() - start
    if jump:    # the scored row: every action stays put, so its value is its score alone
        rows[str(grid.phases - 1)] = {"next": [[grid.phases - 1] * grid.actions] * grid.rates,
                                      "rate": [[r] * grid.actions for r in rates]}
    # every row as (rates, actions): a point-support row's one action stands for all
    nxt = np.stack([np.broadcast_to(rows[str(i)]["next"], (grid.rates, grid.actions)) for i in range(grid.phases)])
    arrival = np.stack([np.broadcast_to(np.array(rows[str(i)]["rate"], dtype=float), (grid.rates, grid.actions))
                        for i in range(grid.phases)])
    col = arrival / (max_rate / (grid.rates - 1))
    valid = (nxt >= 0) & (col >= 0.0) & (col <= grid.rates - 1)    # NaN (failed) compares False
    left = np.minimum(np.floor(np.where(valid, col, 0.0)), grid.rates - 2).astype(int)
    lower = np.where(valid, nxt * grid.rates + left, 0).reshape(-1, grid.actions)
    weight = np.clip(np.where(valid, col - left, 0.0), 0.0, 1.0).reshape(-1, grid.actions)
    valid = valid.reshape(-1, grid.actions)
    count = grid.rates * sum(grid.actions if flat[i] else 1 for i in sampled)
    start = time.perf_counter()
    grid_rates = np.array(rates)
    if jump:
        # Eq. 5.17: how near the rate is to the reference's as the heels rise (here a reward, so negated), scored
        # at the last row alone; every path crosses the same rows, so the discount ranks them all alike
        reward = np.zeros((grid.phases, grid.rates))
        reward[-1] = -np.abs(grid_rates - constraints.reference_rate_at(float(phases[-1])))
    else:
        reference = np.array([constraints.reference_rate_at(float(t)) for t in phases])
        reward = np.exp(-((grid_rates[None, :] - reference[:, None]) / (grid.speed_width * reference[:, None])) ** 2)
    result = value_iteration(Transitions(lower, lower + 1, weight, valid), reward.ravel(), grid.discount,
                             grid.sweeps, grid.failure)
    solved = time.perf_counter() - start
    policy = result.policy.reshape(grid.phases, grid.rates)
    share_of = np.array(shares)
    table_shares = np.where(policy >= 0, share_of[np.maximum(policy, 0)], np.nan)
    table_shares[~np.array(flat)] = np.nan          # a point support has no FRI to choose
    if jump:
        table_shares[-1] = np.nan                   # nor the scored row
    info = FriTableInfo(constraints.name, tuple(float(t) for t in table_range(constraints)), max_rate, grid,
                        sample_seconds, solved, used, backend, count, float(np.mean(policy >= 0)), result.change)
    return FriTable(info, table_shares, result.values.reshape(grid.phases, grid.rates))


def table_path(track: Path) -> Path:
    """Where the table made for a track file lives: beside it, with the suffix ``.fri``."""
    return track.with_suffix(SUFFIX)


def check_fri_choice(constraints: PhaseConstraints) -> None:
    """A clear error for a motion whose ground force has nowhere to go but one point in every stage (a point-footed
    walker's), so that no FRI policy has anything to choose and a table would be noise."""
    if not any(places_fri(stage) for stage in constraints.stages):
        raise UsageError(f"{constraints.name}: every stage of this motion stands on a single point (point feet), so "
                         "the ground force has no place to choose and there is no FRI policy to learn or use; "
                         "walk it with the default policy")


def policy_table(constraints: PhaseConstraints, track: Path, path: str | None = None) -> FriTable:
    """The VI table for ``constraints``: from ``path``, or the one beside the track file (a shipped motion's ships
    with it). Refused if it was made for another motion, or for one with no FRI to place."""
    check_fri_choice(constraints)
    where = Path(path) if path else table_path(track)
    if not path and not where.exists():
        raise UsageError(f"no FRI table for {track.stem} (looked for {where}); make one with "
                         f"'strider track vi {track}'")
    table = load_fri_table(where)
    if not table.matches(constraints):
        raise UsageError(f"{where}: an FRI table made for another motion ({table.info.track}, phases "
                         f"{table.info.theta_range[0]:.3f}..{table.info.theta_range[1]:.3f}); remake it with "
                         f"'strider track vi'")
    return table


# --- the file -----------------------------------------------------------------------------------------------------
def save_fri_table(table: FriTable, path: str | Path) -> Path:
    path = Path(path)
    info = asdict(table.info)
    header = {"format": FORMAT, "version": VERSION, **info}
    save_array_file(path, header, {"shares": table.shares, "values": table.values})
    return path


def load_fri_table(path: str | Path) -> FriTable:
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{path}: no such file (make one with 'strider track vi')")
    header, arrays = load_array_file(path, FORMAT, VERSION, "FRI table")
    shares, values = arrays.get("shares"), arrays.get("values")
    if shares is None or values is None:
        raise UsageError(f"{path}: the FRI table has no shares or values")
    try:
        grid = FriGrid(**header["grid"])
        info = FriTableInfo(header["track"], tuple(header["theta_range"]), float(header["max_rate"]), grid,
                            *(header[k] for k in ("sample_seconds", "solve_seconds", "workers", "backend",
                                                  "transitions", "feasible", "change")))
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{path}: malformed FRI table header ({exc})") from None
    if shares.shape != (grid.phases, grid.rates) or values.shape != shares.shape:
        raise UsageError(f"{path}: the table must be ({grid.phases}, {grid.rates}); it is {shares.shape}")
    return FriTable(info, shares, values)
