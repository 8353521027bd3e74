"""Assembling a :class:`Scene` into a MuJoCo model with ``MjSpec``.

Each character joint gets PD *servo* actuators that run inside MuJoCo's step:
one per hinge, three per ball joint (about the child's x, y and z axes, where
MuJoCo's actuator length is the matching component of the joint's rotation
vector). A servo's force is ``kp*(ctrl - length) - kd*velocity``, clamped to
the joint's torque limit. Because the damping is part of the actuator,
``implicitfast`` integrates it implicitly, which keeps light segments (feet,
toes) stable at a 1 ms step. Controllers set ``ctrl`` so that the spring term
equals their quaternion PD error (see :mod:`strider.control.pd`).
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from strider.characters.spec import BodySpec, CharacterSpec, GeomSpec, JointSpec
from strider.courses.course import Course
from strider.sim.scene import TERRAIN_HALF_WIDTH, Box, CharacterPlacement, Grip, Prop, Scene, Terrain

# Collision groups: characters collide with the ground and props, never with themselves
# (seed 000, Sec. 5.4: "no self-collision").
GROUND_BITS = (1, 1)      # (contype, conaffinity)
CHARACTER_BITS = (2, 1)
PROP_BITS = (1, 3)
# Soles take torsional friction (CharacterSpec.sole_torsional_friction): a contact dimension of 4 adds it
# to the two tangential directions.
SOLE_CONDIM = 4
# Visual/ray groups: terrain (ground, obstacles) is group 0, so ground-height rays can skip bodies.
TERRAIN_GROUP, CHARACTER_GROUP, PROP_GROUP = 0, 1, 2

CONTACT_SOLREF = (0.01, 1.0)
"""Contact time constant and damping ratio: static penetration of the 70 kg humanoid stays
under 5 mm (coros-walking.md, Sec. 4, Engine), while staying above 2 physics steps."""

BUMP_BASE = 0.05
"""Thickness of a height field's base below the ground plane, m (MuJoCo needs a positive base)."""
OBSTACLE_RGBA = [0.55, 0.5, 0.45, 1]
"""Colour of obstacles (boxes, bars, pit floors): unlike the ground's checker, so they read as things."""
FLAT_FIELD_TOP = 1e-6
"""Elevation scale of a height field without bumps, m (MuJoCo needs a positive size[2])."""

GROUND_MARGIN = 0.001
"""Clearance between the soles and the ground when a character is placed, m."""

SERVO_AXES = ("x", "y", "z")

PLANAR_ROOT_JOINTS = (("x", mujoco.mjtJoint.mjJNT_SLIDE, (1.0, 0.0, 0.0)),
                      ("z", mujoco.mjtJoint.mjJNT_SLIDE, (0.0, 0.0, 1.0)),
                      ("pitch", mujoco.mjtJoint.mjJNT_HINGE, (0.0, 1.0, 0.0)))
"""A planar root's joints, in qpos order: world x and z of the root body's origin, and its pitch about y."""


def root_joint_names(placement: CharacterPlacement) -> list[str]:
    """MuJoCo joint names of a character's root: one free joint, or the three planar ones."""
    if placement.spec.root == "planar":
        return [f"{placement.name}/root:{axis}" for axis, _, _ in PLANAR_ROOT_JOINTS]
    return [f"{placement.name}/root"]


def sole_corner_sites(placement: CharacterPlacement) -> dict[str, list[tuple[str, tuple[float, float, float]]]]:
    """Per sole body: the named sites at the bottom corners of its box geoms, (name, position in the body frame)."""
    out: dict[str, list[tuple[str, tuple[float, float, float]]]] = {}
    for body in placement.spec.bodies:
        if body.name not in placement.spec.sole_bodies():
            continue
        for i, g in enumerate(body.geoms):
            if g.kind != "box":
                continue
            lo, hi = np.minimum(g.start, g.end), np.maximum(g.start, g.end)
            corners = [(x, y, float(lo[2])) for x in (lo[0], hi[0]) for y in (lo[1], hi[1])]
            out.setdefault(body.name, []).extend(
                (f"{placement.name}/{body.name}#{i}:{'heel' if x == lo[0] else 'toe'}-{'right' if y == lo[1] else 'left'}",
                 (float(x), float(y), z)) for x, y, z in corners)
    return out


