"""Finding the shared motion-capture folder that tests and examples read (never copied into the repository)."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "STRIDER_MOCAP"
SHARED_RELATIVE = Path("shared") / "mocap"


def mocap_dir(start: str | Path | None = None) -> Path | None:
    """$STRIDER_MOCAP if set; else the first ``shared/mocap`` folder above ``start`` (default: this package's
    checkout). None when neither exists."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env) if Path(env).is_dir() else None
    here = Path(start) if start is not None else Path(__file__).resolve()
    for folder in [here, *here.parents]:
        candidate = folder / SHARED_RELATIVE
        if candidate.is_dir():
            return candidate
    return None
