"""SIMBICON, the simple biped locomotion controller (seed 000, Sec. 2.4), with gaits as YAML data."""
