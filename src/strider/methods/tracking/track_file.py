"""A rectified motion as a data file (``.track``): NumPy arrays plus a JSON header, versioned.

The file holds what the tracking controller needs and what a reader needs to judge it: the character and its
coordinate names, the time step, the motion (q, qd), the contact modes and stance leg per frame, the window kind
and its forward shift, the slope of the ground it walks on, the input the rectifier started from, and the solver's report.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from strider.datafile import load_array_file, save_array_file
from strider.errors import UsageError
from strider.methods.tracking.rectify import SLOPE_EDIT, Rectified
from strider.optimize.nlp import NlpResult

FORMAT = "strider-track"
VERSION = 1
SHIPPED = Path(__file__).parent / "data"
SUFFIX = ".track"


def shipped_tracks() -> list[str]:
    """Names of the rectified motions that ship with strider (``strider track walk NAME``)."""
    return sorted(p.stem for p in SHIPPED.glob(f"*{SUFFIX}"))


def resolve_track(name: str | Path) -> Path:
    """A track file's path: ``name`` itself if it is a path to one, else the shipped motion of that name."""
    path = Path(name)
    if path.suffix == SUFFIX or path.exists():
        return path
    shipped = SHIPPED / f"{name}{SUFFIX}"
    if shipped.exists():
        return shipped
    raise UsageError(f"no track {str(name)!r}: give a .track file (from 'strider track rectify') or a shipped "
                     f"motion ({', '.join(shipped_tracks()) or 'none'})")


def save_track(rectified: Rectified, path: str | Path, character: str) -> Path:
    path = Path(path)
    s = rectified.solution
    header = {"format": FORMAT, "version": VERSION, "name": rectified.name, "character": character,
              "coords": list(rectified.coords), "dt": rectified.dt, "window": rectified.window,
              "shift": rectified.shift, "ground_slope": rectified.ground_slope, "stance": [str(v) for v in rectified.stance],
              "solution": {"status": s.status, "success": s.success, "elastic": s.elastic,
                           "iterations": s.iterations, "seconds": s.seconds, "objective": s.objective,
                           "worst_constraint": s.worst_constraint, "worst_violation": s.worst_violation}}
    save_array_file(path, header, {"q": rectified.q, "qd": rectified.qd, "source_q": rectified.source_q,
                                   **{f"modes_{side}": m for side, m in rectified.modes.items()}})
    return path


def load_track(path: str | Path) -> tuple[Rectified, str]:
    """The rectified motion in a file and the name of its character."""
    path = Path(path)
    header, arrays = load_array_file(path, FORMAT, VERSION, "track file")
    try:
        return _rectified(header, arrays, path), header["character"]
    except KeyError as exc:
        raise UsageError(f"{path}: the track file has no {exc.args[0]!r}") from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise UsageError(f"{path}: malformed track header ({exc})") from None


def _rectified(header: dict, arrays: dict[str, np.ndarray], path: Path) -> Rectified:
    n = len(header["coords"])
    q, qd = arrays.get("q"), arrays.get("qd")
    if q is None or qd is None or q.ndim != 2 or q.shape != qd.shape or q.shape[1] != n:
        raise UsageError(f"{path}: q and qd must both be (frames, {n}) arrays")
    if not (np.isfinite(q).all() and np.isfinite(qd).all()):
        raise UsageError(f"{path}: the motion holds NaN or infinite values")
    sol = header["solution"]
    solution = NlpResult(np.empty(0), sol["objective"], sol["status"], sol["success"], sol["elastic"],
                         sol["iterations"], sol["seconds"], sol["worst_constraint"], sol["worst_violation"])
    modes = {side: arrays[f"modes_{side}"] for side in ("left", "right")}
    slope = float(header.get("ground_slope", 0.0))     # files from before the slope edit walk on level ground
    if not SLOPE_EDIT[0] <= slope <= SLOPE_EDIT[1]:
        raise UsageError(f"{path}: ground_slope must be between {SLOPE_EDIT[0]:g} and {SLOPE_EDIT[1]:g} degrees, "
                         f"got {slope}")
    return Rectified(header["name"], tuple(header["coords"]), float(header["dt"]), q, qd, modes,
                     np.array(header["stance"]), header["window"], float(header["shift"]), arrays["source_q"],
                     solution, slope)