def joint_names(placement: CharacterPlacement, joint: JointSpec) -> list[str]:
    """MuJoCo joint names for one spec joint (universal joints become two hinges)."""
    base = f"{placement.name}/{joint.name}"
    if joint.kind == "universal":
        return [f"{base}.0", f"{base}.1"]
    return [base]


def servo_names(placement: CharacterPlacement, joint: JointSpec) -> list[str]:
    base = f"{placement.name}/{joint.name}"
    if joint.kind == "ball":
        return [f"{base}:{a}" for a in SERVO_AXES]
    return [f"{n}:servo" for n in joint_names(placement, joint)]


def _geom_size_pos(g: GeomSpec) -> tuple[int, list[float], list[float], list[float]]:
    """(type, size, pos, fromto-or-empty) for an MjsGeom."""
    if g.kind == "capsule":
        return mujoco.mjtGeom.mjGEOM_CAPSULE, [g.radius, 0, 0], [0, 0, 0], [*g.start, *g.end]
    if g.kind == "box":
        lo, hi = np.minimum(g.start, g.end), np.maximum(g.start, g.end)
        return mujoco.mjtGeom.mjGEOM_BOX, list((hi - lo) / 2), list((hi + lo) / 2), []
    return mujoco.mjtGeom.mjGEOM_SPHERE, [g.radius, 0, 0], list(g.start), []


def _geom_support_points(g: GeomSpec) -> tuple[list[np.ndarray], float]:
    """Points (body frame) and a radius whose swept spheres bound the geom from below."""
    if g.kind == "capsule":
        return [np.asarray(g.start, float), np.asarray(g.end, float)], g.radius
    if g.kind == "box":
        lo, hi = np.minimum(g.start, g.end), np.maximum(g.start, g.end)
        return [np.array([x, y, z]) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])], 0.0
    return [np.asarray(g.start, float)], g.radius


def placement_height(spec: CharacterSpec, placement: CharacterPlacement, scene: Scene) -> float:
    """Root height putting the character's lowest point ``GROUND_MARGIN`` above the terrain.

    On a slope the feet are flat while the ground is not, so every geom is checked
    against the terrain under it (distance measured normal to the plane), not only
    against the height under the root.
    """
    terrain = scene.terrain
    slope = math.radians(terrain.slope_deg) if terrain.kind == "slope" else 0.0
    cos_slope = math.cos(slope)
    c, s = math.cos(placement.heading), math.sin(placement.heading)
    offsets = spec.zero_pose_offsets()
    need = -math.inf
    for b in spec.bodies:
        for g in b.geoms:
            points, radius = _geom_support_points(g)
            for p in points:
                p = offsets[b.name] + p
                ground = scene.ground(placement.x + c * p[0] - s * p[1], placement.y + s * p[0] + c * p[1])
                need = max(need, ground - p[2] + (radius + GROUND_MARGIN) / cos_slope)
    return need


