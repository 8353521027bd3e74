"""Control graphs as data and their runner (Liu et al. 2015, Sec. 6.2), on MuJoCo with the DeepMimic humanoid and
the shipped skills learned from the real DeepMimic clips."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from strider.bench.protocol import protocol_path
from strider.cli.main import main
from strider.errors import ConfigError, UsageError
from strider.methods.graphs.actions import POLICY_JOINTS, ActionLayout
from strider.methods.graphs.fragments import FragmentRunner
from strider.methods.graphs.graph import ANY, load_graph, parse_graph
from strider.methods.graphs.graph_runner import GraphRunner, GraphRunParams
from strider.methods.graphs.player import SkillPlayer
from strider.methods.graphs.recovery import RecoveryParams
from strider.methods.graphs.reference import TIMESTEP, graph_world, joined
from strider.methods.graphs.skills import SHIPPED, load_named_skill


@pytest.fixture(scope="module")
def skills():
    return {name: load_named_skill(name) for name in ("walk", "getup_faceup", "getup_facedown")}


def _graph(**fields):
    data = {"name": "test", "start": "walk", "nodes": {"walk": {"skill": "walk"}}, "edges": []}
    data.update(fields)
    return parse_graph(data, "test.yaml")


def _walk_falls_at(skill) -> float:
    result = SkillPlayer(skill).run(60.0)
    assert result.fell   # the shipped walk falls within a minute; what follows relies on it
    return result.seconds


def test_the_shipped_graph_names_its_skills_and_its_fall_edges():
    graph = load_graph("default")
    assert graph.start == "walk"
    assert graph.next_nodes("walk") == ("walk",)
    assert graph.getups("walk") == ("getup_faceup", "getup_facedown")   # from "*"
    assert graph.next_nodes("getup_faceup") == ("walk",)
    assert set(graph.load_skills()) == set(graph.nodes)
    full = load_graph("full")   # the skills that ship, each reachable from the walk
    assert set(full.next_nodes("walk")) == {"walk", "run", "turn", "kick", "cartwheel"}
    assert full.getups("kick") == full.getups("cartwheel") == graph.getups("walk")
    skills = full.load_skills()
    assert not skills["kick"].reference.cyclic and skills["turn"].reference.cyclic
    # the cartwheel is a cycle that rests on its hands (merged into the forearms) mid-cycle
    cartwheel = skills["cartwheel"].reference
    assert cartwheel.cyclic and {"left_elbow", "right_elbow"} <= set().union(
        *(cartwheel.resting_bodies(k) for k in range(cartwheel.fragments)))


@pytest.mark.parametrize("fields, where", [
    ({"start": "run"}, "start"),
    ({"edges": [{"from": "walk", "to": "run"}]}, "edges[0].to"),
    ({"edges": [{"from": "jog", "to": "walk"}]}, "edges[0].from"),
    ({"edges": [{"from": "walk", "to": "walk", "trigger": "push"}]}, "edges[0].trigger"),
    ({"nodes": {"walk": {"skill": "walk", "cycles": [3, 2]}}}, "nodes.walk.cycles"),
    ({"nodes": {"walk": {"skill": "walk", "cycles": 1.5}}}, "nodes.walk.cycles"),
    ({"nodes": {"walk": {"skill": "walk", "speed": 2}}}, "nodes.walk.speed"),
    ({"nodes": {}}, "nodes"),
    ({"nodes": {ANY: {"skill": "walk"}}}, ANY),
])
def test_a_malformed_graph_is_one_error_naming_the_field(fields, where):
    with pytest.raises(ConfigError) as error:
        _graph(**fields)
    assert where in str(error.value)


def test_a_fall_edge_must_lead_to_a_skill_that_plays_once(skills):
    graph = _graph(nodes={"walk": {"skill": "walk"}, "again": {"skill": "walk"}},
                   edges=[{"from": "walk", "to": "again", "trigger": "fall"}])
    with pytest.raises(ConfigError, match="cyclic"):
        GraphRunner(graph, {"walk": skills["walk"], "again": skills["walk"]})
    with pytest.raises(UsageError, match="again"):
        GraphRunner(graph, {"walk": skills["walk"]})


def test_visits_end_after_their_cycles_and_the_walk_draws_the_next_node_from_the_seed(skills):
    """Two nodes play the same walk, each going on to either; a visit is one cycle (phase reset moves its end
    by the strikes, within a fragment). The seed alone decides the sequence; the same seed, the same run bit
    for bit."""
    falls_at = _walk_falls_at(skills["walk"])
    graph = _graph(nodes={"walk": {"skill": "walk"}, "other": {"skill": "walk"}},
                   edges=[{"from": a, "to": b} for a in ("walk", "other") for b in ("walk", "other")])
    cycle = skills["walk"].reference.steps * TIMESTEP

    def run(seed):
        runner = GraphRunner(graph, {"walk": skills["walk"], "other": skills["walk"]}, GraphRunParams(seed=seed))
        result = runner.run(falls_at - 0.5)
        return result, runner.world.integration_state()

    first, state = run(0)
    ended = [v for v in first.visits if v.ended == "end"]
    assert len(ended) >= 2 and first.transitions == len(ended) and first.falls == 0
    for visit in ended:
        assert abs((visit.end - visit.start) - cycle) < 0.1
    again, state_again = run(0)
    assert again.visits == first.visits and np.array_equal(state_again, state)
    sequences = {tuple(v.node for v in run(seed)[0].visits) for seed in range(6)}
    assert len(sequences) > 1


def test_a_fall_goes_to_the_getup_that_fits_and_a_getup_that_does_not_stand_starts_the_graph_over(skills):
    """The shipped walk falls; the learned get-ups replay their open loop, which stands only from their own start,
    so the recovery gives up and the graph starts over in the walk's start state, the clock running on."""
    falls_at = _walk_falls_at(skills["walk"])
    graph = load_graph("default")
    runner = GraphRunner(graph, skills, GraphRunParams(seed=0))
    result = runner.run(2 * falls_at + 12.0)
    first, recovery = result.visits[:2]
    assert (first.node, first.ended) == ("walk", "fall") and abs(first.end - falls_at) < 1e-9
    assert recovery.node in graph.getups("walk") and recovery.ended == "gave up"
    assert result.restarts == result.falls - result.stood >= 1
    assert result.visits[2].node == "walk" and result.visits[2].start == recovery.end
    # started over: the walk falls as long after its restart as it did from the start (its visits may end and go
    # on to the walk in between: the walk plays on seamlessly)
    assert result.fall_times[0] == first.end
    assert abs(result.fall_times[1] - result.visits[2].start - falls_at) < 1e-6


