"""How often a match's champion played from its opening book: the moves whose comment is ``champion book move``.

    python bench/champion_book_moves.py MATCH_DIR [AGENT]

Reads each game's ``game.json`` under ``MATCH_DIR/games`` and prints, for the agent named AGENT (default: every
agent), the games with a book move, the book moves, and how many came at each move after the opening (move 0 is
the first move after it, by the side to move).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    agent = sys.argv[2] if len(sys.argv) == 3 else None
    games = sorted(Path(sys.argv[1], "games").glob("*/game.json"))
    by_move: Counter[int] = Counter()
    with_book = 0
    for path in games:
        record = json.loads(path.read_text())
        colours = {"W": record["white"], "B": record["black"]}
        found = False
        for index, move in enumerate(record["moves"]):
            mover = colours.get(move["move"].strip("( ")[:1])
            if (agent is None or mover == agent) and any(c.startswith("champion book move") for c in move["comments"]):
                by_move[index] += 1
                found = True
        with_book += found
    print(f"{len(games)} games, {with_book} with a book move, {sum(by_move.values())} book moves; "
          f"by move after the opening: {dict(sorted(by_move.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