def _add_character(spec_root: mujoco.MjSpec, placement: CharacterPlacement, scene: Scene) -> None:
    spec = placement.spec
    soles = spec.sole_bodies()
    bodies: dict[str, mujoco._specs.MjsBody] = {}
    for b in spec.bodies:
        if b.parent is None and spec.root == "planar":
            # The root's slides measure world x and z from the origin; the world places it (World.__init__).
            body = spec_root.worldbody.add_body(name=f"{placement.name}/{b.name}", pos=[0.0, placement.y, 0.0])
            for name, (_, kind, axis) in zip(root_joint_names(placement), PLANAR_ROOT_JOINTS):
                body.add_joint(name=name, type=kind, axis=list(axis))
        elif b.parent is None:
            pos = [placement.x, placement.y, placement_height(spec, placement, scene)]
            h = placement.heading / 2
            body = spec_root.worldbody.add_body(name=f"{placement.name}/{b.name}", pos=pos,
                                                quat=[math.cos(h), 0, 0, math.sin(h)])
            body.add_freejoint(name=f"{placement.name}/root")
        else:
            parent = bodies[b.parent]
            pos = list(np.subtract(b.joint.anchor_parent, b.joint.anchor_child))
            body = parent.add_body(name=f"{placement.name}/{b.name}", pos=pos)
            _add_joint(spec_root, body, placement, b)
        body.mass = b.mass
        body.inertia = list(b.inertia)
        body.explicitinertial = True
        body.ipos = [0, 0, 0]
        for i, g in enumerate(b.geoms):
            gtype, size, gpos, fromto = _geom_size_pos(g)
            geom = body.add_geom(name=f"{placement.name}/{b.name}#{i}", type=gtype, size=size)
            if fromto:
                geom.fromto = fromto
            else:
                geom.pos = gpos
            geom.friction = [spec.friction, 0.005, 0.0001]
            if b.name in soles:
                geom.condim = SOLE_CONDIM
                geom.friction = [spec.friction, spec.sole_torsional_friction, 0.0001]
            geom.contype, geom.conaffinity = CHARACTER_BITS
            geom.group = CHARACTER_GROUP
            geom.mass = 0
            geom.density = 0
            geom.rgba = _body_color(b)
        bodies[b.name] = body
    for body_name, sites in sole_corner_sites(placement).items():
        for name, pos in sites:
            bodies[body_name].add_site(name=name, pos=list(pos), size=[0.005, 0, 0], group=CHARACTER_GROUP)
    root = bodies[spec.bodies[0].name]
    cam = root.add_camera(name=f"{placement.name}/follow", mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
                          pos=[0.0, -3.2, 0.5])
    cam.alt.type = mujoco.mjtOrientation.mjORIENTATION_XYAXES
    cam.alt.xyaxes = [1, 0, 0, 0, 0.1, 1]


def _body_color(b: BodySpec) -> list[float]:
    sided = len(b.name) > 1 and b.name[1].isupper()   # lFoot / rFoot, but not lowerBack
    if (sided and b.name.startswith("l")) or b.name.startswith("left_"):
        return [0.85, 0.55, 0.35, 1]
    if (sided and b.name.startswith("r")) or b.name.startswith("right_"):
        return [0.35, 0.55, 0.85, 1]
    return [0.8, 0.8, 0.75, 1]


def _add_joint(spec_root: mujoco.MjSpec, body, placement: CharacterPlacement, b: BodySpec) -> None:
    joint = b.joint
    gains = placement.spec.gains[joint.gains]
    names = joint_names(placement, joint)
    if joint.kind == "ball":
        jnt = body.add_joint(name=names[0], type=mujoco.mjtJoint.mjJNT_BALL, pos=list(joint.anchor_child))
        jnt.range = [0, joint.ranges[0][1]]
        jnt.limited = mujoco.mjtLimited.mjLIMITED_TRUE
        for axis_index, servo in enumerate(servo_names(placement, joint)):
            gear = [0.0] * 6
            gear[axis_index] = 1.0
            _add_servo(spec_root, servo, names[0], gear, gains, placement.spec.actuation)
        return
    for name, axis, rng, servo in zip(names, joint.axes, joint.ranges, servo_names(placement, joint)):
        jnt = body.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_HINGE, pos=list(joint.anchor_child),
                             axis=list(axis))
        jnt.range = list(rng)
        jnt.limited = mujoco.mjtLimited.mjLIMITED_TRUE
        _add_servo(spec_root, servo, name, [1, 0, 0, 0, 0, 0], gains, placement.spec.actuation)


def _add_servo(spec_root: mujoco.MjSpec, name: str, joint: str, gear: list[float], gains, actuation: str) -> None:
    """A joint axis' actuator: a PD servo (``position``), or a motor whose ctrl is the torque (``torque``, and
    ``spd``, whose torque the world computes every step; see :mod:`strider.sim.actuation`)."""
    act = spec_root.add_actuator(name=name, target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    act.gear = gear
    act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
    if actuation == "position":
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        act.gainprm[0] = gains.kp
        act.biasprm[:3] = [0.0, -gains.kp, -gains.kd]
    else:
        act.biastype = mujoco.mjtBias.mjBIAS_NONE
        act.gainprm[0] = 1.0
    if gains.limit is None:
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
    else:
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-gains.limit, gains.limit]
    act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE


