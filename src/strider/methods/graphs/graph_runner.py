"""Running a control graph (Liu et al. 2015, Sec. 6.2: "a planner walks the graph, a fall triggers ragdoll →
rising skill"): the character plays one node's learned skill at a time, fragment by fragment under its policies,
and at the end of each visit a seeded random walk takes one of the node's ``end`` edges. A fall leaves through the
node's ``fall`` edges: ragdoll, then the get-up that fits how the character lies
(:class:`~strider.methods.graphs.recovery.Recovery`), whose last frame held is the stand; from the get-up the walk
goes on along its ``end`` edges.

A transition starts the next skill at its first fragment from wherever the character is. The source learns its
transitions, blended into the motion graph, together with the skills; skills learned one at a time, as strider's
are, meet at a transition only as well as one skill's end resembles the next one's start.

A fall that no ``fall`` edge catches, or a get-up that does not stand within the recovery's time, starts the graph
over in its start node's start state (the clock runs on); the result counts these restarts.

With ``search`` (strider's, not real time) no learned policy plays: the random walk is drawn ahead and searched by
SAMCON as one walk through every node's fragments indexed as one table, so the search can roll back across a
transition, and the path found plays (:mod:`strider.methods.graphs.search`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from strider.errors import UsageError, require_finite
from strider.methods.graphs.controller_file import LearnedSkill
from strider.methods.graphs.graph import ControlGraph, check_skills, graph_file, load_graph
from strider.methods.graphs.player import SkillPlayer
from strider.methods.graphs.recovery import Recovery, RecoveryParams, RecoveryResult
from strider.methods.graphs.reference import Reference, joined
from strider.methods.graphs.search import play_path, search_path
from strider.sim import World

STATE_TIME = 0        # index of the clock in an integration state (MuJoCo's mjSTATE_TIME comes first)
SEARCH_STAGES = 300   # fragments per searched stretch of the walk (about 30 s): a search keeps every stage's picks


@dataclass(frozen=True)
class GraphRunParams:
    seed: int = 0                                         # the random walk's draws (and the searches')
    recovery: RecoveryParams = field(default_factory=RecoveryParams)
    phase_reset: bool = True                              # as SkillPlayer's
    search: bool = False   # strider's, not real time: the walk searched by SAMCON through the graph's fragments
                           # and the path played, get-ups too (with the recovery's search settings)

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise UsageError(f"the graph run's seed must be 0 or more, got {self.seed}")
        if self.search and not self.recovery.search:
            object.__setattr__(self, "recovery", replace(self.recovery, search=True))


@dataclass(frozen=True)
class Visit:
    node: str
    start: float          # world time
    end: float
    ended: str            # "end" (its cycles or pass played), "fall", "time" (the run's end); a get-up after a
                          # fall (ragdoll included): "stood" or "gave up"


@dataclass(frozen=True)
class GraphRunResult:
    seconds: float                # simulated time
    falls: int                    # falls while playing a node (a get-up that does not stand is not one more)
    stood: int                    # falls that ended standing, by a get-up
    restarts: int                 # the graph started over (a fall nothing caught, or no stand in time)
    transitions: int              # visits that ended and went on along an end edge
    visits: tuple[Visit, ...]
    fall_times: tuple[float, ...] = ()   # world time of each fall

    def seconds_in(self, node: str) -> float:
        return sum(v.end - v.start for v in self.visits if v.node == node)


class GraphRunner:
    """Plays ``graph`` with its nodes' ``skills`` on one deepmimic humanoid (a fresh flat-ground world unless
    ``world`` is given)."""

    def __init__(self, graph: ControlGraph, skills: dict[str, LearnedSkill], params: GraphRunParams = GraphRunParams(),
                 world: World | None = None, source: str = "graph", backend: str = "serial", workers: int = 1):
        missing = sorted(set(graph.nodes) - set(skills))
        if missing:
            raise UsageError(f"control graph {graph.name}: no skill given for node(s) {', '.join(missing)}")
        check_skills(graph, skills, source)
        self.graph, self.skills, self.params = graph, skills, params
        start = SkillPlayer(skills[graph.start], world=world, phase_reset=params.phase_reset)
        self.world = start.world
        self.players = {name: start if name == graph.start else
                        SkillPlayer(skills[name], world=self.world, phase_reset=params.phase_reset)
                        for name in graph.nodes}
        self._recoveries: dict[tuple[str, ...], Recovery] = {}
        self._backend, self._workers = backend, workers
        self._on_step: Callable[[World], None] | None = None
        self._searches = 0
        self._joined: Reference | None = None        # every node's fragments as one table (searches)
        self._offsets: dict[str, int] = {}
        self.on_visit: Callable[[Visit], None] | None = None   # called as each visit ends (a progress bar)

    @classmethod
    def from_file(cls, name_or_path: str, params: GraphRunParams = GraphRunParams(), workers: int = 1) -> GraphRunner:
        """A shipped graph by name, or a graph file, with its nodes' skills (a skill file's path is relative to the
        graph file's folder); searches run on ``workers`` processes, serially on one."""
        path = graph_file(name_or_path)
        graph = load_graph(str(path))
        return cls(graph, graph.load_skills(path.parent), params, source=str(path),
                   backend="processes" if workers > 1 else "serial", workers=workers)

    @property
    def on_step(self) -> Callable[[World], None] | None:
        """Called after every physics step (a video), whichever skill or get-up is playing."""
        return self._on_step

    @on_step.setter
    def on_step(self, hook: Callable[[World], None] | None) -> None:
        self._on_step = hook
        for player in self.players.values():
            player.runner.on_step = hook
        for recovery in self._recoveries.values():
            recovery.on_step = hook

    def recovery(self, getups: tuple[str, ...]) -> Recovery:
        """The recovery choosing between the get-up nodes ``getups`` (built once per set)."""
        if getups not in self._recoveries:
            recovery = Recovery([self.skills[g] for g in getups], self.world, self.params.recovery,
                                backend=self._backend, workers=self._workers)
            recovery.on_step = self._on_step
            self._recoveries[getups] = recovery
        return self._recoveries[getups]

    def restart(self) -> None:
        """The start node's skill's start state, with the clock running on."""
        state = self.skills[self.graph.start].reference.start_state.copy()
        state[STATE_TIME] = self.world.time
        self.world.set_integration_state(state)

    def run(self, seconds: float) -> GraphRunResult:
        """Walk the graph for ``seconds`` of simulated time from the start node's start state."""
        require_finite("the graph's run length", seconds, "s", positive=True)
        rng = np.random.default_rng(self.params.seed)
        self._searches = 0
        self.world.set_integration_state(self.skills[self.graph.start].reference.start_state)
        begin = self.world.time
        until = begin + seconds
        node, visits, fall_times = self.graph.start, [], []
        stood = restarts = 0
        while self.world.time < until - 1e-9:
            if self.params.search:
                node, ended = self._searched_visits(node, rng, until, visits)
            else:
                started = self.world.time
                ended = self._visit(node, rng, until)
                self._visited(visits, Visit(node, started, self.world.time, ended))
            if ended == "time":
                # the while's test ends the run; a searched stretch, planned by the fragments' nominal lengths, may
                # come short of it where phase reset ended fragments early, and goes on in the same node
                continue
            if ended == "fall":
                fall_times.append(self.world.time)
                getups = self.graph.getups(node)
                started = self.world.time
                getup, result = self._get_up(getups) if getups else (None, None)
                if result is not None:
                    self._visited(visits, Visit(getup, started, self.world.time, "stood" if result.stood
                                                else "gave up"))
                if result is None or not result.stood:
                    restarts += 1
                    self.restart()
                    node = self.graph.start
                    continue
                stood += 1
                node = getup
            node = self._draw_next(node, rng) or node
        transitions = sum(v.ended in ("end", "stood") for v in visits[:-1])   # each went on to the next
        return GraphRunResult(self.world.time - begin, len(fall_times), stood, restarts, transitions, tuple(visits),
                              tuple(fall_times))

    def _visited(self, visits: list[Visit], visit: Visit) -> None:
        visits.append(visit)
        if self.on_visit is not None:
            self.on_visit(visit)

    def _visit(self, node: str, rng: np.random.Generator, until: float) -> str:
        """Play one visit of ``node``: its cycles (drawn now) or its one pass. How it ended: end, fall or time."""
        player = self.players[node]
        cycles = self._draw_cycles(node, rng)
        player.begin()
        played = 0
        while self.world.time < until - 1e-9:
            if player.step():
                return "fall"
            if player.fragment == 0:
                played += 1
                if played == cycles:
                    return "end"
        return "time"

    def _draw_cycles(self, node: str, rng: np.random.Generator) -> int:
        """A visit's cycles: drawn from the node's range; 1 for a one-pass skill; 0 (on until the run's end) for a
        node with nowhere to go."""
        low, high = self.graph.nodes[node].cycles
        cycles = int(rng.integers(low, high + 1)) if high > low else low
        if not self.skills[node].reference.cyclic:
            return 1
        return cycles if self.graph.next_nodes(node) else 0

    def _draw_next(self, node: str, rng: np.random.Generator) -> str | None:
        following = self.graph.next_nodes(node)
        if not following:
            return None
        return following[int(rng.integers(len(following)))] if len(following) > 1 else following[0]

    def _searched_visits(self, node: str, rng: np.random.Generator, until: float, visits: list[Visit]
                         ) -> tuple[str, str]:
        """Visits from ``node`` on, planned ahead by the random walk (up to SEARCH_STAGES fragments or the run's
        end), searched as one SAMCON walk through the graph's fragments, so that the search rolls back across
        transitions, and played. The node of the last visit played, and how it ended: end (the walk's next step
        is drawn by the caller), fall (the search gave up in it) or time."""
        if self._joined is None:
            self._joined, offsets = joined([self.skills[n].reference for n in self.graph.nodes], self.graph.name)
            self._offsets = dict(zip(self.graph.nodes, offsets))
        remaining = until - self.world.time
        plan, stages, seconds = [], [], 0.0
        while True:
            reference = self.skills[node].reference
            lengths = np.diff(reference.bounds) * self.world.timestep
            cycles = self._draw_cycles(node, rng)
            whole = cycles if cycles else int(np.ceil((remaining - seconds) / lengths.sum()))
            visit = self._offsets[node] + np.tile(np.arange(reference.fragments), whole)
            durations = np.tile(lengths, whole)
            cut = int(np.searchsorted(np.cumsum(durations), remaining - seconds - 1e-9)) + 1
            if cut < len(visit):   # the run ends in this visit
                plan.append((node, len(stages), len(stages) + cut, "time"))
                stages.extend(visit[:cut])
                break
            plan.append((node, len(stages), len(stages) + len(visit), "end"))
            stages.extend(visit)
            seconds += float(durations.sum())
            if len(stages) >= SEARCH_STAGES or not cycles:
                break
            node = self._draw_next(node, rng) or node
        path = search_path(self._joined, np.array(stages), self.world, self.params.recovery.searching,
                           self.params.seed, self._searches, self._backend, self._workers)
        self._searches += 1
        ends_at = {stop - 1: i for i, (_, _, stop, _) in enumerate(plan)}
        starts = [self.world.time]

        def visit_done(stage: int) -> None:
            if stage in ends_at:
                i = ends_at[stage]
                self._visited(visits, Visit(plan[i][0], starts[-1], self.world.time, plan[i][3]))
                starts.append(self.world.time)

        play_path(self._joined, self.world, path, self._on_step, visit_done)
        if path.complete:
            return plan[-1][0], plan[-1][3]
        # the search gave up in this visit: a fall there
        i = next(i for i, (_, begin, stop, _) in enumerate(plan) if begin <= len(path.fragments) < stop)
        self._visited(visits, Visit(plan[i][0], starts[-1], self.world.time, "fall"))
        return plan[i][0], "fall"

    def _get_up(self, getups: tuple[str, ...]) -> tuple[str, RecoveryResult]:
        """Ragdoll and get up by one of the get-up nodes ``getups``: the node of the last get-up tried, and how the
        recovery went."""
        result = self.recovery(getups).recover()
        names = [self.skills[g].name for g in getups]
        return getups[names.index(result.getups[-1])] if result.getups else getups[0], result
