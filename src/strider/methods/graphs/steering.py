"""Steering a cyclic skill (a walk, a run) to waypoints by search (strider's ``steer``; not real time).

The source steers its learned walk by the actions its policies take under gentle sideways pushes, recorded and
added back at will (seed 002, Sec. 6.1; control-graphs.md Sec. 4, "Steering": δ_k from ±60 N on the chest for
20 cycles). The shipped learned walk falls 1.2-1.4 s into such a push (and 3.5 s in unpushed), so it has no
20 pushed cycles to record from (docs/graphs.md, "Steering").

Steering here turns the reference instead, and SAMCON searches it from where the character is
(:mod:`strider.methods.graphs.search`):

* The cycle is turned steadily at a few rates each side of straight, up to ``max_turn`` degrees per cycle
  (:meth:`Reference.turning`), and the rates' fragments are joined into one table (the graph runner's way), so
  each searched fragment takes its own rate.
* A planner keeps a heading for the walk (its sway through the cycle left out) and picks the rates: fragment by
  fragment, the rate nearest the one that would bring the heading round to the goal's bearing in ``settle``
  cycles, the position carried ahead at the reference's speed.
* Each fragment is scored in a frame turned to the planned heading (at the fragment's phase of the sway), not
  the character's own facing at its start, which the source's cost uses: measured from its own facing, a
  fragment that turns too little or too much costs nothing the next fragment makes up: searched straight, the
  walk's heading strayed by up to 31 degrees in five cycles. Kept to the planned heading, the walk turns where
  the plan turns.
* The search cost weighs the COM's velocity by ``velocity_weight`` (the source's 0.1): with it that light, the
  body turns to the heading and its path goes on the old way, sideways or backwards.
* A stretch of ``stretch`` fragments is planned and searched, with ``lookahead`` fragments more that are
  searched and not played, so that the stretch played is one the search found a way on from; then the next is
  planned from where the character got to. A waypoint within ``reach`` of the root is reached, and the next
  becomes the goal; after the last the walk goes on straight.
* A search that gives up leaves the character where its path ends, and it falls there. With ``recover``
  (strider's) it gets up as the control graph's fall edge has it: the ragdoll, then a get-up searched from where it
  lies (:class:`Recovery` with ``search``; the learned get-ups do not stand), and the steering goes on from the
  stand at the cycle's first fragment. Without, or when the get-up fails, the run ends at the fall.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from strider.errors import UsageError
from strider.methods.graphs.controller_file import LearnedSkill
from strider.methods.graphs.features import facing_yaw
from strider.methods.graphs.recovery import GETUPS, Recovery, RecoveryParams
from strider.methods.graphs.reference import graph_world, joined
from strider.methods.graphs.scoring import DEFAULT_WEIGHTS
from strider.methods.graphs.search import SearchParams, play_path, search_path, search_sampler
from strider.methods.graphs.skills import load_named_skill
from strider.sim import World

MAX_TURN_LIMIT = 180.0   # degrees per cycle: the turned reference's own limit (the learner's turn_degrees)


@dataclass(frozen=True)
class SteerParams:
    max_turn: float = 90.0     # degrees per cycle at full steering (strider's; the shipped turn skill's too)
    levels: int = 3            # turn rates each side of straight: max_turn · i / levels, i = 1 ... levels
    settle: float = 1.0        # cycles over which the planner means to take out the heading's error
    reach: float = 0.5         # m: a waypoint this near the root (on the ground) is reached
    stretch: int = 10          # fragments planned, searched and played at a time (about 1 s)
    lookahead: int = 10        # fragments more searched after each stretch and not played: the stretch played
                               # is one the search found a way on from
    keep_heading: bool = True      # score each fragment in the planned heading's frame (strider's; off: in the
                                   # character's facing at the fragment's start, as the source's cost does)
    root_weight: float = 4.0       # the search cost's w_r (the source's)
    velocity_weight: float = 10.0  # its w_v (the source's 0.1 lets the body turn and its path go on: it crabs)
    search: SearchParams = field(default_factory=lambda: SearchParams(particles=200))
    recover: bool = True           # after a search gives up, get up and steer on (strider's; off: the run ends
                                   # at the first fall)
    getup: RecoveryParams = field(default_factory=lambda: RecoveryParams(search=True))   # how (its seed: ``seed``)
    seed: int = 0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.max_turn) and 0 < self.max_turn <= MAX_TURN_LIMIT):
            raise UsageError(f"the steering's largest turn must lie in (0, {MAX_TURN_LIMIT:g}] degrees per cycle, "
                             f"got {self.max_turn}")
        if self.levels < 1:
            raise UsageError(f"the steering needs at least 1 turn rate each side, got {self.levels}")
        if not (math.isfinite(self.settle) and self.settle > 0):
            raise UsageError(f"the steering's settling time must be a positive number of cycles, got {self.settle}")
        if not (math.isfinite(self.reach) and self.reach > 0):
            raise UsageError(f"the waypoints' reach must be a positive distance, got {self.reach} m")
        for name in ("root_weight", "velocity_weight"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 0):
                raise UsageError(f"the steering's {name.replace('_', ' ')} must be 0 or more, got {getattr(self, name)}")
        if self.stretch < 1:
            raise UsageError(f"a steering stretch must have at least 1 fragment, got {self.stretch}")
        if self.lookahead < 0:
            raise UsageError(f"the steering's lookahead must be 0 fragments or more, got {self.lookahead}")
        if self.seed < 0:
            raise UsageError(f"the steering's seed must be 0 or more, got {self.seed}")


@dataclass(frozen=True)
class SteerResult:
    seconds: float                       # simulated time played
    reached: tuple[float, ...]           # simulated time each waypoint was reached, in order
    waypoints: int                       # waypoints asked for
    gave_up: bool                        # the run ended early: a search gave up (the character fell there) and it
                                         # did not get up, or ``recover`` is off
    falls: tuple[float, ...]             # simulated time of each search that gave up (a fall)
    stood: tuple[float, ...]             # simulated time each get-up ended standing
    distance: float                      # m, from the root to the goal at the end (the last waypoint once all are
                                         # reached)
    track: np.ndarray                    # (n, 4): time, x, y, heading (rad) at every fragment's end played
    turns: np.ndarray                    # (n,) the planned turn rate of every fragment played, degrees per cycle
    searches: int

    @property
    def all_reached(self) -> bool:
        return len(self.reached) == self.waypoints


def falls_text(falls: Sequence[float], stood: Sequence[float]) -> str:
    """The falls of a steered run (the times its searches gave up) and the stands after them, as a clause to
    follow a report ("" without a fall)."""
    if not falls:
        return ""
    stands = ", ".join(f"{t:.1f}" for t in stood)
    return (f"; {len(falls)} fall(s) where a search gave up (at {', '.join(f'{t:.1f}' for t in falls)} s)"
            + (f", standing again at {stands} s" if stands else ""))


def check_waypoints(waypoints: Sequence[Sequence[float]]) -> np.ndarray:
    points = np.asarray(waypoints, dtype=float)
    if points.ndim != 2 or points.shape[1] != 2 or len(points) == 0:
        raise UsageError("steering needs one or more waypoints, each an (x, y) pair in metres")
    if not np.isfinite(points).all():
        raise UsageError("the waypoints must be finite numbers")
    return points


class Steering:
    """Steers ``skill`` (cyclic) on a deepmimic humanoid of ``world`` (a fresh flat-ground world by default) from
    the skill's start state; searches run on ``workers`` processes (``backend``). With ``params.recover`` the
    character gets up after a fall by the one-pass skills ``getups`` (the shipped face-up and face-down get-ups by
    default), each searched from where it lies."""

    def __init__(self, skill: LearnedSkill, params: SteerParams = SteerParams(), world: World | None = None,
                 backend: str = "serial", workers: int = 1, getups: Sequence[LearnedSkill] | None = None):
        reference = skill.reference
        if not reference.cyclic:
            raise UsageError(f"{skill.name} plays once; steering takes a cyclic skill (a walk, a run)")
        self.skill, self.params = skill, params
        self.world = world or graph_world()
        self.recovery: Recovery | None = None
        if params.recover:
            if getups is None:
                getups = [load_named_skill(name) for name in GETUPS]
            self.recovery = Recovery(list(getups), self.world, replace(params.getup, seed=params.seed),
                                     backend=backend, workers=workers)
        self.rates = np.radians(params.max_turn) * np.arange(-params.levels, params.levels + 1) / params.levels
        self.table, self._offsets = joined([reference.turning(r) if r else reference for r in self.rates],
                                           f"{reference.name}_steered")
        lengths = np.diff(reference.bounds)
        self._turns = np.outer(self.rates, lengths / reference.steps)   # (rates, K): each fragment's turn
        seconds = lengths * self.world.timestep
        # the reference's forward speed: its fragments' forward COM speed at their ends, weighted by their length
        self.speed = float(np.dot([end.com_velocity[0] for end in reference.ends], seconds) / seconds.sum())
        self._seconds = seconds
        # The root's heading sways through a walk's cycle; the planner steers the heading with the sway at the
        # fragment's phase taken off, as the reference has it (its yaw at each fragment's start, less its trend).
        yaw = np.concatenate([[0.0], np.cumsum([facing_yaw(end.root_quat) for end in reference.ends])])
        self._sway = yaw[:-1] - yaw[-1] * reference.bounds[:-1] / reference.steps
        self._sway -= self._sway.mean()
        self._drift = yaw[-1] * lengths / reference.steps   # the straight cycle's own turn
        self._backend, self._workers = backend, workers
        self.world.set_integration_state(reference.start_state)
        self._start: tuple[np.ndarray, float] = (np.zeros(2), 0.0)
        self._start = self.pose()
        self.on_step: Callable[[World], None] | None = None   # after every physics step (a video)
        self.on_stretch: Callable[[float], None] | None = None   # after every stretch, with the world's time

    def pose(self) -> tuple[np.ndarray, float]:
        """The root's ground position (x, y) and its facing heading (rad), in the start frame: from the root's
        ground point in the skill's start state, x along its facing heading there, y to its left."""
        position, orientation = self.world.character().root_pose()
        start, heading = self._start
        cos, sin = math.cos(heading), math.sin(heading)
        dx, dy = position[0] - start[0], position[1] - start[1]
        return (np.array([cos * dx + sin * dy, -sin * dx + cos * dy]),
                math.remainder(facing_yaw(orientation) - heading, 2 * math.pi))

    def plan(self, position: np.ndarray, heading: float, goal: np.ndarray | None, fragment: int,
             count: int) -> tuple[np.ndarray, np.ndarray]:
        """The turn rate (an index into ``rates``) of each of the ``count`` fragments from ``fragment`` on, and the
        planned heading at each one's start and after the last ((count + 1,), rad, its sway at the fragment's
        phase left out), from ``heading`` at the first one's start. Each rate is the one nearest the rate that
        would take out the error between the heading and the goal's bearing in ``settle`` cycles, the position
        carried ahead at the reference's speed (straight with no goal)."""
        K = len(self._seconds)
        choices = np.empty(count, dtype=int)
        headings = np.empty(count + 1)
        position = position.astype(float).copy()
        for i in range(count):
            k = (fragment + i) % K
            headings[i] = heading
            if goal is None:
                choices[i] = self.params.levels
            else:
                bearing = math.atan2(goal[1] - position[1], goal[0] - position[0])
                error = math.remainder(bearing - heading, 2 * math.pi)
                wanted = float(np.clip(error / self.params.settle, self.rates[0], self.rates[-1]))
                choices[i] = int(np.argmin(np.abs(self.rates - wanted)))
            heading += float(self._turns[choices[i], k] + self._drift[k])
            position += self.speed * self._seconds[k] * np.array([math.cos(heading), math.sin(heading)])
        headings[count] = heading
        return choices, headings

    def run(self, waypoints: Sequence[Sequence[float]], seconds: float) -> SteerResult:
        """From the skill's start state, steer through ``waypoints`` ((x, y) in metres, in order) for ``seconds``
        of simulated time, or until a search gives up."""
        points = check_waypoints(waypoints)
        if not (math.isfinite(seconds) and seconds > 0):
            raise UsageError(f"the steering's run length must be positive, got {seconds} s")
        reference = self.skill.reference
        K = reference.fragments
        self.world.set_integration_state(reference.start_state)
        begin = self.world.time
        until = begin + seconds
        reached: list[float] = []
        track: list[tuple[float, float, float, float]] = []
        turns: list[float] = []
        fragment, searches, gave_up = 0, 0, False
        falls: list[float] = []
        stood: list[float] = []
        planned = self.pose()[1] - float(self._sway[0])   # the heading the search keeps to, sway left out

        def goal() -> np.ndarray | None:
            return points[len(reached)] if len(reached) < len(points) else None

        def after(_: int) -> None:   # each fragment played
            position, heading = self.pose()
            track.append((self.world.time - begin, float(position[0]), float(position[1]), heading))
            target = goal()
            if target is not None and np.linalg.norm(target - position) <= self.params.reach:
                reached.append(self.world.time - begin)

        with search_sampler(self.table, self.world, self._backend, self._workers,
                            replace(DEFAULT_WEIGHTS, root=self.params.root_weight,
                                    com_velocity=self.params.velocity_weight)) as sampler:
            while self.world.time < until - 1e-9 and not gave_up:
                left = until - self.world.time
                count = 0
                while count < self.params.stretch and left > 1e-9:   # the stretch, cut at the run's end
                    left -= self._seconds[(fragment + count) % K]
                    count += 1
                position, heading = self.pose()
                if not self.params.keep_heading:   # the search does not keep to the plan: start from where it went
                    planned = heading - float(self._sway[fragment])
                searched = count + self.params.lookahead
                choices, headings = self.plan(position, planned, goal(), fragment, searched)
                ks = (fragment + np.arange(searched)) % K
                stages = np.asarray(self._offsets)[choices] + ks
                path = search_path(self.table, stages, self.world, self.params.search, self.params.seed, searches,
                                   sampler=sampler, headings=(self._start[1] + headings[:-1] + self._sway[ks]
                                                              if self.params.keep_heading else None))
                searches += 1
                played = min(count, len(path.fragments))
                planned = float(headings[played])
                play_path(self.table, self.world, path, self.on_step, after, limit=played)
                turns.extend(np.degrees(self.rates[choices[:played]]).tolist())
                fragment = (fragment + played) % K
                if played < count:   # the search gave up: the character falls where its path ends
                    falls.append(self.world.time - begin)
                    gave_up = not self._get_up()
                    if not gave_up:
                        stood.append(self.world.time - begin)
                        fragment = 0
                        planned = self.pose()[1] - float(self._sway[0])
                if self.on_stretch is not None:
                    self.on_stretch(self.world.time - begin)
        position, _ = self.pose()
        last = goal() if goal() is not None else points[-1]
        return SteerResult(self.world.time - begin, tuple(reached), len(points), gave_up, tuple(falls), tuple(stood),
                           float(np.linalg.norm(last - position)), np.array(track).reshape(-1, 4),
                           np.array(turns), searches)

    def _get_up(self) -> bool:
        """After a fall: get up (``recover``); True once standing."""
        if self.recovery is None:
            return False
        self.recovery.on_step = self.on_step
        return self.recovery.recover().stood
