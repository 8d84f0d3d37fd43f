"""The champion as a file-protocol agent with its engine loaded before it watches its files.

    python bench/champion_preloaded.py NAME SECONDS_PER_MOVE

For measuring one champion against another on a loaded machine.  `othello agent champion` loads its
engine in the background and plays its fallback (seed 002's player) until the engine is ready: with a
load average of 15-20 the load took 5-8 s of wall time, half the moves of a game at 0.5 s a move, so a
match measured the fallback more than the engines (bench/RESULTS.md, issue 39).  Each side of such a
match runs this instead, from its own copy (``env PYTHONPATH=COPY OTHELLO_CACHE_DIR=COPY/cache python
bench/champion_preloaded.py '{name}' 0.5``), and the match's ``[referee] startup_time`` covers the load.
"""

from __future__ import annotations

import sys

from othello_arena.agents.champion.agent import ChampionStrategy
from othello_arena.agents.runtime import run_agent


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    return run_agent(ChampionStrategy(background=False), sys.argv[1], ".", float(sys.argv[2]))


if __name__ == "__main__":
    sys.exit(main())
