"""SLIP preview planning with a QP whole-body controller (Mordatch et al. 2010; docs/slip.md)."""
