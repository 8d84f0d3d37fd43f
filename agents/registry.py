"""The built-in agents, by name.

Each entry names a zero-argument factory as ``"module:attribute"`` relative
to this package, imported only when asked for: ``othello agent random`` must
not pay for (or depend on) the compiled champion and numba.
"""

from __future__ import annotations

import importlib

from .runtime import Strategy

# name -> "module:factory"; the factory takes no argument and returns a Strategy.
BUILTINS: dict[str, str] = {
    "random": "players:random_strategy",
    "beginner": "players:beginner_strategy",
    "greedy": "players:greedy",
    "weighted": "players:weighted",
    "minimax": "players:minimax_player",
    "alphabeta": "players:alphabeta_player",
    "paper-easy": "players:paper_easy",
    "paper-normal": "players:paper_normal",
    "paper-hard": "players:paper_hard",
    "champion": "champion:strategy",  # compiled engine: numba loads only when asked for
}


def names() -> list[str]:
    """The names of the built-in agents, in the order of the table."""
    return list(BUILTINS)


def get_strategy(name: str) -> Strategy:
    """A fresh strategy for the built-in agent ``name``.

    Raises :class:`KeyError` (message listing the known names) if there is none.
    """
    target = BUILTINS.get(name)
    if target is None:
        raise UnknownAgentError(f"no built-in agent {name!r}; known agents: {', '.join(names())}")
    module_name, attribute = target.split(":")
    module = importlib.import_module(f"{__package__}.{module_name}")
    factory = getattr(module, attribute)
    return factory()


class UnknownAgentError(KeyError, ValueError):
    """No built-in agent by that name (both a KeyError and a ValueError)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])
