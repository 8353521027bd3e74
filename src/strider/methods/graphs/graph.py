"""A control graph as data (Liu et al. 2015, Sec. 4 and Fig. 10): nodes are learned skills, edges the transitions
allowed between them, each with its trigger.

A graph file is YAML::

    name: default
    start: walk                         # the node the graph starts in, from its skill's start state
    nodes:
      walk: {skill: walk, cycles: [2, 4]}   # a shipped skill's name, or a .skill.npz path (relative to this file)
      getup_faceup: {skill: getup_faceup}
      getup_facedown: {skill: getup_facedown}
    edges:
      - {from: walk, to: walk}                              # trigger end (the default)
      - {from: "*", to: getup_faceup, trigger: fall}
      - {from: "*", to: getup_facedown, trigger: fall}
      - {from: getup_faceup, to: walk}

Triggers:

- ``end``: when a visit of the node ends (a cyclic skill after its ``cycles`` cycles, drawn uniformly from the
  range on each visit; a skill that plays once after its pass), the next node is drawn uniformly among its ``end``
  edges (the runtime's random walk; the source's planner). A node without ``end`` edges plays on.
- ``fall``: when the node's skill falls, the get-ups its ``fall`` edges reach are the candidates; the one whose
  start lies as the character lies is taken (:class:`strider.methods.graphs.recovery.Recovery`). ``from: "*"``
  is every node. A fall with no ``fall`` edge, or a get-up that does not stand, starts the graph over.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from strider.datafile import Fields, load_yaml, resolve_data_file
from strider.errors import ConfigError
from strider.methods.graphs.controller_file import LearnedSkill
from strider.methods.graphs.skills import SUFFIX, load_named_skill

SHIPPED_GRAPHS = Path(__file__).parent / "data"
TRIGGERS = ("end", "fall")
ANY = "*"
MAX_CYCLES = 1000   # cycles per visit: beyond this a node is a sink, which an end-less node already is


@dataclass(frozen=True)
class Node:
    name: str
    skill: str                  # a shipped skill's name or a skill file's path
    cycles: tuple[int, int]     # cycles per visit, drawn uniformly in [low, high] (one pass for a one-pass skill)


@dataclass(frozen=True)
class Edge:
    source: str                 # a node, or ANY (every node)
    target: str
    trigger: str                # one of TRIGGERS


@dataclass(frozen=True)
class ControlGraph:
    name: str
    start: str
    nodes: dict[str, Node]
    edges: tuple[Edge, ...]

    def next_nodes(self, node: str) -> tuple[str, ...]:
        """Where a visit of ``node`` may go when it ends, in file order."""
        return self._targets(node, "end")

    def getups(self, node: str) -> tuple[str, ...]:
        """The get-up nodes a fall in ``node`` may go to, in file order."""
        return self._targets(node, "fall")

    def _targets(self, node: str, trigger: str) -> tuple[str, ...]:
        targets = [e.target for e in self.edges if e.trigger == trigger and e.source in (node, ANY)]
        return tuple(dict.fromkeys(targets))

    def load_skills(self, folder: Path | None = None) -> dict[str, LearnedSkill]:
        """Each node's learned skill; a path is relative to ``folder`` (the graph file's)."""
        skills = {}
        for node in self.nodes.values():
            name_or_path = node.skill
            if node.skill.endswith(SUFFIX) and folder is not None and not Path(node.skill).is_absolute():
                name_or_path = str(folder / node.skill)
            skills[node.name] = load_named_skill(name_or_path)
        return skills


def graph_file(name_or_path: str) -> Path:
    """A shipped graph by name, or a graph file by path."""
    return resolve_data_file(name_or_path, SHIPPED_GRAPHS, "control graph")


def load_graph(name_or_path: str) -> ControlGraph:
    """A graph file, validated: every field, node and edge named in the message of what is wrong."""
    path = graph_file(name_or_path)
    return parse_graph(load_yaml(path), str(path))


def parse_graph(data: dict, source: str) -> ControlGraph:
    top = Fields(data, source)
    top.reject_unknown({"name", "start", "nodes", "edges"})
    raw_nodes = top.mapping("nodes")
    if not raw_nodes.data:
        raise top.error("nodes", "a graph needs at least one node")
    nodes = {}
    for name in raw_nodes.data:
        fields = raw_nodes.mapping(str(name))
        fields.reject_unknown({"skill", "cycles"})
        nodes[str(name)] = Node(str(name), fields.string("skill"), _cycles(fields))
    if ANY in nodes:
        raise raw_nodes.error(ANY, f"{ANY!r} means every node in an edge; it cannot name a node")
    start = top.string("start")
    if start not in nodes:
        raise top.error("start", f"no node named {start!r} (nodes: {', '.join(nodes)})")
    edges = []
    for item in top.items("edges", []):
        item.reject_unknown({"from", "to", "trigger"})
        origin, target = item.string("from"), item.string("to")
        trigger = item.string("trigger", "end", choices=TRIGGERS)
        if origin != ANY and origin not in nodes:
            raise item.error("from", f"no node named {origin!r} (nodes: {', '.join(nodes)}, or {ANY!r} for all)")
        if target not in nodes:
            raise item.error("to", f"no node named {target!r} (nodes: {', '.join(nodes)})")
        edges.append(Edge(origin, target, trigger))
    return ControlGraph(top.string("name", Path(source).stem), start, nodes, tuple(edges))


def _cycles(fields: Fields) -> tuple[int, int]:
    value = fields.raw("cycles", 1)
    low_high = value if isinstance(value, list) else [value]
    if len(low_high) not in (1, 2) or any(isinstance(v, bool) or not isinstance(v, int) for v in low_high):
        raise fields.error("cycles", f"expected a whole number or a range [low, high], got {value!r}")
    low, high = low_high[0], low_high[-1]
    if not 1 <= low <= high <= MAX_CYCLES:
        raise fields.error("cycles", f"expected 1 <= low <= high <= {MAX_CYCLES}, got {value!r}")
    return low, high


def check_skills(graph: ControlGraph, skills: dict[str, LearnedSkill], source: str) -> None:
    """What the skills themselves decide: a fall edge leads to a skill that plays once (a get-up), and the get-ups
    one fall may choose between are different skills."""
    for edge in graph.edges:
        if edge.trigger == "fall" and skills[edge.target].reference.cyclic:
            raise ConfigError(source, f"edges ({edge.source} -> {edge.target})",
                              f"a fall edge leads to a get-up, a skill that plays once; {skills[edge.target].name} "
                              "is cyclic")
    for node in graph.nodes:
        names = [skills[g].name for g in graph.getups(node)]
        if len(set(names)) != len(names):
            raise ConfigError(source, f"edges (fall from {node})", f"two get-ups play the same skill ({names})")