def _add_course(spec_root: mujoco.MjSpec, course: Course) -> None:
    """A course's floor plane, static boxes (support, pits, bars), height fields and loose crates."""
    floor = spec_root.worldbody.add_geom(name="course/floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05],
                                         pos=[0, 0, course.floor], material="ground")
    _make_terrain(floor, course.friction)
    for block in course.blocks:
        h = -block.pitch / 2   # MuJoCo turns +x down for a positive angle about +y
        geom = spec_root.worldbody.add_geom(
            name=block.name, type=mujoco.mjtGeom.mjGEOM_BOX, size=list(block.size), pos=list(block.centre),
            quat=[math.cos(h), 0, math.sin(h), 0])
        if block.support:
            geom.material = "ground"
        else:
            geom.rgba = OBSTACLE_RGBA
        _make_terrain(geom, course.friction)
    for i, field in enumerate(course.heightfields):
        _add_heightfield(spec_root, f"course/heightfield{i}", field.grid,
                         (field.x0 + field.length / 2, 0.0, field.base), (field.length / 2, field.half_width),
                         course.friction)
    for crate in course.crates:
        _add_prop(spec_root, Prop(crate.name, "box", crate.size, crate.mass, crate.centre, course.friction))


def _add_ground(spec_root: mujoco.MjSpec, scene: Scene) -> None:
    tex = spec_root.add_texture(name="grid", type=mujoco.mjtTexture.mjTEXTURE_2D,
                                builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, width=512, height=512,
                                rgb1=[0.32, 0.36, 0.40], rgb2=[0.24, 0.27, 0.30])
    mat = spec_root.add_material(name="ground")
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex.name
    mat.texrepeat = [1, 1]
    mat.texuniform = True
    if scene.course is not None:
        _add_course(spec_root, scene.course)
        return
    angle = math.radians(scene.terrain.slope_deg) if scene.terrain.kind == "slope" else 0.0
    # A plane through the origin, rising along +x: rotate about -y by the slope angle.
    quat = [math.cos(angle / 2), 0, -math.sin(angle / 2), 0]
    geom = spec_root.worldbody.add_geom(name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05],
                                        quat=quat, material="ground")
    _make_terrain(geom, scene.terrain.friction)
    terrain = scene.terrain
    if terrain.kind == "steps":
        for i, (x0, x1, h) in enumerate(terrain.step_boxes()):
            _add_box(spec_root, Box(f"terrain/step{i}", ((x0 + x1) / 2, 0.0, h / 2),
                                    ((x1 - x0) / 2, TERRAIN_HALF_WIDTH, h / 2), friction=terrain.friction))
    elif terrain.kind == "bumps":
        _add_bumps(spec_root, terrain)


def _add_bumps(spec_root: mujoco.MjSpec, terrain: Terrain) -> None:
    _add_heightfield(spec_root, "terrain/bumps", terrain.bump_grid(),
                     (terrain.bump_start + terrain.bump_length / 2, 0.0, 0.0),
                     (terrain.bump_length / 2, TERRAIN_HALF_WIDTH), terrain.friction)


def _add_heightfield(spec_root: mujoco.MjSpec, name: str, grid: np.ndarray, centre, half_size, friction: float) -> None:
    """A height field of ``grid`` heights (m, rows along y) above ``centre``'s level; MuJoCo stores elevations
    scaled to [0, 1] of size[2]."""
    top = float(grid.max()) or FLAT_FIELD_TOP
    nrow, ncol = grid.shape
    spec_root.add_hfield(name=name, nrow=nrow, ncol=ncol, size=[*half_size, top, BUMP_BASE],
                         userdata=list((grid / top).ravel()))
    geom = spec_root.worldbody.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=name,
                                        pos=list(centre), material="ground")
    _make_terrain(geom, friction)


def _make_terrain(geom, friction: float) -> None:
    """Terrain friction and collision bits: the characters and props collide with it."""
    geom.friction = [friction, 0.005, 0.0001]
    geom.contype, geom.conaffinity = GROUND_BITS


