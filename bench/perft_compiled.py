"""Perft of the champion's compiled move generator (a pass is a move, a finished game a leaf).

    python bench/perft_compiled.py [--depth 11] [--repeat 3]

Prints first-start (import + compile or cache load) and the best time of
each depth; target: perft 11 (212,258,800 leaves) under 2 s.
"""

from __future__ import annotations

import argparse
import time

started = time.perf_counter()
from othello_arena.agents.champion import bitboard as bb  # noqa: E402
from othello_arena.protocol import Board  # noqa: E402

EXPECTED = {9: 3_005_288, 10: 24_571_284, 11: 212_258_800, 12: 1_939_886_636}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=11)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    P, O = bb.board_bits(Board())
    bb.perft(P, O, 1)
    print(f"start-up (import + compile or cache load): {time.perf_counter() - started:.2f} s")
    for depth in range(9, args.depth + 1):
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            leaves = bb.perft(P, O, depth)
            best = min(best, time.perf_counter() - t)
        check = "" if depth not in EXPECTED else (" ok" if leaves == EXPECTED[depth] else f" WRONG (expected {EXPECTED[depth]})")
        print(f"perft {depth}: {leaves:>13,} leaves in {best:.3f} s ({leaves / best / 1e6:.0f} M leaves/s){check}")


if __name__ == "__main__":
    main()
