"""Skills as data (seed 003, Sec. 3.7; torres-skills.md Decision 25): the YAML schema and its loader.

A skill is a small state machine over the component vocabulary::

    name, description, character, control_period
    start:   {pose: stand|supine|prone, settle: s, drop: m}
    gains:   {group: {kp, kd}}                 # overrides of the character's PD table
    poses:   {name: [joint targets]}           # base poses states hold
    actions: [{name, states: [{name, pose, joints, components, transitions}]}]
    end:     {checks: [...]}                   # success test (torres-skills.md, P6), e.g. orientation, forward pitch
    optimize: {params, cma, seconds, cost}     # what CMA-ES may change (Sec. 6), within each param's range

A joint target (in a pose or a state's ``joints``) is a rotation of ``angle``
radians about ``axis`` (the joint's child frame, MuJoCo axes), or a knot
trajectory ``knots: {times, values}`` of such angles over the state's time
(Catmull-Rom, E3/E4). A state's trajectories turn their joints away from the
state's pose (its K0): q = q_pose * exp(theta * axis). ``joints: [a, b]`` splits the angle equally over several
joints (the source's single "abdominal" joint over the two spine joints,
Decision 1); ``mirror: true`` also drives each joint's left/right counterpart
with the mirrored axis (the forward roll's "left copies right").

Transitions: ``{on: time, after: s, to}``, ``{on: contact, bodies: [...], to}``,
``{on: direct, to}``, ``{on: fall, to}``, ``{on: capture, margin: m, to}`` (the capture
point has left the support polygon by more than ``margin``), ``{on: recovered, feet_within: d, to}`` (a
``locomotion`` delegate in ``mode: recover`` has caught the body, and, if ``feet_within`` is given, its
ankles lie at most ``d`` m apart horizontally). ``to`` names a state of the same action,
``action.state`` of another, or ``end``.

Every field is checked on load; a bad file fails with the file, the dotted
field path and the problem (torres-skills.md, P8).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from strider.datafile import Fields, load_yaml, resolve_data_file, shipped_names
from strider.errors import ConfigError, UsageError

DATA_DIR = Path(__file__).parent / "data"

START_POSES = ("stand", "supine", "prone")
FRAMES = ("parent", "character")
TRANSITIONS = ("time", "contact", "direct", "fall", "capture", "recovered")
LOCOMOTION_MODES = ("walk", "recover")
MAX_CAPTURE_MARGIN = 0.5    # m: a capture point further out than this cannot be caught by a step
MIN_FEET_APART, MAX_FEET_APART = 0.05, 2.0   # m: ankles closer than the first overlap; the second is a split
COMPONENTS = ("balance", "upright", "ragdoll", "locomotion", "foot_flat")
VECTORS = ("front", "up")
DIRECTIONS = ("up", "down")
COST_TERMS = ("angle", "height", "torque", "pitch")
REDUCTIONS = ("min", "mean")    # how an angle term sums up its window
MAX_SECONDS = 60.0          # s: skills are seconds long; more is a typo
MAX_KP = 5000.0             # N m/rad: stiffer than any joint table in strider
# Perturbed starts an optimization averages over are seeded from here, apart from P6's test seeds 0-49,
# so a robustness figure is measured on starts the optimizer never saw.
TRAINING_SEED = 1000
MAX_KNOT_BOUND = 4 * math.pi   # rad: two turns; a wider bound is no bound
MAX_PITCH = 4 * math.pi        # rad: two somersaults; a larger pitch target or threshold is a typo


@dataclass(frozen=True)
class JointTarget:
    """A rotation about a fixed axis, constant or following knots over the state's time (E3)."""

    joints: tuple[str, ...]
    axis: tuple[float, float, float]
    times: tuple[float, ...]
    values: tuple[float, ...]
    frame: str = "parent"
    mirror: bool = False


@dataclass(frozen=True)
class Transition:
    on: str
    to: str
    after: float = 0.0
    bodies: tuple[str, ...] = ()
    margin: float = 0.0     # m, ``capture``: how far outside the support polygon the capture point may go
    feet_within: float | None = None   # m, ``recovered``: only with the ankles at most this far apart (None: any)


