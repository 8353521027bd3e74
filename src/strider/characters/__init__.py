"""Declarative character specs (YAML) and their derivations (scaling, segment edits)."""

from strider.characters.library import available_characters, load_character
from strider.characters.spec import BodySpec, CharacterSpec, Gains, JointSpec, Roles

__all__ = ["BodySpec", "CharacterSpec", "Gains", "JointSpec", "Roles", "available_characters", "load_character"]
