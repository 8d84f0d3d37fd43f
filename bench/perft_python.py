"""Benchmark: the plain-Python rules core's move generator, as perft leaves per second.

Run by hand:  python bench/perft_python.py [MAX_DEPTH]
The compiled engine of the champion has its own benchmark (bench/perft_compiled.py).
"""

import sys
import time

from othello_arena.protocol import Board, perft

EXPECTED = [1, 4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288]


def main() -> None:
    max_depth = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    print(f"{'depth':>5} {'leaves':>12} {'seconds':>9} {'leaves/s':>12}")
    for depth in range(1, max_depth + 1):
        started = time.perf_counter()
        leaves = perft(Board(), depth)
        seconds = time.perf_counter() - started
        assert leaves == EXPECTED[depth], (depth, leaves)
        print(f"{depth:>5} {leaves:>12,} {seconds:>9.3f} {leaves / max(seconds, 1e-9):>12,.0f}")


if __name__ == "__main__":
    main()
