"""The simulation layer: the only code in strider that touches ``mujoco``."""

from strider.sim.character import Character, JointIndex
from strider.sim.scene import DEFAULT_TIMESTEP, Box, CharacterPlacement, Grip, Prop, Scene, Terrain
from strider.sim.world import State, TimedForce, World, engine_version

__all__ = [
           "DEFAULT_TIMESTEP",
           "Box",
           "Character",
           "CharacterPlacement",
           "Grip",
           "JointIndex",
           "Prop",
           "Scene",
           "State",
           "Terrain",
           "TimedForce",
           "World",
           "engine_version",
]
