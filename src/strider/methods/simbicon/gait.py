"""SIMBICON gaits as data (seed 000, Sec. 2.4): per-state targets, dwell times, balance feedback gains.

A gait file lists the states of one step (the next step mirrors them), each
with a dwell time and how it ends (``time``, or ``contact`` of the swing foot
once the dwell has passed), and the targets it tracks. Targets are radians:
hips, torso and the stance hip's root are tracked in the world (character)
frame; knees and ankles are parent-relative (Sec. 2.4). Positive sagittal
angles swing the thigh forward, bend the knee, and lift the toes.

A target is a number, held through the state, or a Catmull-Rom curve over the
state's phase t / dwell (Sec. 2.4: "about 2 points per DOF, at most 6"), e.g.
``swing_knee: {phases: [0, 0.5, 1], values: [0.3, 1.1, 0.2]}``. A state that
ends on contact holds the curve's last value past its dwell.

A gait is for one kind of body (``body``): a 3-D ``humanoid`` (the default;
its files ship in ``data/``) or a ``planar`` walker (``data/planar/``), which
has no coronal plane, arms or spine. The same style name (``walk``, ``run``)
names each body's own gait.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from strider.control.trajectory import CatmullRom, read_trajectory
from strider.datafile import Fields, load_yaml, resolve_data_file, shipped_names

DATA_DIR = Path(__file__).parent / "data"
BODIES = ("humanoid", "planar")
BODY_DIRS = {"humanoid": DATA_DIR, "planar": DATA_DIR / "planar"}
ENDINGS = ("time", "contact")


MAX_KNOTS = 6   # knots per target curve (seed 000, Sec. 2.4)


@dataclass(frozen=True)
class GaitState:
    """One state of a step: every target a curve over the state's phase (a constant is a one-knot curve)."""

    dwell: float
    ends_on: str
    swing_hip: CatmullRom          # rad, world-frame thigh pitch forward (theta_d0, Eq. 2.1)
    swing_hip_lateral: CatmullRom  # rad, world-frame thigh roll away from the stance leg
    swing_knee: CatmullRom
    swing_ankle: CatmullRom
    stance_knee: CatmullRom
    stance_ankle: CatmullRom
    torso: CatmullRom              # rad of forward lean, world frame

    def phase(self, time_in_state: float) -> float:
        """Where ``time_in_state`` falls in the state, 0..1 (held at 1 past the dwell)."""
        return min(time_in_state / self.dwell, 1.0) if self.dwell > 0.0 else 1.0


@dataclass(frozen=True)
class Feedback:
    """Eq. 2.1 gains: theta_d = theta_d0 + cd d + cv v, per plane."""

    cd_sagittal: float
    cv_sagittal: float
    cd_coronal: float
    cv_coronal: float


@dataclass(frozen=True)
class Gait:
    name: str
    body: str                     # which kind of character it drives (BODIES)
    states: tuple[GaitState, ...]
    feedback: Feedback
    gains: dict[str, tuple[float, float]]   # gain group -> (kp, kd), overriding the character's table
    root_gains: tuple[float, float] | None
    arm_down: float
    elbow_bend: float
    step_width: float


def available_gaits(body: str = "humanoid") -> list[str]:
    return shipped_names(BODY_DIRS[body])


def check_style(name_or_path: str) -> str:
    """``name_or_path`` if it is a gait file or some body's shipped gait; else a UsageError listing them."""
    if any((folder / f"{name_or_path}.yaml").is_file() for folder in BODY_DIRS.values()):
        return name_or_path
    resolve_data_file(name_or_path, DATA_DIR, "SIMBICON gait")   # a path, or the error naming what ships
    return name_or_path


def body_of(spec) -> str:
    """The kind of body a character spec has, for picking its gaits: ``planar`` or ``humanoid``."""
    return "planar" if spec.root == "planar" else "humanoid"


_STATE_FIELDS = {"dwell", "ends_on", "swing_hip", "swing_hip_lateral", "swing_knee", "swing_ankle", "stance_knee",
                 "stance_ankle", "torso"}


def gait_path(name_or_path: str, body: str = "humanoid") -> Path:
    return resolve_data_file(name_or_path, BODY_DIRS[body], f"SIMBICON {body} gait")


def load_gait(name_or_path: str, body: str = "humanoid") -> Gait:
    """A gait by name (``body``'s shipped gaits) or path; a file for another body is refused."""
    path = gait_path(name_or_path, body)
    return parse_gait(load_yaml(path), str(path), path.stem, body)


def parse_gait(data: dict, source: str, default_name: str, body: str = "humanoid") -> Gait:
    """A gait from a gait file's contents (``source`` names it in errors)."""
    f = Fields(data, source)
    f.reject_unknown({"name", "description", "body", "states", "feedback", "gains", "root_gains", "arm_down",
                      "elbow_bend", "step_width", "tuning"})
    kind = f.string("body", "humanoid", choices=BODIES)
    if kind != body:
        raise f.error("body", f"this gait drives a {kind} character, not a {body} one")
    states = []
    for s in f.items("states"):
        s.reject_unknown(_STATE_FIELDS)
        states.append(GaitState(
            dwell=s.number("dwell", min=0.0, max=2.0), ends_on=s.string("ends_on", "time", choices=ENDINGS),
            swing_hip=_target(s, "swing_hip", -1.5, 1.5),
            swing_hip_lateral=_target(s, "swing_hip_lateral", -1.0, 1.0, 0.0),
            swing_knee=_target(s, "swing_knee", 0.0, 2.5), swing_ankle=_target(s, "swing_ankle", -0.75, 0.75),
            stance_knee=_target(s, "stance_knee", 0.0, 2.5), stance_ankle=_target(s, "stance_ankle", -0.75, 0.75),
            torso=_target(s, "torso", -1.0, 1.0, 0.0)))
    if not states:
        raise f.error("states", "a gait needs at least one state")
    fb = f.mapping("feedback")
    fb.reject_unknown({"cd_sagittal", "cv_sagittal", "cd_coronal", "cv_coronal"})
    feedback = Feedback(*(fb.number(k, min=-5.0, max=5.0) for k in ("cd_sagittal", "cv_sagittal", "cd_coronal",
                                                                    "cv_coronal")))
    gains = {}
    g = f.mapping("gains", {})
    for group in g.data:
        gg = g.mapping(group)
        gg.reject_unknown({"kp", "kd"})
        gains[str(group)] = (gg.number("kp", min=0.0, max=5000.0), gg.number("kd", min=0.0, max=1000.0))
    root = None
    if f.has("root_gains"):
        r = f.mapping("root_gains")
        r.reject_unknown({"kp", "kd"})
        root = (r.number("kp", min=0.0, max=5000.0), r.number("kd", min=0.0, max=1000.0))
    return Gait(f.string("name", default_name), kind, tuple(states), feedback, gains, root,
                f.number("arm_down", 1.35, min=0.0, max=1.6), f.number("elbow_bend", 0.3, min=0.0, max=2.5),
                f.number("step_width", 0.0, min=-0.5, max=0.5))


def _target(state: Fields, key: str, low: float, high: float, default: float = ...) -> CatmullRom:
    """One target of a state: a number or a curve of at most ``MAX_KNOTS`` knots, its values in [low, high] rad."""
    curve = read_trajectory(state, key, default, low=low, high=high)
    if len(curve.phases) > MAX_KNOTS:
        raise state.error(key, f"at most {MAX_KNOTS} knots per target, got {len(curve.phases)}")
    return curve
