"""Character specs: the bipv3 table, derived characters (scale, robot), mirror map, and bad files.

Expected numbers come from shared/specs/character-bipv3.md; derived geometry is measured in
the compiled MuJoCo model, not read back from the spec.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import mujoco
import numpy as np
import pytest
import yaml

from strider.characters import available_characters, load_character
from strider.characters.library import DATA_DIR
from strider.errors import ConfigError, UsageError
from strider.sim import CharacterPlacement, Scene, World

# character-bipv3.md, "Bodies"
SPEC_MASSES = {
    "pelvis": 12.9, "lowerBack": 7.0, "torso": 15.5, "head": 5.2,
    "lUpperArm": 2.2, "lLowerArm": 1.7, "rUpperArm": 2.2, "rLowerArm": 1.7,
    "lUpperLeg": 6.6, "lLowerLeg": 3.2, "rUpperLeg": 6.6, "rLowerLeg": 3.2,
    "lFoot": 1.0, "rFoot": 1.0, "lToes": 0.2, "rToes": 0.2,
}
SPEC_INERTIA = {"pelvis": (0.13, 0.0705, 0.11), "torso": (0.31, 0.21, 0.14), "lLowerLeg": (0.055, 0.055, 0.007),
                "lToes": (0.0005, 0.002, 0.002)}
# character-bipv3.md, "PD gains of the source's walking controllers": (kp, kd, torque limit)
SPEC_GAINS = {
    "pelvis_lowerback": (75, 17, 100), "lowerback_torso": (75, 17, 100), "torso_head": (10, 3, 200),
    "lShoulder": (15, 5, 200), "rShoulder": (15, 5, 200), "lElbow": (5, 1, 200), "rElbow": (5, 1, 200),
    "lHip": (300, 35, 200), "rHip": (300, 35, 200), "lKnee": (300, 35, 1000), "rKnee": (300, 35, 1000),
    "lAnkle": (50, 15, 100), "rAnkle": (50, 15, 100), "lToeJoint": (2, 0.2, 100), "rToeJoint": (2, 0.2, 100),
}
SPEC_ROOT_GAINS = (1000, 200, 200)
SPEC_DOF = {"ball": 3, "hinge": 1, "universal": 2}
SPEC_JOINT_KINDS = {
    "pelvis_lowerback": "ball", "lowerback_torso": "ball", "torso_head": "ball", "lShoulder": "ball",
    "rShoulder": "ball", "lElbow": "hinge", "rElbow": "hinge", "lHip": "ball", "rHip": "ball",
    "lKnee": "hinge", "rKnee": "hinge", "lAnkle": "universal", "rAnkle": "universal",
    "lToeJoint": "hinge", "rToeJoint": "hinge",
}
TOTAL_MASS = 70.4


def _world(spec) -> World:
    return World(Scene((CharacterPlacement(spec),)))


# --- bipv3 -------------------------------------------------------------------------------------
def test_bipv3_spec_mass_dof_and_joint_kinds(bipv3):
    assert bipv3.total_mass == pytest.approx(TOTAL_MASS, abs=1e-9)
    assert {b.name: b.mass for b in bipv3.bodies} == pytest.approx(SPEC_MASSES)
    assert {j.name: j.kind for j in bipv3.joints()} == SPEC_JOINT_KINDS
    internal = sum(SPEC_DOF[j.kind] for j in bipv3.joints())
    assert internal == 31
    assert bipv3.dof == 37


def test_bipv3_gains_follow_the_spec_table(bipv3):
    for joint, (kp, kd, limit) in SPEC_GAINS.items():
        g = bipv3.joint_gains(joint)
        assert (g.kp, g.kd, g.limit) == pytest.approx((kp, kd, limit)), joint
    r = bipv3.root_gains
    assert (r.kp, r.kd, r.limit) == pytest.approx(SPEC_ROOT_GAINS)


def test_compiled_bipv3_model_matches_the_spec(bipv3):
    world = _world(bipv3)
    m, ch = world.model, world.character()
    assert m.nv == 37
    assert m.nu == 31
    assert float(m.body_mass.sum()) == pytest.approx(TOTAL_MASS, abs=1e-9)
    assert ch.mass == pytest.approx(TOTAL_MASS, abs=1e-9)
    for body, mass in SPEC_MASSES.items():
        assert m.body_mass[ch.body(body)] == pytest.approx(mass), body
    for body, inertia in SPEC_INERTIA.items():
        assert m.body_inertia[ch.body(body)] == pytest.approx(inertia), body
    # Every servo carries the table's PD gains and torque limit.
    for joint, (kp, kd, limit) in SPEC_GAINS.items():
        servos = ch.joint(joint).servos
        assert len(servos) == SPEC_DOF[SPEC_JOINT_KINDS[joint]]
        np.testing.assert_allclose(m.actuator_gainprm[servos, 0], kp)
        np.testing.assert_allclose(m.actuator_biasprm[servos, 1], -kp)
        np.testing.assert_allclose(m.actuator_biasprm[servos, 2], -kd)
        np.testing.assert_allclose(m.actuator_forcerange[servos], [[-limit, limit]] * len(servos))
    # Ranges are radians (character-bipv3.md): the knee bends 0..2.5 rad, the elbow -2.7..0.
    np.testing.assert_allclose(m.jnt_range[ch.joint("lKnee").mj_joints[0]], [0.0, 2.5])
    np.testing.assert_allclose(m.jnt_range[ch.joint("rElbow").mj_joints[0]], [-2.7, 0.0])
    assert m.jnt_range[ch.joint("lHip").mj_joints[0]][1] == pytest.approx(1.0)
    # Only the soles (feet and toes) resist spinning on the ground: torsional friction, contact dimension 4.
    for body in ("lFoot", "rFoot", "lToes", "rToes", "lLowerLeg", "pelvis"):
        geoms = np.flatnonzero(m.geom_bodyid == ch.body(body))
        sole = body.endswith(("Foot", "Toes"))
        assert (m.geom_condim[geoms] == (4 if sole else 3)).all(), body
        if sole:
            np.testing.assert_allclose(m.geom_friction[geoms, 1], bipv3.sole_torsional_friction)


def test_bipv3_anchors_put_joints_where_the_spec_says(bipv3):
    world = _world(bipv3)
    ch = world.character()
    pelvis = ch.body_position("pelvis")
    # hip centre = pelvis COM + anchor in the pelvis frame (zero pose, heading 0)
    np.testing.assert_allclose(ch.joint_anchor("lHip") - pelvis, [-0.01, 0.08, -0.03], atol=1e-12)
    # thigh: hip -> knee is 0.17 + 0.23 m straight down; shank: knee -> ankle 0.22 + 0.24 m down, 0.01 m out
    np.testing.assert_allclose(ch.joint_anchor("lKnee") - ch.joint_anchor("lHip"), [0, 0, -0.40], atol=1e-12)
    np.testing.assert_allclose(ch.joint_anchor("rAnkle") - ch.joint_anchor("rKnee"), [0, -0.01, -0.46], atol=1e-12)


# --- uniform scaling ---------------------------------------------------------------------------
@pytest.mark.parametrize("s", [0.75, 1.25])
def test_uniform_scale_keeps_the_character_dynamically_similar(bipv3, s):
    scaled = load_character("bipv3", scale=s)
    ratio = s**3
    assert scaled.total_mass == pytest.approx(TOTAL_MASS * ratio)
    # Torques scale with m g L (s^4) and times with sqrt(L / g), so kd with s^4.5.
    kp_factor, kd_factor = s**4, s**4.5
    for joint, (kp, kd, limit) in SPEC_GAINS.items():
        g = scaled.joint_gains(joint)
        assert g.kp == pytest.approx(kp * kp_factor), joint
        assert g.kd == pytest.approx(kd * kd_factor), joint
        assert g.limit == pytest.approx(limit * kp_factor), joint
    assert scaled.root_gains.kp == pytest.approx(SPEC_ROOT_GAINS[0] * kp_factor)
    assert scaled.root_gains.kd == pytest.approx(SPEC_ROOT_GAINS[1] * kd_factor)
    # The source's rule, kept as an option: kp x M'/M and kd x sqrt(M'/M) (seed 000, Sec. 5.4).
    unscaled = replace(scaled, gains=bipv3.gains, root_gains=bipv3.root_gains, reference_mass=bipv3.total_mass)
    by_mass = unscaled.with_gains_for_mass(rule="mass")
    assert by_mass.joint_gains("lKnee").kp == pytest.approx(300 * ratio)
    assert by_mass.joint_gains("lKnee").kd == pytest.approx(35 * math.sqrt(ratio))
    with pytest.raises(ValueError, match="gain scaling"):
        unscaled.with_gains_for_mass(rule="nope")

    world, base = _world(scaled), _world(bipv3)
    ch, ch0 = world.character(), base.character()
    assert float(world.model.body_mass.sum()) == pytest.approx(TOTAL_MASS * ratio)
    # The servos in the compiled model carry the rescaled gains.
    knee = ch.joint("lKnee").servos
    assert world.model.actuator_gainprm[knee, 0] == pytest.approx(300 * kp_factor)
    assert -world.model.actuator_biasprm[knee, 2] == pytest.approx(35 * kd_factor)
    # Lengths scale by s: joint-to-joint distances, and the standing height of the head.
    for a, b in [("lHip", "lKnee"), ("lKnee", "lAnkle"), ("lShoulder", "lElbow"), ("lHip", "rHip")]:
        d = np.linalg.norm(ch.joint_anchor(a) - ch.joint_anchor(b))
        d0 = np.linalg.norm(ch0.joint_anchor(a) - ch0.joint_anchor(b))
        assert d == pytest.approx(s * d0), (a, b)
    assert ch.joint_anchor("torso_head")[2] == pytest.approx(s * ch0.joint_anchor("torso_head")[2], abs=2e-3)
    # The soles' spin resistance per newton is a length too.
    assert scaled.sole_torsional_friction == pytest.approx(s * bipv3.sole_torsional_friction)


def test_scale_out_of_range_is_a_usage_error():
    with pytest.raises(UsageError):
        load_character("bipv3", scale=0.0)
    with pytest.raises(UsageError):
        load_character("bipv3", scale=float("nan"))


# --- the robot ---------------------------------------------------------------------------------
def _arm_length(world: World, side: str) -> float:
    """Shoulder centre to the far end of the forearm capsule, in the compiled model."""
    ch, m, d = world.character(), world.model, world.data
    forearm = ch.body(f"{side}LowerArm")
    shoulder = ch.joint_anchor(f"{side}Shoulder")
    ends = []
    for g in np.flatnonzero(m.geom_bodyid == forearm):
        assert m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE
        axis = d.geom_xmat[g].reshape(3, 3)[:, 2] * m.geom_size[g, 1]
        ends += [d.geom_xpos[g] + axis, d.geom_xpos[g] - axis]
    return max(float(np.linalg.norm(e - shoulder)) for e in ends)


def _leg_length(ch, side: str) -> float:
    hip, knee, ankle = (ch.joint_anchor(f"{side}{j}") for j in ("Hip", "Knee", "Ankle"))
    return float(np.linalg.norm(knee - hip) + np.linalg.norm(ankle - knee))


def test_robot_left_arm_longer_and_heavier_left_knee_higher(bipv3, robot):
    rw, bw = _world(robot), _world(bipv3)
    rc, bc, m = rw.character(), bw.character(), rw.model

    # Left arm: 40% longer and 40% heavier than the right arm (which is unchanged from bipv3).
    assert _arm_length(rw, "l") == pytest.approx(1.4 * _arm_length(rw, "r"), rel=1e-6)
    assert _arm_length(rw, "r") == pytest.approx(_arm_length(bw, "r"), rel=1e-9)
    left = m.body_mass[rc.body("lUpperArm")] + m.body_mass[rc.body("lLowerArm")]
    right = m.body_mass[rc.body("rUpperArm")] + m.body_mass[rc.body("rLowerArm")]
    assert left == pytest.approx(1.4 * right)
    assert float(m.body_mass.sum()) == pytest.approx(TOTAL_MASS + 0.4 * (2.2 + 1.7))

    # Left knee 0.20 m higher than the right, feet level, and the same total leg length.
    knee_gap = rc.joint_anchor("lKnee")[2] - rc.joint_anchor("rKnee")[2]
    assert knee_gap == pytest.approx(0.20, abs=1e-6)
    assert rc.joint_anchor("lHip")[2] == pytest.approx(rc.joint_anchor("rHip")[2], abs=1e-12)
    assert rc.joint_anchor("lAnkle")[2] == pytest.approx(rc.joint_anchor("rAnkle")[2], abs=1e-6)
    assert _leg_length(rc, "l") == pytest.approx(_leg_length(rc, "r"), abs=1e-3)
    assert _leg_length(rc, "r") == pytest.approx(_leg_length(bc, "r"), abs=1e-12)

    # Only the mass scaling changes the gains (dynamic similarity: kp x (M'/M)^(4/3), kd x (M'/M)^1.5).
    ratio = robot.total_mass / TOTAL_MASS
    assert robot.joint_gains("lHip").kp == pytest.approx(300 * ratio ** (4 / 3))
    assert robot.joint_gains("lHip").kd == pytest.approx(35 * ratio**1.5)


# --- mirror map --------------------------------------------------------------------------------
def _side_names(spec) -> list[str]:
    names = [b.name for b in spec.bodies] + [j.name for j in spec.joints()]
    return [n for n in names if len(n) > 1 and n[0] in "lr" and n[1].isupper()]


@pytest.mark.parametrize("name", ["bipv3", "robot"])
def test_mirror_map_pairs_every_left_and_right_name(name):
    spec = load_character(name)
    sided = _side_names(spec)
    assert len(sided) == 24  # 6 bodies and 6 joints per side
    for n in sided:
        other = ("r" if n[0] == "l" else "l") + n[1:]
        assert spec.mirrored(n) == other, n
        assert spec.mirrored(other) == n, other
    for n in [b.name for b in spec.bodies] + [j.name for j in spec.joints()]:
        assert spec.mirrored(spec.mirrored(n)) == n
        if n not in sided:
            assert spec.mirrored(n) == n


def test_mirrored_bodies_sit_mirrored_in_the_compiled_model(bipv3):
    world = _world(bipv3)
    ch, m = world.character(), world.model
    reflect = np.array([1.0, -1.0, 1.0])
    for b in bipv3.bodies:
        twin = bipv3.mirrored(b.name)
        np.testing.assert_allclose(ch.body_position(twin), reflect * ch.body_position(b.name), atol=1e-12,
                                   err_msg=b.name)
        assert m.body_mass[ch.body(twin)] == m.body_mass[ch.body(b.name)]


# --- bad files ---------------------------------------------------------------------------------
def _bipv3_data() -> dict:
    return yaml.safe_load((DATA_DIR / "bipv3.yaml").read_text())


def _write(tmp_path, data, name: str = "bad.yaml"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_faithful_copy_of_bipv3_loads(tmp_path):
    """Control for the malformed-file tests: the unmodified data written the same way is valid."""
    spec = load_character(str(_write(tmp_path, _bipv3_data(), "copy.yaml")))
    assert spec.total_mass == pytest.approx(TOTAL_MASS)
    assert spec.dof == 37


def _mutate(edit):
    data = copy.deepcopy(_bipv3_data())
    edit(data)
    return data


def _del_mass(d):
    del d["bodies"][2]["mass"]


def _neg_mass(d):
    d["bodies"][2]["mass"] = -15.5


def _unknown_top(d):
    d["colour"] = "red"


def _unknown_body_field(d):
    d["bodies"][1]["colour"] = "red"


def _unknown_gain_group(d):
    d["bodies"][1]["joint"]["gains"] = "wrist"


def _unknown_parent(d):
    d["bodies"][3]["parent"] = "tail"


def _bad_inertia(d):
    d["bodies"][0]["inertia"] = [0.1, 0.1]


def _bad_joint_type(d):
    d["bodies"][9]["joint"]["type"] = "slider"


def _zero_axis(d):
    knee = next(b for b in d["bodies"] if b.get("joint", {}).get("type") == "hinge")
    knee["joint"]["axis"] = [0, 0, 0]


def _bad_actuation(d):
    d["actuation"] = "hydraulic"


def _missing_limit(d):
    del d["gains"]["knee"]["limit"]


@pytest.mark.parametrize("edit, field, problem", [
    (_zero_axis, "joint.axis", "non-zero length"),
    (_bad_actuation, "actuation", "hydraulic"),
    (_missing_limit, "gains.knee.limit", "none"),
    (_del_mass, "bodies[2].mass", "missing"),
    (_neg_mass, "bodies[2].mass", "> 0"),
    (_unknown_top, "colour", "unknown field"),
    (_unknown_body_field, "bodies[1].colour", "unknown field"),
    (_unknown_gain_group, "bodies[1].joint.gains", "wrist"),
    (_unknown_parent, "bodies[3].parent", "tail"),
    (_bad_inertia, "bodies[0].inertia", "3"),
    (_bad_joint_type, "bodies[9].joint.type", "slider"),
])
def test_malformed_character_names_file_and_field(tmp_path, edit, field, problem):
    path = _write(tmp_path, _mutate(edit))
    with pytest.raises(ConfigError) as err:
        load_character(str(path))
    message = str(err.value)
    assert str(path) in message
    assert field in message
    assert problem in message
    assert err.value.field.endswith(field)


def test_invalid_yaml_syntax_names_the_file_and_line(tmp_path):
    path = _write(tmp_path, "name: broken\nbodies:\n  - name: pelvis\n    mass: [12.9\n")
    with pytest.raises(ConfigError) as err:
        load_character(str(path))
    assert str(path) in str(err.value)
    assert "line" in err.value.field
    assert "YAML" in str(err.value)


def test_cyclic_extends_is_a_config_error(tmp_path):
    _write(tmp_path, {"name": "a", "extends": "b.yaml"}, "a.yaml")
    _write(tmp_path, {"name": "b", "extends": "a.yaml"}, "b.yaml")
    with pytest.raises(ConfigError) as err:
        load_character(str(tmp_path / "a.yaml"))
    assert err.value.field == "extends"
    assert str(tmp_path) in str(err.value)
    assert "extends" in str(err.value)


def test_extends_of_a_missing_character_names_the_field(tmp_path):
    path = _write(tmp_path, {"name": "ghost", "extends": "no_such_character"})
    with pytest.raises(ConfigError) as err:
        load_character(str(path))
    assert str(path) in str(err.value)
    assert err.value.field == "extends"


def test_segment_edit_of_unknown_body_names_the_field(tmp_path):
    path = _write(tmp_path, {"name": "x", "extends": "bipv3", "segments": {"tail": {"length": 2.0}}})
    with pytest.raises(ConfigError) as err:
        load_character(str(path))
    assert str(path) in str(err.value)
    assert "segments.tail" in str(err.value)


@pytest.mark.parametrize("extra, field", [({"friction": 1.0}, "friction"), ({"scale": 9.0}, "scale"),
                                           ({"gains": {}}, "gains")])
def test_derived_file_rejects_fields_it_cannot_apply(tmp_path, extra, field):
    path = _write(tmp_path, {"name": "x", "extends": "bipv3", **extra})
    with pytest.raises(ConfigError) as err:
        load_character(str(path))
    assert err.value.field == field
    assert str(path) in str(err.value)


def test_extends_of_a_missing_file_names_the_extending_file(tmp_path):
    path = _write(tmp_path, {"name": "x", "extends": "nowhere.yaml"})
    with pytest.raises(ConfigError) as err:
        load_character(str(path))
    assert err.value.source == str(path)
    assert err.value.field == "extends"


def test_scale_in_a_file_is_applied(tmp_path):
    derived = load_character(str(_write(tmp_path, {"name": "big", "extends": "bipv3", "scale": 1.25}, "big.yaml")))
    data = _bipv3_data()
    data["scale"] = 1.25
    full = load_character(str(_write(tmp_path, data, "full.yaml")))
    for spec in (derived, full):
        assert spec.total_mass == pytest.approx(TOTAL_MASS * 1.25**3)
        assert spec.joint_gains("lKnee").kp == pytest.approx(300 * 1.25**4)


def test_role_naming_an_unknown_toe_body_names_the_field(tmp_path):
    path = _write(tmp_path, _mutate(lambda d: d["roles"]["legs"]["left"].update(toes="lClaw")))
    with pytest.raises(ConfigError) as err:
        load_character(str(path))
    assert err.value.field == "roles.legs.left.toes"
    assert "lClaw" in str(err.value)


def test_unknown_character_name_lists_the_available_ones():
    with pytest.raises(UsageError) as err:
        load_character("no_such_biped")
    message = str(err.value)
    assert "no_such_biped" in message
    for name in available_characters():
        assert name in message
    assert {"bipv3", "robot"} <= set(available_characters())


def test_missing_character_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError):
        load_character(str(tmp_path / "absent.yaml"))
