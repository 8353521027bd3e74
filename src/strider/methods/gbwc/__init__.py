"""Generalized Biped Walking Control (seed 000, Ch. 5): the walking controller and its style data."""

from strider.methods.gbwc.controller import GBWC
from strider.methods.gbwc.params import GBWCParams, Style, available_styles, load_style

__all__ = ["GBWC", "GBWCParams", "Style", "available_styles", "load_style"]
