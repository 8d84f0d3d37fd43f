"""Fitting multi-prob-cut's table (:mod:`.probcut`) on positions the engine labels itself.

Self-play games (random first moves, then shallow searches with a little
noise), a few positions drawn from each, every depth 0..``--depth`` searched
exactly (no cut) in one table, as iterative deepening does.  Per phase of the
game and per deep depth, a least-squares line of the deep value on the value
at :func:`.probcut.shallow_depth`:

    python -m othello_arena.agents.champion.probcut_training --positions 600 --depth 10 --seed 1

writes ``data/probcut.npz`` (the table and how it was made) and prints it.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Callable, Optional

import numpy as np

from .probcut import (MAX_DEPTH, MIN_DEPTH, N_PHASES, PARAM_A, PARAM_B, PARAM_SHALLOW, PARAM_SIGMA, PHASE_WIDTH,
                      PROBCUT_FILE, empty_table, shallow_depth)

def label_positions(positions: int, depth: int, seed: int, min_empties: int = 14, max_empties: int = 54,
                    per_game: int = 4, log: Callable[[str], None] = print) -> tuple[np.ndarray, np.ndarray]:
    """``(empties, values)``: positions from self-play and their exact search values at depths 0..``depth``.

    ``values`` is int64 [n, depth + 1] in search units (centi-discs); each
    position is searched in a fresh table, deepening one ply at a time.
    """
    from ...protocol import Board
    from .agent import load_engine

    engine = load_engine()
    rng = random.Random(seed)
    empties: list[int] = []
    rows: list[list[int]] = []
    started = time.perf_counter()
    while len(rows) < positions:
        board = Board()
        random_plies = rng.randint(4, 16)
        game: list[Board] = []
        ply = 0
        while not board.is_game_over():
            moves = board.legal_moves()
            n_empty = 64 - bin(board.white | board.black).count("1")
            if n_empty < min_empties:
                break
            if moves[0].square is not None and n_empty <= max_empties:
                game.append(board)
            if ply < random_plies or len(moves) == 1 or rng.random() < 0.1:
                move = rng.choice(moves)
            else:
                _, sq = engine.search_depth(board, 2)
                move = next(m for m in moves if m.square == sq)
            board = board.play(move)
            ply += 1
        for chosen in rng.sample(game, min(per_game, len(game))):
            engine.clear()
            values = [engine.search_depth(chosen, d)[0] for d in range(depth + 1)]
            empties.append(64 - bin(chosen.white | chosen.black).count("1"))
            rows.append(values)
            if len(rows) % 50 == 0:
                log(f"{len(rows)} positions labelled in {time.perf_counter() - started:.0f}s")
    return np.array(empties[:positions], dtype=np.int64), np.array(rows[:positions], dtype=np.int64)


def fit_table(empties: np.ndarray, values: np.ndarray, win_bonus: int, min_samples: int = 30) -> np.ndarray:
    """The regression table from labelled positions (see the module doc).

    Values of sure results (at or beyond ``win_bonus``) are left out: they
    are no estimates.  A phase with fewer than ``min_samples`` positions
    borrows its nearest fitted neighbour's row; depths beyond the labelled
    ones borrow the deepest labelled row.
    """
    table = empty_table()
    deepest = values.shape[1] - 1
    fitted = np.zeros((N_PHASES, MAX_DEPTH + 1), dtype=bool)
    phases = np.minimum(empties // PHASE_WIDTH, N_PHASES - 1)
    for depth in range(MIN_DEPTH, deepest + 1):
        shallow = shallow_depth(depth)
        x_all, y_all = values[:, shallow], values[:, depth]
        estimates = (np.abs(x_all) < win_bonus) & (np.abs(y_all) < win_bonus)
        for phase in range(N_PHASES):
            chosen = estimates & (phases == phase)
            if chosen.sum() < min_samples:
                continue
            x, y = x_all[chosen].astype(np.float64), y_all[chosen].astype(np.float64)
            a, b = np.polyfit(x, y, 1)
            sigma = float(np.std(y - (a * x + b)))
            table[phase, depth, :PARAM_SHALLOW] = (a, b, sigma)
            fitted[phase, depth] = True
    for phase in range(N_PHASES):
        for depth in range(MIN_DEPTH, MAX_DEPTH + 1):
            if fitted[phase, depth]:
                continue
            donors = [p for p in range(N_PHASES) if fitted[p, min(depth, deepest)]]
            if donors:
                source = min(donors, key=lambda p: abs(p - phase))
                table[phase, depth, :PARAM_SHALLOW] = table[source, min(depth, deepest), :PARAM_SHALLOW]
    return table


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=600)
    parser.add_argument("--depth", type=int, default=10, help="the deepest search labelled")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--raw", help="also keep the labelled values here (.npz), or refit from them if the file exists")
    parser.add_argument("--out", default=None, help="the table's file (default: the package's data/probcut.npz)")
    args = parser.parse_args(argv)
    from pathlib import Path

    from . import evaluation

    if args.raw and Path(args.raw).exists():
        with np.load(args.raw) as raw:
            empties, values = raw["empties"], raw["values"]
    else:
        empties, values = label_positions(args.positions, args.depth, args.seed)
        if args.raw:
            np.savez_compressed(args.raw, empties=empties, values=values)
    table = fit_table(empties, values, evaluation.WIN_BONUS)
    out = args.out or str(Path(__file__).parent / "data" / PROBCUT_FILE)
    np.savez_compressed(out, table=table, positions=len(empties), depth=values.shape[1] - 1, seed=args.seed)
    for phase in range(N_PHASES):
        rows = [f"{d}:{table[phase, d, PARAM_A]:.2f}/{table[phase, d, PARAM_B]:+.0f}/{table[phase, d, PARAM_SIGMA]:.0f}"
                for d in range(MIN_DEPTH, values.shape[1])]
        print(f"empties {phase * PHASE_WIDTH}-{phase * PHASE_WIDTH + PHASE_WIDTH - 1}: " + " ".join(rows))
    print(f"wrote {out} from {len(empties)} positions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
