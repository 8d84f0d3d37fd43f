"""The champion: a compiled alpha-beta engine."""
