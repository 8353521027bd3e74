"""A learned skill as one versioned file: its fragments (refined open-loop targets, reference ends, start
state), the linear feedback policy of every fragment, and how it was learned (the learning curve). Where
learning went on past its best iteration, the file keeps that iteration's policies too, and they are the ones
played; the latest are where learning resumes. While learning pools the tuples of several paths, the file
keeps them too, so a resumed learner regresses on the same.

The file is a NumPy ``.npz`` archive without pickled objects, so loading it runs no code. It is written
after every learning iteration, so it is also the learner's checkpoint: ``iteration`` says how many
iterations it holds, and a learner resumes from it.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from strider.errors import UsageError
from strider.methods.graphs.features import FEATURES, FOOT_BODIES
from strider.methods.graphs.reference import GAIN_SETS, Reference
from strider.methods.graphs.scoring import BALL_JOINTS, HINGE_JOINTS, Summary
from strider.optimize.sampling import LinearGaussian

FORMAT = "strider-skill"
VERSION = 1
_SUMMARY_FIELDS = [f.name for f in fields(Summary)]


@dataclass(frozen=True)
class LearnedSkill:
    reference: Reference
    joints: tuple[str, ...]                  # the policy's action joints (ActionLayout order)
    policies: tuple[LinearGaussian, ...]     # one per fragment
    iteration: int = 0                       # learning iterations done
    curve: tuple[dict, ...] = ()             # per iteration: survival time, wall time, samples ...
    settings: dict = field(default_factory=dict)
    pool: TuplePool | None = None            # the recent paths' tuples the next regression pools (learning only)
    best: tuple[LinearGaussian, ...] | None = None   # the policies of the iteration that stayed up longest
    best_iteration: int | None = None

    @property
    def name(self) -> str:
        return self.reference.name

    @property
    def playing(self) -> tuple[LinearGaussian, ...]:
        """The policies a player runs: the best iteration's, where learning went on past it, else the latest."""
        return self.best if self.best is not None else self.policies

    @property
    def playing_iteration(self) -> int:
        """The iteration whose policies :attr:`playing` holds."""
        return self.best_iteration if self.best is not None else self.iteration

    @property
    def playing_record(self) -> dict:
        """The learning curve's entry of :attr:`playing_iteration` (how long its policies kept the character up)."""
        return next(c for c in self.curve if c["iteration"] == self.playing_iteration)


@dataclass(frozen=True)
class TuplePool:
    """(state, action) tuples of recent SAMCON paths, each tagged with its fragment and the iteration that found it."""

    iterations: np.ndarray   # (n,)
    fragments: np.ndarray    # (n,)
    features: np.ndarray     # (n, 18)
    actions: np.ndarray      # (n, action size)

    def since(self, iteration: int) -> TuplePool:
        keep = self.iterations >= iteration
        return TuplePool(self.iterations[keep], self.fragments[keep], self.features[keep], self.actions[keep])

    def plus(self, iteration: int, fragments: np.ndarray, features: np.ndarray, actions: np.ndarray) -> TuplePool:
        return TuplePool(np.concatenate([self.iterations, np.full(len(fragments), iteration)]),
                         np.concatenate([self.fragments, fragments]), np.concatenate([self.features, features]),
                         np.concatenate([self.actions, actions]))

    @staticmethod
    def empty(features: int, actions: int) -> TuplePool:
        return TuplePool(np.zeros(0, int), np.zeros(0, int), np.zeros((0, features)), np.zeros((0, actions)))