@dataclass(frozen=True)
class State:
    name: str
    pose: str | None
    joints: tuple[JointTarget, ...]
    components: dict[str, dict[str, Any]]
    transitions: tuple[Transition, ...]


@dataclass(frozen=True)
class Action:
    name: str
    states: tuple[State, ...]


@dataclass(frozen=True)
class Start:
    pose: str = "stand"
    settle: float = 0.0     # s under PD before t = 0 (Decision 24: 1 s for lying starts)
    drop: float = 0.01      # m above the ground for lying starts (Decision 24)


@dataclass(frozen=True)
class Check:
    """Over the window (``mode`` all or any samples): the torso's ``vector`` within ``within`` rad of
    ``direction``, the pelvis below ``pelvis_below`` m, the torso pitched forward by more than ``pitch_above``
    rad since the skill started (any of them may be left out, not all)."""

    window: tuple[float, float]
    vector: str = "front"
    direction: str | None = None
    within: float | None = None
    mode: str = "all"
    pelvis_below: float | None = None
    pitch_above: float | None = None


@dataclass(frozen=True)
class CostTerm:
    """One weighted term of a CMA objective (E14, E15).

    An angle term is measured ``at`` one time, or over a ``window`` reduced by
    ``reduce``: ``min`` is the closest the torso came to the target (progress
    that counts even when a roll falls back), ``mean`` its average. The source
    lets terms be evaluated "multiple times during the execution" (Sec. 6.2).

    A pitch term (beyond the source) is the shortfall, in rad, of the torso's forward rotation about the
    character's lateral axis over its ``window`` from ``target``: max(0, target - pitch). It tells a roll
    over the head (about +3/2 pi from standing to supine) from sitting down backwards (about -pi/2).
    """

    term: str
    weight: float
    at: float | None = None
    vector: str = "front"
    direction: str = "down"
    bodies: tuple[str, ...] = ()
    window: tuple[float, float] | None = None
    reduce: str = "min"
    target: float = 0.0         # rad, a pitch term's forward rotation to reach


@dataclass(frozen=True)
class FreeParam:
    """Free entries of one trajectory of the first action: knot values by index, and its axis.

    ``range`` (rad) bounds these knot values, e.g. to the joint's range of motion; without it the
    optimization's ``knot_bound`` applies.
    """

    action: str
    state: str
    trajectory: int
    knots: tuple[int, ...]
    axis: bool
    range: tuple[float, float] | None = None


@dataclass(frozen=True)
class Optimize:
    params: tuple[FreeParam, ...]
    cost: tuple[CostTerm, ...]
    seconds: float
    sigma0: float = 0.5          # Decision 23
    maxfevals: int = 1000        # Decision 23
    popsize: int | None = None   # None: pycma's 4 + floor(3 ln n) (Decision 23)
    trials: int = 1              # starts averaged per evaluation: the nominal one, then trials - 1 perturbed ones
    perturb: float = 0.05        # rad, per joint, for the perturbed starts (P6's size)
    trial_seed: int = TRAINING_SEED   # the perturbed starts' seeds are trial_seed, trial_seed + 1, ...
    knot_bound: float | None = None   # rad: free knot angles stay in [-b, b]; None leaves them unbounded


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    character: str
    control_period: float
    start: Start
    gains: dict[str, tuple[float, float]]
    poses: dict[str, tuple[JointTarget, ...]]
    actions: tuple[Action, ...]
    seconds: float
    checks: tuple[Check, ...] = ()
    optimize: Optimize | None = None
    source: str = ""
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    def state(self, action: str, state: str) -> State:
        for a in self.actions:
            if a.name == action:
                for s in a.states:
                    if s.name == state:
                        return s
        raise KeyError(f"{action}.{state}")

    def with_trajectory(self, action: str, state: str, index: int, target: JointTarget) -> Skill:
        """A copy with one trajectory replaced (how the optimizer writes its candidates)."""
        actions = []
        for a in self.actions:
            states = []
            for s in a.states:
                if a.name == action and s.name == state:
                    joints = list(s.joints)
                    joints[index] = target
                    s = replace(s, joints=tuple(joints))
                states.append(s)
            actions.append(replace(a, states=tuple(states)))
        return replace(self, actions=tuple(actions))


