"""Where skills come from: the DeepMimic clips a skill is learned from, and the learned skills that ship."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from strider.errors import UsageError

# The skill files' reader and the mocap folder's lookup are imported where they are used: the command line lists
# the shipped skills while it builds its parser, and importing them costs some 0.7 s.
if TYPE_CHECKING:
    from strider.methods.graphs.controller_file import LearnedSkill

SHIPPED = Path(__file__).parent / "data"
SUFFIX = ".skill.npz"
CLIP_PREFIX = "humanoid3d_"


def skill_file_name(name: str) -> str:
    return name + SUFFIX


def shipped_skills() -> list[str]:
    return sorted(p.name[:-len(SUFFIX)] for p in SHIPPED.glob("*" + SUFFIX))


def clip_path(name_or_path: str) -> Path:
    """A DeepMimic clip by file path, or by name in the shared motion-capture folder."""
    from strider.motion.mocap import mocap_dir

    path = Path(name_or_path)
    if path.suffix or path.exists():
        return path
    folder = mocap_dir()
    if folder is None:
        raise UsageError(f"clip {name_or_path!r}: no motion-capture folder found (set $STRIDER_MOCAP to the folder "
                         "holding deepmimic/) and no such file")
    candidate = folder / "deepmimic" / f"{CLIP_PREFIX}{name_or_path}.txt"
    if not candidate.is_file():
        names = sorted(p.stem[len(CLIP_PREFIX):] for p in (folder / "deepmimic").glob(f"{CLIP_PREFIX}*.txt")
                       if not p.stem.endswith("character"))
        raise UsageError(f"no DeepMimic clip named {name_or_path!r} in {folder / 'deepmimic'}; there are: "
                         f"{', '.join(names)}")
    return candidate


def load_named_skill(name_or_path: str) -> LearnedSkill:
    """A shipped skill by name, or a skill file by path."""
    from strider.methods.graphs.controller_file import load_skill

    path = Path(name_or_path)
    if path.suffix or path.exists():
        return load_skill(path)
    shipped = SHIPPED / skill_file_name(name_or_path)
    if not shipped.is_file():
        have = shipped_skills()
        raise UsageError(f"no learned skill named {name_or_path!r} ships with strider; shipped: "
                         f"{', '.join(have) or 'none'} (or give a .skill.npz file)")
    return load_skill(shipped)
