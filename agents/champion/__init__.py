"""The champion: a compiled alpha-beta engine.

Modules: :mod:`.bitboard` (compiled move generation), :mod:`.search`
(evaluation, NegaScout, endgame solver), :mod:`.engine` (iterative
deepening under a clock), :mod:`.patterns` (the learned evaluation's
features and weights), :mod:`.agent` (the strategy and its time manager),
:mod:`.training` (``othello train``), :mod:`.cli` (``othello analyze``).
Importing this package is cheap: numba loads only when an engine is made.
"""


from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runtime import Strategy


def strategy() -> "Strategy":
    """The registry's factory: a fresh champion strategy."""
    from .agent import champion_strategy

    return champion_strategy()