def available_skills() -> list[str]:
    return shipped_names(DATA_DIR)


def skill_path(name_or_path: str | Path) -> Path:
    return resolve_data_file(name_or_path, DATA_DIR, "skill")


def load_skill(name_or_path: str | Path, joint_names: set[str] | None = None,
               body_names: set[str] | None = None) -> Skill:
    """Read and validate a skill, including its joint and body names against its character (or those given)."""
    path = skill_path(name_or_path)
    data = load_yaml(path)
    skill = parse_skill(data, str(path), joint_names, body_names)
    if joint_names is None and body_names is None:
        from strider.characters import load_character

        spec = load_character(skill.character)
        skill = parse_skill(data, str(path), {j.name for j in spec.joints()}, {b.name for b in spec.bodies})
    return skill


_TOP = {"name", "description", "character", "control_period", "start", "gains", "poses", "actions", "seconds",
        "end", "optimize"}


def parse_skill(data: dict, source: str, joint_names: set[str] | None = None,
                body_names: set[str] | None = None) -> Skill:
    f = Fields(data, source)
    f.reject_unknown(_TOP)
    names = _Names(joint_names, body_names)
    start = _start(f.mapping("start", {}))
    gains = {}
    g = f.mapping("gains", {})
    for group in g.data:
        gf = g.mapping(group)
        gf.reject_unknown({"kp", "kd"})
        kp = gf.number("kp", min=0.0, max=MAX_KP)
        gains[str(group)] = (kp, gf.number("kd", 2.0 * math.sqrt(kp), min=0.0, max=MAX_KP))  # Decision 3
    poses = {}
    pf = f.mapping("poses", {})
    for pose in pf.data:
        poses[str(pose)] = tuple(_joint_target(t, names, constant=True) for t in pf.items(pose))
    actions = tuple(_action(a, names, set(poses)) for a in f.items("actions"))
    if not actions:
        raise f.error("actions", "a skill needs at least one action")
    _check_transitions(f, actions)
    seconds = f.number("seconds", min=0.0, max=MAX_SECONDS, positive=True)
    end = f.mapping("end", {})
    end.reject_unknown({"checks"})
    checks = tuple(_check(c, seconds) for c in end.items("checks", []))
    optimize = _optimize(f.mapping("optimize"), actions, names) if f.has("optimize") else None
    return Skill(name=f.string("name"), description=f.string("description", ""),
                 character=f.string("character", "bipv3"),
                 control_period=f.number("control_period", 0.01, min=1e-4, max=0.05),
                 start=start, gains=gains, poses=poses, actions=actions, seconds=seconds, checks=checks,
                 optimize=optimize, source=source, raw=data)


class _Names:
    def __init__(self, joints: set[str] | None, bodies: set[str] | None):
        self.joints, self.bodies = joints, bodies

    def joint(self, f: Fields, key: str, name: Any) -> str:
        return self._known(f, key, name, "joint", self.joints)

    def body(self, f: Fields, key: str, name: Any) -> str:
        return self._known(f, key, name, "body", self.bodies)

    @staticmethod
    def _known(f: Fields, key: str, name: Any, kind: str, known: set[str] | None) -> str:
        if not isinstance(name, str):
            raise f.error(key, f"expected a {kind} name, got {name!r}")
        if known is not None and name not in known:
            raise f.error(key, f"unknown {kind} {name!r}")
        return name


def _start(f: Fields) -> Start:
    f.reject_unknown({"pose", "settle", "drop"})
    return Start(pose=f.string("pose", "stand", choices=START_POSES), settle=f.number("settle", 0.0, min=0.0, max=10.0),
                 drop=f.number("drop", 0.01, min=0.0, max=1.0))


def _string_list(f: Fields, key: str, check) -> tuple[str, ...]:
    value = f.raw(key)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise f.error(key, f"expected a name or a non-empty list of names, got {value!r}")
    return tuple(check(f, key, v) for v in value)


