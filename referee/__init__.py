"""The referee: one game between two agents that talk through files.

>>> from othello_arena.referee import AgentSpec, GameConfig, play_game
>>> record = play_game(AgentSpec.builtin("random"), AgentSpec.parse("bob=./bob"),   # doctest: +SKIP
...                    GameConfig(time_per_move=5), "games/1")
>>> record.result.summary()                                                          # doctest: +SKIP
'1-0 White wins 40-24'

See ``protocol/PROTOCOL.md`` for the file protocol the agents follow.
"""

from .clock import GRACE_SECONDS, Clock, TimeControl
from .config import GameConfig
from .game import GameEvent, check_opening, check_sizes, play_game
from .game_pair import draw_openings, nth_opening, play_pair
from .seat import AgentSeat
from .spec import AgentSpec, BuiltinAgents, check_file_name, distinct_labels, draw_colours

__all__ = [
    "GRACE_SECONDS",
    "AgentSeat",
    "AgentSpec",
    "BuiltinAgents",
    "Clock",
    "GameConfig",
    "GameEvent",
    "TimeControl",
    "check_file_name",
    "check_opening",
    "check_sizes",
    "distinct_labels",
    "draw_colours",
    "draw_openings",
    "nth_opening",
    "play_game",
    "play_pair",
]
