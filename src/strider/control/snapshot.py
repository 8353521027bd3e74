"""A controller's own state as bytes, for episode snapshots (``strider.runner.EpisodeSnapshot``).

A controller keeps its phase, timers, filters and plans in plain attributes, so its state is its attribute
dictionary. The world and character it drives are not part of that state: they are pickled as references
and bound again, on restore, to the world and character of the controller being restored (which may live
in another process, built from the same scenario). Controllers nested inside another (a skill's stepping
delegate) are handled the same way, so every controller gets snapshots without writing any code.
"""

from __future__ import annotations

import io
import pickle

from strider.errors import UsageError
from strider.sim import Character, World


def controller_kind(controller: object) -> str:
    """The controller's class, fully named: a snapshot restores only into the same kind."""
    kind = type(controller)
    return f"{kind.__module__}.{kind.__qualname__}"


class _StatePickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, World):
            return ("world",)
        if isinstance(obj, Character):
            return ("character", obj.name)
        return None


class _StateUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, world: World):
        super().__init__(io.BytesIO(data))
        self._world = world

    def persistent_load(self, pid):
        if pid == ("world",):
            return self._world
        if pid[0] == "character":
            return self._world.character(pid[1])
        raise pickle.UnpicklingError(f"unknown reference {pid!r}")


def controller_state(controller: object) -> bytes:
    """Everything the controller keeps, less the world and character it is bound to."""
    buffer = io.BytesIO()
    _StatePickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(vars(controller))
    return buffer.getvalue()


def restore_controller_state(controller: object, state: bytes) -> None:
    """Put ``state`` (from :func:`controller_state` of a controller of the same kind) into ``controller``,
    keeping its own world and character."""
    world = getattr(controller, "world", None)
    if world is None:
        raise UsageError(f"{controller_kind(controller)} has not been reset on a world: nothing to restore into")
    restored = _StateUnpickler(state, world).load()
    vars(controller).clear()
    vars(controller).update(restored)