def _joint_target(f: Fields, names: _Names, constant: bool = False) -> JointTarget:
    allowed = {"joints", "axis", "angle", "frame", "mirror"} | (set() if constant else {"knots"})
    f.reject_unknown(allowed)
    joints = _string_list(f, "joints", names.joint)
    axis = f.vector("axis", 3)
    if math.sqrt(sum(a * a for a in axis)) < 1e-9:
        raise f.error("axis", "must not be the zero vector")
    mirror = f.flag("mirror", False)
    frame = f.string("frame", "parent", choices=FRAMES)
    if f.has("knots") == f.has("angle"):
        raise f.error("knots" if not constant else "angle",
                      "give exactly one of 'angle' and 'knots'" if not constant else "missing required field")
    if f.has("angle"):
        times, values = (0.0,), (f.number("angle", min=-2 * math.pi, max=2 * math.pi),)
    else:
        k = f.mapping("knots")
        k.reject_unknown({"times", "values"})
        times, values = k.numbers("times"), k.numbers("values")
        if len(times) != len(values):
            raise k.error("values", f"expected {len(times)} values, one per time, got {len(values)}")
        if any(b <= a for a, b in itertools.pairwise(times)):
            raise k.error("times", "must increase strictly")
        if times[0] < 0:
            raise k.error("times", "must be >= 0")
    return JointTarget(joints, axis, times, values, frame, mirror)



def _action(f: Fields, names: _Names, poses: set[str]) -> Action:
    f.reject_unknown({"name", "states"})
    states = tuple(_state(s, names, poses) for s in f.items("states"))
    if not states:
        raise f.error("states", "an action needs at least one state")
    seen = set()
    for i, s in enumerate(states):
        if s.name in seen:
            raise ConfigError(f.source, f"{f.path}.states[{i}].name", f"duplicate state name {s.name!r}")
        seen.add(s.name)
    return Action(f.string("name"), states)


def _state(f: Fields, names: _Names, poses: set[str]) -> State:
    f.reject_unknown({"name", "pose", "joints", "components", "transitions"})
    pose = f.string("pose", None)
    if pose is not None and pose not in poses:
        raise f.error("pose", f"unknown pose {pose!r} (defined: {', '.join(sorted(poses)) or 'none'})")
    joints = tuple(_joint_target(t, names) for t in f.items("joints", []))
    comps = f.mapping("components", {})
    comps.reject_unknown(set(COMPONENTS))
    components = {}
    for name in comps.data:
        params = comps.mapping(name)
        components[str(name)] = _component(params, str(name))
    transitions = tuple(_transition(t, names) for t in f.items("transitions", []))
    return State(f.string("name"), pose, joints, components, transitions)


_COMPONENT_FIELDS = {
    "balance": {"kp": (0.0, 1000.0), "kd": (0.0, 1000.0), "limit": (0.0, 5000.0), "ankle_offset": (-0.2, 0.2),
                "sole_margin": (0.0, 1.0), "plant": (0.0, 5.0)},
    "upright": {"kp_scale": (0.0, 10.0)},
    "ragdoll": {},
    "foot_flat": {},
    "locomotion": {"speed": (-3.0, 3.0), "period": (0.1, 2.0)},
}


def _component(f: Fields, name: str) -> dict[str, Any]:
    allowed = dict(_COMPONENT_FIELDS[name])
    extra = {"controller", "style", "mode"} if name == "locomotion" else set()
    f.reject_unknown(set(allowed) | extra)
    out: dict[str, Any] = {k: f.number(k, min=lo, max=hi) for k, (lo, hi) in allowed.items() if f.has(k)}
    if name == "locomotion":
        from strider.methods.registry import RECOVERY_STEP, controller_entry

        out["controller"] = f.string("controller")
        out["style"] = f.string("style", None)
        out["mode"] = f.string("mode", "walk", choices=LOCOMOTION_MODES)
        # The controller must exist and have what the mode asks of it, or the skill would fail mid-run.
        try:
            entry = controller_entry(out["controller"])
            if out["mode"] == "recover":
                entry.require(out["controller"], RECOVERY_STEP)
        except UsageError as exc:
            raise f.error("controller", str(exc)) from None
    return out


