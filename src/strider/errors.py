"""Errors that strider reports to users as one clear line.

Anything raised as a :class:`StriderError` is a problem with the user's input
(a file, a flag, a parameter). The CLI prints its message and exits with
status 2; it never shows a traceback for these.
"""

from __future__ import annotations

import math
from typing import Any


class StriderError(Exception):
    """A user-facing error: the message names what is wrong."""


class ConfigError(StriderError):
    """A data file (character, style, script, protocol) is malformed."""

    def __init__(self, source: str, field: str, problem: str):
        self.source = source
        self.field = field
        self.problem = problem
        where = f"{source}: {field}" if field else source
        super().__init__(f"{where}: {problem}")


class UsageError(StriderError):
    """A command-line value or API argument is impossible."""


class ControlDiverged(StriderError):
    """A controller's plan, targets or torques stopped being finite: the episode stops there. The runner that
    caught it sets ``state`` (the physics state, MuJoCo's full-physics layout) and ``time`` (s), so the moment
    can be saved and inspected."""

    state: Any = None
    time: float | None = None


def require_finite(name: str, value: Any, unit: str, positive: bool = False) -> None:
    """Refuse a flag or argument ``name`` that is not a finite number (or not > 0 when ``positive``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UsageError(f"{name} must be a finite number ({unit}), got {value!r}")
    if positive and value <= 0:
        raise UsageError(f"{name} must be > 0 {unit}, got {value:g}")
