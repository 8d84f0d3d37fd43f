"""The champion: a compiled alpha-beta engine.

Modules, from the bottom up (each imports only those before it):
:mod:`.cache_paths` (where the compiled code is kept), :mod:`.compiled_cache`
(numba's cache there), :mod:`.bitboard` (compiled move generation),
:mod:`.endgame` (the solver's last empties), :mod:`.patterns` (the learned
evaluation's features and weights), :mod:`.evaluation` (the compiled
evaluation), :mod:`.search` (NegaScout, endgame solver), :mod:`.engine`
(iterative deepening under a clock), :mod:`.book` (the opening book's file
and its lookup), :mod:`.agent` (the strategy and its time manager),
:mod:`.prepare` (compiling before a game), :mod:`.training` (``othello
train``), :mod:`.book_building` (the book made by the engine), :mod:`.cli`
(``othello analyze``).
Importing this package is cheap: numba loads only when an engine is made.
"""


from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runtime import Strategy


def strategy() -> "Strategy":
    """The registry's factory: a fresh champion strategy."""
    from .agent import champion_strategy

    return champion_strategy()
