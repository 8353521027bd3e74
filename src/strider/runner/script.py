"""Command plans: a timed list of what the character should do, read from YAML.

A plan lets one run change its command while it runs (stand, then walk, turn,
stop) without writing Python. It is data, like characters and styles, so it is
validated on load and a bad file gives one message naming the file, the field
and the problem. Example (``examples/plan.yaml``)::

    description: stand, walk off, turn left, stop
    commands:
      - {t: 0, do: stand}
      - {t: 2, do: walk, speed: 0.8}
      - {t: 6, do: turn, heading_deg: 90}
      - {t: 10, do: stop}

Actions and the :class:`~strider.control.controller.LocomotionCommand` fields they set:

``walk``
    ``walking = True``; optionally ``speed`` (m/s, negative walks backwards),
    ``lateral_speed`` (m/s, to the left), ``period`` (s per step),
    ``step_width`` (m), and a turn (as for ``turn``). Fields not given keep
    their current values.
``turn``
    exactly one of ``heading_deg`` (target heading, degrees), ``heading``
    (radians) or ``turn_rate`` (rad/s, turns continuously). A target heading
    stops any continuous turn.
``stand`` / ``stop``
    ``walking = False`` and ``turn_rate = 0``: finish the current step and
    stand still. A later ``walk`` without ``speed`` resumes the old speed.
"""

from __future__ import annotations

import math
from pathlib import Path

from strider.datafile import Fields, load_yaml
from strider.errors import ConfigError
from strider.runner.scenario import CommandChange

ACTIONS = ("walk", "turn", "stand", "stop")
TURN_FIELDS = ("heading_deg", "heading", "turn_rate")
GAIT_FIELDS = ("speed", "lateral_speed", "period", "step_width")
_ALLOWED_FIELDS = {
    "walk": {"t", "do", *GAIT_FIELDS, *TURN_FIELDS},
    "turn": {"t", "do", *TURN_FIELDS},
    "stand": {"t", "do"},
    "stop": {"t", "do"},
}
_TOP_FIELDS = {"name", "description", "commands"}


def load_script(path: str | Path) -> tuple[CommandChange, ...]:
    """Read and validate a plan file into command changes, ordered by time."""
    source = str(path)
    try:
        data = load_yaml(path)
    except ConfigError as exc:
        if exc.field == "" and exc.problem.startswith("expected a mapping"):
            # The most likely slip: a bare list of commands without the ``commands:`` key.
            raise ConfigError(source, "", "expected a mapping with a 'commands:' list at the top level "
                                          "(see examples/plan.yaml)") from None
        raise
    return parse_script(data, source)


def parse_script(data: dict, source: str) -> tuple[CommandChange, ...]:
    """Validate an already-read plan mapping; ``source`` names it in error messages."""
    top = Fields(data, source)
    top.reject_unknown(_TOP_FIELDS)
    top.string("name", None)
    top.string("description", None)
    entries = top.items("commands")
    if not entries:
        raise top.error("commands", "needs at least one command")
    changes = []
    previous_t = 0.0
    for entry in entries:
        change = _parse_entry(entry)
        if change.t < previous_t:
            raise entry.error("t", f"times must not decrease: {change.t:g} s comes after {previous_t:g} s")
        previous_t = change.t
        changes.append(change)
    return tuple(changes)


def _parse_entry(f: Fields) -> CommandChange:
    t = f.number("t", min=0.0)
    action = f.string("do", choices=ACTIONS)
    f.reject_unknown(_ALLOWED_FIELDS[action])
    changes: dict = {}
    if action in ("stand", "stop"):
        changes.update(walking=False, turn_rate=0.0)
    elif action == "walk":
        changes["walking"] = True
        if f.has("speed"):
            changes["speed"] = f.number("speed")
        if f.has("lateral_speed"):
            changes["lateral_speed"] = f.number("lateral_speed")
        if f.has("period"):
            changes["period"] = f.number("period", positive=True)
        if f.has("step_width"):
            changes["step_width"] = f.number("step_width", min=0.0)
        changes.update(_turn(f, required=False))
    else:
        changes.update(_turn(f, required=True))
    return CommandChange(t, changes)


def _turn(f: Fields, required: bool) -> dict:
    """The heading or turn-rate change of one entry: at most one way of turning (exactly one if ``required``)."""
    given = [key for key in TURN_FIELDS if f.has(key)]
    if len(given) > 1:
        raise f.error(given[1], f"give only one of {', '.join(TURN_FIELDS)}")
    if not given:
        if required:
            raise f.error("heading_deg", f"a turn needs one of {', '.join(TURN_FIELDS)}")
        return {}
    key = given[0]
    if key == "turn_rate":
        return {"turn_rate": f.number("turn_rate")}
    heading = f.number(key)
    # A target heading replaces any continuous turn; otherwise the turn would carry it away again.
    return {"heading": math.radians(heading) if key == "heading_deg" else heading, "turn_rate": 0.0}
