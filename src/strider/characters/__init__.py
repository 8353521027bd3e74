"""Declarative character specs (YAML) and their derivations (scaling, segment edits)."""

from strider.characters.library import available_characters, load_character
from strider.characters.spec import CharacterSpec, Gains, JointSpec, BodySpec, Roles

__all__ = ["load_character", "available_characters", "CharacterSpec", "Gains", "JointSpec", "BodySpec", "Roles"]
