"""``othello match``: A against B in game pairs, a fixed number or until an SPRT decides, and its statistics."""
