"""Skills as data (torres-skills.md, P8): every shipped skill loads, and a malformed file names its field."""

from __future__ import annotations

import copy

import pytest
import yaml

from strider.cli.main import main
from strider.errors import ConfigError
from strider.methods.skills.skill import available_skills, load_skill, parse_skill, skill_path

SHIPPED = ("stand", "walk", "fall", "roll-supine-to-prone", "roll-prone-to-supine", "roll-repeated", "forward-roll")


def test_all_seven_skills_ship_and_load():
    assert set(SHIPPED) <= set(available_skills())
    for name in SHIPPED:
        skill = load_skill(name)
        assert skill.name == name and skill.actions


def _raw(name: str) -> dict:
    return yaml.safe_load(skill_path(name).read_text())


def _names(bipv3):
    return {j.name for j in bipv3.joints()}, {b.name for b in bipv3.bodies}


# (what to break, the dotted path the error must name). Each case is one of: missing, wrong type,
# out of range, dangling reference.
CASES = [
    (lambda d: d.pop("seconds"), "seconds"),                                                    # missing
    (lambda d: d.update(seconds="long"), "seconds"),                                            # wrong type
    (lambda d: d.update(seconds=-1.0), "seconds"),                                              # out of range
    (lambda d: d["start"].update(pose="sideways"), "start.pose"),                               # out of range
    (lambda d: d["actions"][0]["states"][0]["transitions"][0].update(to="nowhere"),
     "actions[0].states[0].transitions[0].to"),                                                 # dangling
    (lambda d: d["actions"][0]["states"][0]["joints"][1].update(joints="rWing"),
     "actions[0].states[0].joints[1].joints"),                                                  # dangling
    (lambda d: d["actions"][0]["states"][0]["joints"][0].update(axis=[0, 0]),
     "actions[0].states[0].joints[0].axis"),                                                    # wrong type
    (lambda d: d["actions"][0]["states"][0]["joints"][0]["knots"].update(times=[0, 2, 1, 3]),
     "actions[0].states[0].joints[0].knots.times"),                                             # out of range
    (lambda d: d["actions"][0]["states"][0]["joints"][0]["knots"].pop("values"),
     "actions[0].states[0].joints[0].knots.values"),                                            # missing
    (lambda d: d["gains"]["shoulder"].update(kp=1e9), "gains.shoulder.kp"),                     # out of range
    (lambda d: d["end"]["checks"][0].update(window=[2.5, 99]), "end.checks[0].window"),         # out of range
    (lambda d: d["optimize"]["params"][1].update(trajectory=9), "optimize.params[1].trajectory"),  # dangling
    (lambda d: d["optimize"]["cost"][2].update(bodies=["tail"]), "optimize.cost[2].bodies"),    # dangling
    (lambda d: d["optimize"]["cost"][0].update(term="joy"), "optimize.cost[0].term"),           # out of range
    (lambda d: d["optimize"]["cost"][0].update(window=[0, 3]), "optimize.cost[0].at"),        # both at and window
    (lambda d: d["optimize"]["cost"][0].update(window=[0, 9], at=None), "optimize.cost[0].window"),  # out of range
    (lambda d: d["optimize"]["cost"][0].update(reduce="max"), "optimize.cost[0].reduce"),      # needs a window
    (lambda d: d["optimize"].update(trial_seed=1.5), "optimize.trial_seed"),                    # wrong type
]


