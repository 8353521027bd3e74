"""A learned skill as one versioned file: its fragments (refined open-loop targets, reference ends, start
state), the linear feedback policy of every fragment, and how it was learned (the learning curve).

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
from strider.methods.graphs.reference import Reference
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

    @property
    def name(self) -> str:
        return self.reference.name


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
    header = {"format": FORMAT, "version": VERSION, "name": ref.name, "joints": list(skill.joints),
              "iteration": skill.iteration, "curve": list(skill.curve), "settings": skill.settings}
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
        reference = Reference(header["name"], arrays["targets"], joint_targets, arrays["bounds"],
                              arrays["start_state"], ends)
        policies = tuple(LinearGaussian(g, b, v) for g, b, v in zip(arrays["gain"], arrays["bias"],
                                                                      arrays["variance"]))
    except (KeyError, TypeError, IndexError) as exc:
        raise UsageError(f"{path}: learned skill file is incomplete ({exc})") from None
    if len(policies) != count or not all(np.isfinite(p.gain).all() and np.isfinite(p.bias).all() for p in policies):
        raise UsageError(f"{path}: learned skill file has {len(policies)} policies for {count} fragments, or "
                         "non-finite values")
    joints = tuple(header["joints"])
    unknown = [j for j in joints if j not in BALL_JOINTS + HINGE_JOINTS or j not in joint_targets]
    width = sum(3 if j in BALL_JOINTS else 1 for j in joints)
    if unknown or any(p.bias.shape != (width,) for p in policies):
        raise UsageError(f"{path}: the policies' joints {', '.join(joints)} do not fit the deepmimic character or "
                         f"the policies' {policies[0].bias.size if policies else 0} actions")
    return LearnedSkill(reference, joints, policies, int(header["iteration"]),
                        tuple(header["curve"]), dict(header.get("settings", {})))


def _scalar(value: np.ndarray):
    return float(value) if np.ndim(value) == 0 else value