def save_skill(skill: LearnedSkill, path: str | Path) -> Path:
    """Write ``skill`` (atomically: a crash mid-write leaves the previous file whole)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ref = skill.reference
    arrays = {"targets": ref.targets, "bounds": ref.bounds, "start_state": ref.start_state,
              "gain": np.array([p.gain for p in skill.policies]), "bias": np.array([p.bias for p in skill.policies]),
              "variance": np.array([p.variance for p in skill.policies])}
    for name, coords in ref.joint_targets.items():
        arrays[f"joint/{name}"] = coords
    for f in _SUMMARY_FIELDS:
        arrays[f"end/{f}"] = np.array([getattr(e, f) for e in ref.ends])
    if skill.best is not None:
        arrays |= {f"best/{f}": np.array([getattr(p, f) for p in skill.best]) for f in ("gain", "bias", "variance")}
    if skill.pool is not None:
        arrays |= {f"pool/{f.name}": getattr(skill.pool, f.name) for f in fields(TuplePool)}
    header = {"format": FORMAT, "version": VERSION, "name": ref.name, "joints": list(skill.joints),
              "strike_feet": list(ref.strike_feet), "ground_bodies": [list(g) for g in ref.ground_bodies],
              "cyclic": ref.cyclic, "gains": ref.gains,
              "iteration": skill.iteration, "curve": list(skill.curve), "settings": skill.settings,
              "best_iteration": skill.best_iteration}
    arrays["header"] = np.array(json.dumps(header))
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as out:
        np.savez_compressed(out, **arrays)
    partial.replace(path)
    return path


def load_skill(path: str | Path) -> LearnedSkill:
    """Read a skill file, or a one-line usage error naming what is wrong with it."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"learned skill file {str(path)!r} does not exist")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        header = json.loads(str(arrays.pop("header")))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
        raise UsageError(f"{path}: not a readable learned skill file ({exc.__class__.__name__})") from None
    if header.get("format") != FORMAT:
        raise UsageError(f"{path}: not a learned skill file (format {header.get('format')!r})")
    if header.get("version") != VERSION:
        raise UsageError(f"{path}: skill file version {header.get('version')!r}; this strider reads version "
                         f"{VERSION}: learn it again with 'strider graph learn'")
    try:
        joint_targets = {k[len("joint/"):]: v for k, v in arrays.items() if k.startswith("joint/")}
        count = len(arrays["bounds"]) - 1
        ends = tuple(Summary(**{f: _scalar(arrays[f"end/{f}"][k]) for f in _SUMMARY_FIELDS}) for k in range(count))
        strike_feet = tuple(header.get("strike_feet", ()))   # absent in files written before phase reset
        # absent in files written before one-pass clips: cyclic, and nothing but the feet on the ground
        ground_bodies = tuple(tuple(g) for g in header.get("ground_bodies", ()))
        gains = header.get("gains", "a")   # absent in files written before gain sets: the source's set (a)
        if gains not in GAIN_SETS:
            raise UsageError(f"{path}: the skill file's gain set {gains!r} is none of {', '.join(GAIN_SETS)}")
        reference = Reference(header["name"], arrays["targets"], joint_targets, arrays["bounds"],
                              arrays["start_state"], ends, strike_feet, ground_bodies, bool(header.get("cyclic", True)),
                              gains)
        policies = tuple(LinearGaussian(g, b, v) for g, b, v in zip(arrays["gain"], arrays["bias"],
                                                                      arrays["variance"]))
        pool = TuplePool(**{f.name: arrays[f"pool/{f.name}"] for f in fields(TuplePool)}) \
            if "pool/iterations" in arrays else None
        best = tuple(LinearGaussian(g, b, v) for g, b, v in zip(arrays["best/gain"], arrays["best/bias"],
                                                                  arrays["best/variance"])) \
            if "best/gain" in arrays else None
    except (KeyError, TypeError, IndexError) as exc:
        raise UsageError(f"{path}: learned skill file is incomplete ({exc})") from None
    for label, group in (("", policies), ("best ", best or policies)):
        if len(group) != count or not all(np.isfinite(p.gain).all() and np.isfinite(p.bias).all() for p in group):
            raise UsageError(f"{path}: learned skill file has {len(group)} {label}policies for {count} fragments, "
                             "or non-finite values")
    if reference.strike_feet and (len(reference.strike_feet) != count
                                  or not set(reference.strike_feet) <= {"", *FOOT_BODIES}):
        raise UsageError(f"{path}: the skill file's strike feet {list(reference.strike_feet)} do not name a foot "
                         f"({', '.join(FOOT_BODIES)}) or nothing for each of its {count} fragments")
    known = set(BALL_JOINTS + HINGE_JOINTS) | {"root"}
    if reference.ground_bodies and (len(reference.ground_bodies) != count
                                    or not all(set(g) <= known for g in reference.ground_bodies)):
        raise UsageError(f"{path}: the skill file's resting bodies do not name bodies of the deepmimic character "
                         f"for each of its {count} fragments")
    joints = tuple(header["joints"])
    unknown = [j for j in joints if j not in BALL_JOINTS + HINGE_JOINTS or j not in joint_targets]
    width = sum(3 if j in BALL_JOINTS else 1 for j in joints)
    if unknown or any(p.bias.shape != (width,) for p in policies + (best or ())):
        raise UsageError(f"{path}: the policies' joints {', '.join(joints)} do not fit the deepmimic character or "
                         f"the policies' {policies[0].bias.size if policies else 0} actions")
    best_iteration = header.get("best_iteration")
    if best is not None and not (isinstance(best_iteration, int)
                                 and any(c.get("iteration") == best_iteration for c in header["curve"])):
        raise UsageError(f"{path}: learned skill file keeps best policies but names no iteration of its curve for "
                         f"them (best_iteration {best_iteration!r})")
    if pool is not None and not _pool_fits(pool, count, width):
        raise UsageError(f"{path}: the learning pool's tuples do not fit its {count} fragments, the 18 features "
                         f"and {width} actions")
    return LearnedSkill(reference, joints, policies, int(header["iteration"]),
                        tuple(header["curve"]), dict(header.get("settings", {})), pool, best, best_iteration)


def _pool_fits(pool: TuplePool, fragments: int, actions: int) -> bool:
    n = len(pool.iterations)
    return (pool.fragments.shape == (n,) and pool.features.shape == (n, FEATURES) and pool.actions.shape == (n, actions)
            and bool(np.all((pool.fragments >= 0) & (pool.fragments < fragments))))


def _scalar(value: np.ndarray):
    return float(value) if np.ndim(value) == 0 else value
