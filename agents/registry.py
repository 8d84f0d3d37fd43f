"""The built-in agents, by name.

Each entry names a zero-argument factory as ``"module:attribute"`` relative
to this package, imported only when asked for: ``othello agent random`` must
not pay for (or depend on) the compiled champion and numba.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Callable, Iterable

from ..protocol import BOARD_SIZES, DEFAULT_SIZE
from ..referee.fingerprint import file_digest, folder_files, text_digest
from ..referee.spec import BuiltinAgents
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


# The board sizes each agent plays (PROTOCOL.md section 9).  Seed 002's players play all of seed 002's
# sizes, and so do the ones with no table of squares; PAIP's square weights (weighted, minimax, alphabeta)
# are 8x8, and the champion's compiled engine is 64-bit bitboards: 8x8 only.
SIZES: dict[str, tuple[int, ...]] = {
    name: BOARD_SIZES for name in ("random", "beginner", "greedy", "paper-easy", "paper-normal", "paper-hard")
}


def sizes_of(name: str) -> tuple[int, ...]:
    """The board sizes the built-in agent ``name`` plays: 8 alone unless :data:`SIZES` says more."""
    return SIZES.get(name, (DEFAULT_SIZE,))


# name -> "module:function"; the function takes a log callback, makes the agent
# ready to play (outside any clock, like a build) and returns whether it is.
PREPARE: dict[str, str] = {
    "champion": "champion.prepare:prepare",  # compiles the engine into the cache, once per install and machine
}


def names() -> list[str]:
    """The names of the built-in agents, in the order of the table."""
    return list(BUILTINS)


def builtin_agents() -> BuiltinAgents:
    """The built-in agents as the referee takes them: their names, :func:`prepare` and their board sizes."""
    return BuiltinAgents(tuple(BUILTINS), prepare, tuple((name, sizes_of(name)) for name in BUILTINS))


def get_strategy(name: str) -> Strategy:
    """A fresh strategy for the built-in agent ``name``.

    Raises :class:`KeyError` (message listing the known names) if there is none.
    """
    target = BUILTINS.get(name)
    if target is None:
        raise UnknownAgentError(f"no built-in agent {name!r}; known agents: {', '.join(names())}")
    module_name, attribute = target.split(":")
    module = importlib.import_module(f"{__package__}.{module_name}")
    factory: Callable[[], Strategy] = getattr(module, attribute)
    return factory()


def prepare(agent_names: Iterable[str], log: Callable[[str], None] = lambda line: None) -> bool:
    """Make the built-in agents among ``agent_names`` ready before any game's clock runs; return whether all are.

    Called by ``othello play``, ``othello check`` and the tournament runner
    before their games.  The champion compiles its engine into the
    compiled-code cache the first time (a progress line goes to ``log``),
    later calls return at once.  Names that need nothing, and names that
    are not built-in agents, are skipped.
    """
    ready = True
    for name in dict.fromkeys(agent_names):
        target = PREPARE.get(name)
        if target is None:
            continue
        module_name, attribute = target.split(":")
        module = importlib.import_module(f"{__package__}.{module_name}")
        ready = getattr(module, attribute)(log) and ready
    return ready


def version_of(name: str) -> str:
    """The built-in agent's version: the fingerprint of its own source (its module, or its package) and the runtime.

    The sources, not the package's version number: a change to the agent's
    code between two runs of a tournament is a new version even when nobody
    bumped a number; a change elsewhere in the package is not.
    """
    target = BUILTINS.get(name)
    if target is None:
        raise UnknownAgentError(f"no built-in agent {name!r}; known agents: {', '.join(names())}")
    here = Path(__file__).parent
    module = target.split(":")[0].split(".")[0]
    files = [("runtime.py", file_digest(here / "runtime.py"))]
    if (here / module).is_dir():
        files += [(f"{module}/{path}", digest) for path, digest in folder_files(here / module)
                  if path.endswith(".py") or path.startswith("data/")]  # not the __pycache__ of this machine
    else:
        files.append((f"{module}.py", file_digest(here / f"{module}.py")))
    text = json.dumps({"builtin": name, "files": sorted(files)}, separators=(",", ":"))
    return text_digest(text)


class UnknownAgentError(KeyError, ValueError):
    """No built-in agent by that name (both a KeyError and a ValueError)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])
