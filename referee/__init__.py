"""The referee: one game between two agents that talk through files.

>>> from othello_arena.referee import AgentSpec, GameConfig, play_game
>>> record = play_game(AgentSpec.parse("random"), AgentSpec.parse("bob=./bob"),   # doctest: +SKIP
...                    GameConfig(time_per_move=5), "games/1")
>>> record.result.summary()                                                        # doctest: +SKIP
'White wins 40-24 (normal)'

See ``protocol/PROTOCOL.md`` for the file protocol the agents follow.
"""

from .config import GRACE_SECONDS, GameConfig
from .game import GameEvent, check_opening, play_game
from .pair import draw_openings, nth_opening, play_pair
from .spec import AgentSpec, check_file_name, distinct_labels, draw_colours

__all__ = [
    "GRACE_SECONDS",
    "AgentSpec",
    "GameConfig",
    "GameEvent",
    "check_file_name",
    "check_opening",
    "distinct_labels",
    "draw_colours",
    "draw_openings",
    "nth_opening",
    "play_game",
    "play_pair",
]