def _transition(f: Fields, names: _Names) -> Transition:
    if True in f.data:   # YAML 1.1 reads a bare ``on:`` key as the boolean true
        f = Fields({("on" if k is True else k): v for k, v in f.data.items()}, f.source, f.path)
    f.reject_unknown({"on", "to", "after", "bodies", "margin", "feet_within"})
    on = f.string("on", choices=TRANSITIONS)
    after = f.number("after", min=0.0, max=MAX_SECONDS) if on == "time" else 0.0
    bodies = _string_list(f, "bodies", names.body) if on == "contact" else ()
    if on != "time" and f.has("after"):
        raise f.error("after", f"only a 'time' transition takes 'after' (this one is on {on!r})")
    if on != "capture" and f.has("margin"):
        raise f.error("margin", f"only a 'capture' transition takes 'margin' (this one is on {on!r})")
    margin = f.number("margin", 0.0, min=-MAX_CAPTURE_MARGIN, max=MAX_CAPTURE_MARGIN) if on == "capture" else 0.0
    if on != "recovered" and f.has("feet_within"):
        raise f.error("feet_within", f"only a 'recovered' transition takes 'feet_within' (this one is on {on!r})")
    feet_within = (f.number("feet_within", None, min=MIN_FEET_APART, max=MAX_FEET_APART)
                   if on == "recovered" else None)
    return Transition(on, f.string("to"), after, bodies, margin, feet_within)


def _check_transitions(f: Fields, actions: tuple[Action, ...]) -> None:
    """Every ``to`` names a state that exists (dangling references fail at load, P8)."""
    known = {(a.name, s.name) for a in actions for s in a.states}
    for ai, a in enumerate(actions):
        for si, s in enumerate(a.states):
            for ti, t in enumerate(s.transitions):
                target = resolve_target(a.name, t.to)
                if target is not None and target not in known:
                    raise ConfigError(f.source, f"actions[{ai}].states[{si}].transitions[{ti}].to",
                                      f"no state {t.to!r} (states: {', '.join(f'{x}.{y}' for x, y in sorted(known))})")


def resolve_target(action: str, to: str) -> tuple[str, str] | None:
    """(action, state) a transition goes to; None for ``end``."""
    if to == "end":
        return None
    if "." in to:
        a, _, s = to.partition(".")
        return a, s
    return action, to


def _check(f: Fields, seconds: float) -> Check:
    f.reject_unknown({"window", "vector", "direction", "within", "mode", "pelvis_below", "pitch_above"})
    window = f.vector("window", 2)
    if not (0 <= window[0] <= window[1] <= seconds):
        raise f.error("window", f"must satisfy 0 <= start <= end <= seconds ({seconds:g}), got {list(window)}")
    oriented = f.has("direction") or f.has("within") or not f.has("pitch_above")
    if oriented:   # an orientation test needs both its direction and its tolerance
        direction, within = f.string("direction", choices=DIRECTIONS), f.number("within", min=0.0, max=math.pi)
    elif f.has("vector"):
        raise f.error("vector", "only a check with 'direction' and 'within' takes 'vector'")
    else:
        direction = within = None
    return Check(window, f.string("vector", "front", choices=VECTORS), direction, within,
                 f.string("mode", "all", choices=("all", "any")), f.number("pelvis_below", None, min=0.0, max=3.0),
                 f.number("pitch_above", None, min=-MAX_PITCH, max=MAX_PITCH))