def _add_box(spec_root: mujoco.MjSpec, box: Box) -> None:
    h = box.yaw / 2
    geom = spec_root.worldbody.add_geom(name=box.name, type=mujoco.mjtGeom.mjGEOM_BOX, size=list(box.size),
                                        pos=list(box.pos), quat=[math.cos(h), 0, 0, math.sin(h)],
                                        rgba=OBSTACLE_RGBA)
    _make_terrain(geom, box.friction)
    if not box.terrain:
        geom.group = PROP_GROUP   # furniture: solid, but no ground-height ray sees it


def _add_prop(spec_root: mujoco.MjSpec, prop: Prop) -> None:
    body = spec_root.worldbody.add_body(name=prop.name, pos=list(prop.pos))
    body.add_freejoint(name=f"{prop.name}/free")
    gtype = mujoco.mjtGeom.mjGEOM_SPHERE if prop.shape == "sphere" else mujoco.mjtGeom.mjGEOM_BOX
    size = [prop.size[0], 0, 0] if prop.shape == "sphere" else list(prop.size)
    geom = body.add_geom(name=f"{prop.name}#0", type=gtype, size=size, mass=prop.mass,
                         rgba=[0.75, 0.35, 0.3, 1])
    geom.friction = [prop.friction, 0.005, 0.0001]
    if prop.own_friction:
        geom.priority = 1
    geom.contype, geom.conaffinity = PROP_BITS
    geom.group = PROP_GROUP


def grip_site_names(name: str) -> tuple[str, str]:
    """The sites the grip ``name``'s constraint joins: the hand point's and the handle's."""
    return f"grip/{name}/hand", f"grip/{name}/handle"


def _add_grip(spec_root: mujoco.MjSpec, grip: Grip) -> None:
    hand, handle = grip_site_names(grip.name)
    spec_root.body(f"{grip.character}/{grip.body}").add_site(name=hand, pos=list(grip.point), size=[0.01, 0, 0],
                                                             group=CHARACTER_GROUP)
    spec_root.body(grip.prop).add_site(name=handle, pos=list(grip.handle), size=[0.01, 0, 0], group=PROP_GROUP)
    spec_root.add_equality(name=f"grip/{grip.name}", type=mujoco.mjtEq.mjEQ_CONNECT, objtype=mujoco.mjtObj.mjOBJ_SITE,
                           name1=hand, name2=handle, active=False,
                           solref=[grip.time_constant, grip.damping_ratio])


def build_model(scene: Scene) -> mujoco.MjModel:
    """Compile a scene into an ``MjModel``."""
    spec_root = mujoco.MjSpec()
    spec_root.modelname = "strider"
    spec_root.compiler.degree = False  # joint ranges in the specs are radians
    opt = spec_root.option
    opt.timestep = scene.timestep
    opt.gravity = [0, 0, -scene.gravity]
    opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    # MuJoCo picks dense constraint Jacobians below 60 DOF, but a walking humanoid's few elliptic sole
    # contacts touch only the leg chains: the sparse Newton solve measured ~45% faster here, same physics.
    opt.jacobian = mujoco.mjtJacobian.mjJAC_SPARSE
    spec_root.default.geom.solref = list(CONTACT_SOLREF)
    spec_root.visual.global_.offwidth = 1920
    spec_root.visual.global_.offheight = 1080
    spec_root.visual.quality.offsamples = 2  # light anti-aliasing: software GL renders are the video's cost
    spec_root.add_texture(name="sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                          builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, width=256, height=256,
                          rgb1=[0.55, 0.65, 0.8], rgb2=[0.1, 0.12, 0.18])
    spec_root.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec_root.visual.headlight.diffuse = [0.6, 0.6, 0.6]
    spec_root.worldbody.add_light(name="sun", pos=[0, 0, 6], dir=[0.3, 0.3, -1],
                                  type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL, castshadow=False)
    _add_ground(spec_root, scene)
    for box in scene.obstacles:
        _add_box(spec_root, box)
    for prop in scene.props:
        _add_prop(spec_root, prop)
    for placement in scene.characters:
        _add_character(spec_root, placement, scene)
    for grip in scene.grips:
        _add_grip(spec_root, grip)
    return spec_root.compile()