# The standing skill's step trigger and recovery hand-over.
STAND_CASES = [
    (lambda d: d["actions"][0]["states"][0]["transitions"][1].update(margin=2.0),
     "actions[0].states[0].transitions[1].margin"),                                             # out of range
    (lambda d: d["actions"][0]["states"][0]["transitions"][0].update(margin=0.1),
     "actions[0].states[0].transitions[0].margin"),                                             # not a capture
    (lambda d: d["actions"][0]["states"][1]["components"]["locomotion"].update(mode="dance"),
     "actions[0].states[1].components.locomotion.mode"),                                        # out of range
    (lambda d: d["actions"][0]["states"][1]["transitions"][1].update(feet_within=0.0),
     "actions[0].states[1].transitions[1].feet_within"),                                        # out of range
    (lambda d: d["actions"][0]["states"][1]["transitions"][1].update(feet_within="wide"),
     "actions[0].states[1].transitions[1].feet_within"),                                        # wrong type
    (lambda d: d["actions"][0]["states"][0]["transitions"][1].update(feet_within=0.3),
     "actions[0].states[0].transitions[1].feet_within"),                                        # not a recovered
]
# The forward roll's pitch term and check, and its knot ranges (in its initial guess; the shipped file is alike).
FORWARD_CASES = [
    (lambda d: d["optimize"]["cost"][-1].pop("target"), "optimize.cost[6].target"),             # missing
    (lambda d: d["optimize"]["cost"][-1].update(at=1.0), "optimize.cost[6].at"),                # a window term
    (lambda d: d["optimize"]["cost"][0].update(target=1.0), "optimize.cost[0].target"),         # not a pitch term
    (lambda d: d["optimize"]["cost"][-1].update(target="far"), "optimize.cost[6].target"),      # wrong type
    (lambda d: d["optimize"]["params"][0].update(range=[1.0, -1.0]), "optimize.params[0].range"),  # out of order
    (lambda d: d["optimize"]["params"][1].update(range=[-0.5, 0.5]), "optimize.params[1].range"),  # excludes K1, K2
    (lambda d: d["end"]["checks"][1].update(pitch_above=[3]), "end.checks[1].pitch_above"),     # wrong type
    (lambda d: d["end"]["checks"][1].update(vector="up"), "end.checks[1].vector"),              # nothing to point
]
ALL_CASES = ([("roll-supine-to-prone", *c) for c in CASES] + [("stand", *c) for c in STAND_CASES]
             + [("initial/forward-roll", *c) for c in FORWARD_CASES])


@pytest.mark.parametrize("skill, breaker, field", ALL_CASES, ids=[f"{c[0]}:{c[2]}" for c in ALL_CASES])
def test_a_malformed_skill_names_file_and_field(bipv3, skill, breaker, field):
    data = copy.deepcopy(_raw(skill))
    breaker(data)
    with pytest.raises(ConfigError) as info:
        parse_skill(data, "broken.yaml", *_names(bipv3))
    assert info.value.source == "broken.yaml"
    assert info.value.field == field, str(info.value)


def test_stand_component_fields_are_checked(bipv3):
    data = copy.deepcopy(_raw("stand"))
    data["actions"][0]["states"][0]["components"]["balance"]["kp"] = "stiff"
    with pytest.raises(ConfigError, match=r"actions\[0\]\.states\[0\]\.components\.balance\.kp"):
        parse_skill(data, "stand.yaml", *_names(bipv3))


def test_cli_reports_a_bad_skill_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nseconds: 1\nactions: [{name: a, states: [{name: s, transitions: [{on: time, after: 1, "
                   "to: b}]}]}]\n")
    code = main(["skill", "run", str(bad)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "transitions[0].to" in err and "bad.yaml" in err


def test_cli_rejects_an_unknown_skill(capsys):
    assert main(["skill", "run", "moonwalk"]) == 2
    assert "unknown skill" in capsys.readouterr().err



def _recovery_locomotion(data: dict) -> dict:
    return next(s["components"]["locomotion"] for a in data["actions"] for s in a["states"]
                if "locomotion" in s.get("components", {}))


@pytest.mark.parametrize("controller, problem", [("simbicon", "no recovery_step"), ("segway", "unknown controller")])
def test_a_recovery_step_by_a_controller_that_cannot_take_one_is_refused_at_load(bipv3, controller, problem):
    """The shipped stand skill with its recovery step handed to SIMBICON crashed at the first push; now the
    skill is refused when it is read, in one line naming the field."""
    data = copy.deepcopy(_raw("stand"))
    _recovery_locomotion(data)["controller"] = controller
    with pytest.raises(ConfigError, match=problem) as info:
        parse_skill(data, "stand.yaml", *_names(bipv3))
    assert info.value.field.endswith("components.locomotion.controller")


def test_cli_refuses_a_stand_skill_stepping_with_simbicon(tmp_path, capsys):
    import yaml

    data = copy.deepcopy(_raw("stand"))
    _recovery_locomotion(data)["controller"] = "simbicon"
    path = tmp_path / "stand-simbicon.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["skill", "run", str(path), "--seconds", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no recovery_step" in err


def test_controller_classes_declare_the_capabilities_the_registry_lists():
    from strider.control.controller import LocomotionCommand
    from strider.methods.registry import CONTROLLERS, make_controller

    for name, entry in CONTROLLERS.items():
        assert make_controller(name, LocomotionCommand()).capabilities == entry.capabilities, name


def test_skill_list_names_every_shipped_skill_and_what_it_does(capsys):
    assert main(["skill", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == available_skills()
    listed = dict(line.split(None, 1) for line in lines)
    assert listed["roll-prone-to-supine"].endswith("Roll from lying on the front to lying on the back")
    assert "Shipped parameters" not in "\n".join(lines)