def _optimize(f: Fields, actions: tuple[Action, ...], names: _Names) -> Optimize:
    f.reject_unknown({"params", "cost", "seconds", "sigma0", "maxfevals", "popsize", "trials", "perturb",
                      "trial_seed", "knot_bound"})
    params = []
    for p in f.items("params"):
        p.reject_unknown({"action", "state", "trajectory", "knots", "axis", "range"})
        action = p.string("action", actions[0].name)
        match = [a for a in actions if a.name == action]
        if not match:
            raise p.error("action", f"no action {action!r}")
        state = p.string("state", match[0].states[0].name)
        st = [s for s in match[0].states if s.name == state]
        if not st:
            raise p.error("state", f"no state {state!r} in action {action!r}")
        index = p.number("trajectory", min=0)
        if index != int(index) or int(index) >= len(st[0].joints):
            raise p.error("trajectory", f"expected an index below {len(st[0].joints)}, got {index!r}")
        traj = st[0].joints[int(index)]
        knots = []
        for i, k in enumerate(p.raw("knots", [])):
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(traj.values):
                raise p.error(f"knots[{i}]", f"expected a knot index below {len(traj.values)}, got {k!r}")
            knots.append(k)
        axis = p.flag("axis", False)
        if not knots and not axis:
            raise p.error("knots", "a free parameter entry needs knots or axis: true")
        bound = p.vector("range", 2, None)
        if bound is not None and not -MAX_KNOT_BOUND <= bound[0] < bound[1] <= MAX_KNOT_BOUND:
            raise p.error("range", f"must satisfy {-MAX_KNOT_BOUND:.4g} <= low < high <= {MAX_KNOT_BOUND:.4g} (rad), "
                                   f"got {list(bound)}")
        if bound is not None and not knots:
            raise p.error("range", "only an entry with knots takes a 'range'")
        if bound is not None and any(not bound[0] <= traj.values[k] <= bound[1] for k in knots):
            raise p.error("range", f"the initial knot values {[traj.values[k] for k in knots]} must lie in it")
        params.append(FreeParam(action, state, int(index), tuple(knots), axis, bound))
    if not params:
        raise f.error("params", "nothing to optimize")
    seconds = f.number("seconds", positive=True, max=MAX_SECONDS)
    costs = [_cost_term(c, names, seconds) for c in f.items("cost")]
    if not costs:
        raise f.error("cost", "an objective needs at least one term")
    popsize = f.number("popsize", None, min=2, max=1000)
    maxfevals = f.number("maxfevals", 1000, min=1, max=1_000_000)
    trials = f.number("trials", 1, min=1, max=100)
    return Optimize(tuple(params), tuple(costs), seconds,
                    f.number("sigma0", 0.5, positive=True, max=10.0), int(maxfevals),
                    None if popsize is None else int(popsize), int(trials), f.number("perturb", 0.05, min=0.0, max=1.0),
                    _integer(f, "trial_seed", TRAINING_SEED, 0),
                    f.number("knot_bound", None, positive=True, max=MAX_KNOT_BOUND))


def _cost_term(c: Fields, names: _Names, seconds: float) -> CostTerm:
    """One term of ``optimize.cost``; its times must fall within the optimized rollout's ``seconds``."""
    c.reject_unknown({"term", "weight", "at", "window", "reduce", "vector", "direction", "bodies", "target"})
    term = c.string("term", choices=COST_TERMS)
    bodies = _string_list(c, "bodies", names.body) if term == "height" else ()
    at = c.number("at", None, min=0.0, max=seconds)
    window = c.vector("window", 2, None)
    if term == "angle" and (at is None) == (window is None):
        raise c.error("at", "an angle term needs exactly one of 'at' (a time) and 'window' ([start, end])")
    if term == "pitch" and window is None:
        raise c.error("window", "a pitch term needs a 'window' ([start, end]) to accumulate the rotation over")
    if term == "pitch" and at is not None:
        raise c.error("at", "a pitch term takes a 'window', not 'at'")
    if window is not None and not 0 <= window[0] <= window[1] <= seconds:
        raise c.error("window", f"must satisfy 0 <= start <= end <= seconds ({seconds:g}), got {list(window)}")
    if c.has("reduce") and (window is None or term != "angle"):
        raise c.error("reduce", "only an angle term over a 'window' takes 'reduce'")
    if (term == "pitch") != c.has("target"):
        raise c.error("target", "a pitch term needs a 'target' (rad)" if term == "pitch"
                      else "only a pitch term takes a 'target'")
    target = c.number("target", min=-MAX_PITCH, max=MAX_PITCH) if term == "pitch" else 0.0
    return CostTerm(term, c.number("weight", min=0.0), at, c.string("vector", "front", choices=VECTORS),
                    c.string("direction", "down", choices=DIRECTIONS), bodies, window,
                    c.string("reduce", "min", choices=REDUCTIONS), target)


def _integer(f: Fields, key: str, default: int, minimum: int) -> int:
    value = f.number(key, default, min=minimum)
    if value != int(value):
        raise f.error(key, f"expected a whole number, got {value!r}")
    return int(value)