def test_without_a_fall_edge_a_fall_starts_the_graph_over_at_once(skills):
    falls_at = _walk_falls_at(skills["walk"])
    result = GraphRunner(_graph(), {"walk": skills["walk"]}).run(2 * falls_at + 0.5)
    assert [v.ended for v in result.visits[:2]] == ["fall", "fall"]
    assert result.restarts == 2 and result.stood == 0
    assert result.visits[1].start == result.visits[0].end


def test_a_getup_that_stands_goes_on_along_its_end_edge(skills):
    """From its own start the learned face-up get-up stands; its visit ends and the walk begins from the stand."""
    graph = _graph(start="getup_faceup", nodes={"walk": {"skill": "walk"}, "getup_faceup": {"skill": "getup_faceup"}},
                   edges=[{"from": "getup_faceup", "to": "walk"}])
    result = GraphRunner(graph, {n: skills[n] for n in graph.nodes}).run(8.0)
    getup = result.visits[0]
    assert (getup.node, getup.ended) == ("getup_faceup", "end")
    assert abs(getup.end - skills["getup_faceup"].reference.steps * TIMESTEP) < 0.1
    assert result.visits[1].node == "walk" and result.transitions >= 1


def test_graph_run_on_the_command_line(tmp_path, capsys):
    assert main(["graph", "run", "--seconds", "5", "--json"]) == 1   # the walk falls within 5 s
    report = json.loads(capsys.readouterr().out)
    assert report["graph"] == "default" and report["falls"] >= 1
    assert report["visits"][0]["node"] == "walk" and report["seconds"] >= 5.0
    # a graph file of the user's, naming a skill file beside it
    shutil.copy(SHIPPED / "walk.skill.npz", tmp_path / "my-walk.skill.npz")
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"start": "walk", "nodes": {"walk": {"skill": "my-walk.skill.npz",
                                                                        "cycles": [1, 2]}},
                                    "edges": [{"from": "walk", "to": "walk"}]}))
    assert main(["graph", "run", str(path), "--seconds", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["graph"] == "mine"


@pytest.mark.parametrize("args, message", [
    (["graph", "run", "nope"], "unknown control graph"),
    (["graph", "run", "--seconds", "0"], "--seconds"),
    (["graph", "run", "--workers", "0"], "worker"),
    (["graph", "run", "--seed", "-1"], "seed"),
    (["graph", "run", "--search", "--particles", "1"], "particles"),
])
def test_graph_run_refuses_bad_input_with_one_message(args, message, capsys):
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_graph_run_refuses_a_malformed_file(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("start: walk\nnodes:\n  walk: {skill: walk}\nedges:\n  - {from: walk, to: kick}\n")
    assert main(["graph", "run", str(path)]) == 2
    assert "edges[0].to" in capsys.readouterr().err


def test_bench_graph_walks_counts_the_falls_of_a_short_walk_and_refuses_a_bad_protocol(tmp_path, capsys):
    protocol = protocol_path("graph-walks").read_text()
    short = tmp_path / "short.yaml"
    short.write_text(protocol.replace("walks: 10 ", "walks: 2 ").replace("seconds: 600.0", "seconds: 5.0")
                     .replace("search_walks: 1 ", "search_walks: 0 "))
    assert main(["bench", "graph-walks", "--protocol", str(short), "--out", str(tmp_path)]) == 0
    (result,) = tmp_path.glob("graph-walks-*.json")
    learned = json.loads(result.read_text())["trials"]["learned"]
    assert [w["seed"] for w in learned] == [0, 1]
    assert all(w["falls"] == len(w["fall_times"]) >= 1 for w in learned)   # the walk falls within 5 s
    assert "search" not in json.loads(result.read_text())["trials"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(protocol.replace("walks: 10 ", "walks: 0 "))
    assert main(["bench", "graph-walks", "--protocol", str(bad), "--out", str(tmp_path)]) == 2
    assert "walks" in capsys.readouterr().err


def test_a_searched_graph_walks_on_where_the_learned_walk_falls_and_replays_bit_for_bit(skills):
    """search: every visit is SAMCON through the skill from where the character is, and the path plays out; the
    walk that falls under its learned policies at ``falls_at`` walks past it, and the same seed gives the same
    run."""
    falls_at = _walk_falls_at(skills["walk"])
    params = GraphRunParams(seed=0, search=True, recovery=RecoveryParams(search_particles=50))
    assert params.recovery.search   # the get-ups are searched too

    def run():
        runner = GraphRunner(load_graph("default"), skills, params)
        return runner.run(falls_at + 1.0), runner.world.integration_state()

    result, state = run()
    assert result.falls == 0 and result.seconds >= falls_at + 1.0
    assert {v.node for v in result.visits} == {"walk"} and result.visits[-1].ended == "time"
    assert result.transitions == len(result.visits) - 1
    again, state_again = run()
    assert again.visits == result.visits and np.array_equal(state_again, state)


def test_the_shipped_cartwheel_falls_open_loop_and_turns_over_on_its_hands_searched(skills):
    """The full graph's cartwheel is a refined open loop (its policies zero), which falls 0.8 s into its cycle; a
    search carries it on past the half of the cycle it rests on its hands (fragments 9-15, 0.9-1.6 s)."""
    data = {"name": "cartwheel", "start": "cartwheel", "nodes": {"cartwheel": {"skill": "cartwheel", "cycles": [1, 1]},
                                                              "getup_faceup": {"skill": "getup_faceup"}},
            "edges": [{"from": "cartwheel", "to": "cartwheel"},
                      {"from": ANY, "to": "getup_faceup", "trigger": "fall"}]}
    graph = parse_graph(data, "test")
    cartwheel = {"cartwheel": load_named_skill("cartwheel"), "getup_faceup": skills["getup_faceup"]}
    learned = GraphRunner(graph, cartwheel, GraphRunParams(seed=0)).run(1.6)
    assert learned.visits[0].ended == "fall" and learned.visits[0].end < 1.0
    searched = GraphRunner(graph, cartwheel, GraphRunParams(seed=0, search=True,
                                                            recovery=RecoveryParams(search_particles=50))).run(1.6)
    assert searched.falls == 0 and [v.node for v in searched.visits] == ["cartwheel"]
    assert searched.visits[0].ended == "time" and searched.seconds >= 1.6


def test_joined_references_index_every_skill_s_fragments_as_one_table(skills):
    """The control graph's fragment table: a searched walk passes from one skill's fragments into another's."""
    parts = [skills["walk"].reference, skills["getup_faceup"].reference]
    table, offsets = joined(parts, "two")
    assert offsets == (0, parts[0].fragments) and table.fragments == sum(p.fragments for p in parts)
    for part, offset in zip(parts, offsets):
        for k in range(part.fragments):
            assert np.array_equal(table.targets[table.fragment_rows(offset + k)], part.targets[part.fragment_rows(k)])
            assert table.ends[offset + k] == part.ends[k]
            assert table.resting_bodies(offset + k) == part.resting_bodies(k)
    assert np.array_equal(table.start_state, parts[0].start_state)
    # a fragment runner plays the get-up's first fragment from the table as from the get-up itself
    world_a, world_b = graph_world(), graph_world()
    for world in (world_a, world_b):
        world.set_integration_state(parts[1].start_state)
    action = np.zeros(ActionLayout.of(world_a.character(), POLICY_JOINTS).size)
    FragmentRunner(table, world=world_a).play(offsets[1], action)
    FragmentRunner(parts[1], world=world_b).play(0, action)
    assert np.array_equal(world_a.integration_state(), world_b.integration_state())


def test_the_example_graph_is_the_full_graph_to_copy_and_edit():
    example = load_graph(str(Path(__file__).resolve().parents[1] / "examples" / "graph.yaml"))
    full = load_graph("full")
    assert example.start == full.start and set(example.nodes) == set(full.nodes)
    assert all(set(example.next_nodes(n)) == set(full.next_nodes(n)) for n in full.nodes)
    assert set(example.load_skills()) == set(full.nodes)
