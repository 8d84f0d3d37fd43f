"""One table row per match directory of ``othello match``: the champion's results against a peer.

    python bench/peers/summarize.py DIR [DIR ...]

From the games' ``game.json``: W-D-L for the first agent (the champion), its score with a 95 %
interval (Wilson's, over games: an opening's two games are not independent, so it is a little
narrow; ``othello match`` prints Elo with an interval over pairs), the disc difference, each side's
mean and slowest move and any game not ended by the rules (time, crash).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path


def wilson(score: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    centre = (score + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def summarize(directory: Path, hero: str = "champion") -> str:
    wins = draws = losses = discs = 0
    hero_times: list[float] = []
    peer_times: list[float] = []
    odd = []
    for path in sorted(directory.glob("games/*/game.json")):
        game = json.loads(path.read_text())
        colour = "W" if game["white"] == hero else "B"
        result = game["result"]
        mine, theirs = result["discs"][colour], result["discs"]["B" if colour == "W" else "W"]
        discs += mine - theirs
        if result["winner"] is None:
            draws += 1
        elif result["winner"] == colour:
            wins += 1
        else:
            losses += 1
        if result["reason"] != "normal":
            odd.append(f"{path.parent.name}: {result['reason']}")
        # the first move of each side includes the start-up allowance (PROTOCOL.md section 4)
        moves = game["moves"]
        hero_moves = [m["seconds"] for m in moves if m["move"][1] == colour]
        peer_moves = [m["seconds"] for m in moves if m["move"][1] != colour]
        hero_times += hero_moves[1:]
        peer_times += peer_moves[1:]
    n = wins + draws + losses
    score = (wins + 0.5 * draws) / n if n else 0.0
    low, high = wilson(score, n)
    peer = directory.name
    return (f"| {peer} | {n} | {wins}-{draws}-{losses} | {100 * score:.1f} % ({100 * low:.0f}-{100 * high:.0f} %) | "
            f"{discs:+d} | {sum(hero_times) / len(hero_times):.2f} / {max(hero_times):.2f} | "
            f"{sum(peer_times) / len(peer_times):.2f} / {max(peer_times):.2f} | {'; '.join(odd) or 'none'} |")


def main() -> None:
    print("| peer | games | champion W-D-L | score (95 %, Wilson) | discs | champion s a move: mean / max "
          "| peer s a move: mean / max | games not ended by the rules |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in sys.argv[1:]:
        print(summarize(Path(name)))


if __name__ == "__main__":
    main()
