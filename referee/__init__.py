"""The referee: one game between two agents that talk through files.

>>> from othello_arena.referee import AgentSpec, GameConfig, play_game
>>> record = play_game(AgentSpec.builtin("random"), AgentSpec.parse("bob=./bob"),   # doctest: +SKIP
...                    GameConfig(time_per_move=5), "games/1")
>>> record.result.summary()                                                          # doctest: +SKIP
'1-0 White wins 40-24'

See ``protocol/PROTOCOL.md`` for the file protocol the agents follow.

The names below load their module when first used (PEP 562): importing
``referee.spec`` alone (what the agents' registry and every ``othello``
command need) must not load the game loop, the sandbox, watchdog and psutil.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for the type checker (``X as X``: exported) and the readers of this file
    from .clock import GRACE_SECONDS as GRACE_SECONDS, Clock as Clock, TimeControl as TimeControl
    from .config import GameConfig as GameConfig
    from .game import GameEvent as GameEvent, play_game as play_game
    from .game import check_opening as check_opening, check_sizes as check_sizes
    from .game_pair import draw_openings as draw_openings, nth_opening as nth_opening, play_pair as play_pair
    from .seat import AgentSeat as AgentSeat
    from .spec import AgentSpec as AgentSpec, BuiltinAgents as BuiltinAgents, check_file_name as check_file_name
    from .spec import distinct_labels as distinct_labels, draw_colours as draw_colours

# name -> the module (in this package) that defines it
_EXPORTS = {
    "GRACE_SECONDS": "clock",
    "Clock": "clock",
    "TimeControl": "clock",
    "GameConfig": "config",
    "GameEvent": "game",
    "check_opening": "game",
    "check_sizes": "game",
    "play_game": "game",
    "draw_openings": "game_pair",
    "nth_opening": "game_pair",
    "play_pair": "game_pair",
    "AgentSeat": "seat",
    "AgentSpec": "spec",
    "BuiltinAgents": "spec",
    "check_file_name": "spec",
    "distinct_labels": "spec",
    "draw_colours": "spec",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once found, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
