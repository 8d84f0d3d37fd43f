"""A Python package agent for the tests of ``{home}``: ``python -m firstmove NAME DATAFILE``."""
