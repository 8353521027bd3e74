"""Terrain courses as data: one description builds the geometry and answers ``height`` and ``sdf``."""

from strider.courses.course import Block, Course, Crate, HeightField, Region
from strider.courses.library import available_courses, load_course

__all__ = ["Block", "Course", "Crate", "HeightField", "Region", "available_courses", "load_course"]
