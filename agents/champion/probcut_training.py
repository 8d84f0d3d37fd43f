"""Fitting multi-prob-cut's table (:mod:`.probcut`) on positions the engine labels itself.

Self-play games (random first moves, then shallow searches with a little
noise), a few positions drawn from each, every depth 0..``--depth`` searched
exactly (no cut) in one table, as iterative deepening does.  Per phase of the
game and per deep depth, a least-squares line of the deep value on the value
at :func:`.probcut.shallow_depth`:

    python -m othello_arena.agents.champion.probcut_training --positions 600 --depth 10 --seed 1

writes ``data/probcut.npz`` (the table and how it was made) and prints it.

The endgame's table (:func:`.probcut.load_endgame_table`) from positions of
12 to ``--max-empties`` empties, each solved exactly and searched at
:func:`.probcut.shallow_depth` of its empties as the selective solver does
(multi-prob-cut on); per number of empties, a line of the exact score on the
shallow value (discs), and beyond the labelled empties sigma's trend:

    python -m othello_arena.agents.champion.probcut_training --endgame --positions 40 --max-empties 22 --seed 1

rewrites only the file's endgame table (and the midgame fit only the midgame's).
"""

from __future__ import annotations

import argparse
import random
import time
from typing import TYPE_CHECKING, Callable, Iterator, Optional

import numpy as np

from .probcut import (ENDGAME_MIN_EMPTIES, ENDGAME_ROWS, MAX_DEPTH, MIN_DEPTH, N_PHASES, PARAM_A, PARAM_B,
                      PARAM_SHALLOW, PARAM_SIGMA, PHASE_WIDTH, PROBCUT_FILE, empty_endgame_table, empty_table,
                      shallow_depth)

from . import evaluation

if TYPE_CHECKING:
    from ...protocol import Board
    from .engine import Engine

def _self_play(engine: "Engine", rng: random.Random, min_empties: int, max_empties: int) -> Iterator[list["Board"]]:
    """Endless games' positions (the side to move has a move) of ``min_empties`` to ``max_empties``
    empties: random first moves, then depth-2 searches with one move in ten random."""
    from ...protocol import Board

    while True:
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
        yield game


def label_positions(positions: int, depth: int, seed: int, min_empties: int = 14, max_empties: int = 54,
                    per_game: int = 4, log: Callable[[str], None] = print) -> tuple[np.ndarray, np.ndarray]:
    """``(empties, values)``: positions from self-play and their exact search values at depths 0..``depth``.

    ``values`` is int64 [n, depth + 1] in search units (centi-discs); each
    position is searched in a fresh table, deepening one ply at a time.
    """
    from .agent import load_engine

    engine = load_engine()
    rng = random.Random(seed)
    empties: list[int] = []
    rows: list[list[int]] = []
    started = time.perf_counter()
    for game in _self_play(engine, rng, min_empties, max_empties):
        if len(rows) >= positions:
            break
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


def label_endgame_positions(per_empties: int, max_empties: int, seed: int,
                            log: Callable[[str], None] = print) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(empties, shallow, exact)``: ``per_empties`` self-play positions of each number of empties
    from :data:`.probcut.ENDGAME_MIN_EMPTIES` to ``max_empties``, their value at
    :func:`.probcut.shallow_depth` of the empties (centi-discs, multi-prob-cut on, as the selective
    solver's shallow searches) and their exact score (discs, empties to the winner).

    One position of each number of empties a game at most; each searched in a fresh table.
    """
    from .agent import load_engine

    engine = load_engine()
    rng = random.Random(seed)
    wanted = {n: per_empties for n in range(ENDGAME_MIN_EMPTIES, max_empties + 1)}
    empties: list[int] = []
    shallow: list[int] = []
    exact: list[int] = []
    started = time.perf_counter()
    for game in _self_play(engine, rng, ENDGAME_MIN_EMPTIES, max_empties):
        if not any(wanted.values()):
            break
        for board in game:
            n_empty = 64 - bin(board.white | board.black).count("1")
            if not wanted.get(n_empty):
                continue
            wanted[n_empty] -= 1
            engine.clear()
            value, _ = engine.search_depth(board, shallow_depth(n_empty), selective=True)
            engine.clear()
            score, _ = engine.solve_selective(board, 0, guess=value / evaluation.SCALE)
            empties.append(n_empty)
            shallow.append(value)
            exact.append(score)
            if len(empties) % 50 == 0:
                log(f"{len(empties)} endgame positions labelled in {time.perf_counter() - started:.0f}s")
    return (np.array(empties, dtype=np.int64), np.array(shallow, dtype=np.int64), np.array(exact, dtype=np.int64))


def fit_endgame_table(empties: np.ndarray, shallow: np.ndarray, exact: np.ndarray, min_samples: int = 20) -> np.ndarray:
    """The endgame's regression table from labelled positions (see the module doc).

    Per number of empties with at least ``min_samples`` positions whose
    shallow value is an estimate (not a sure result), ``exact ~ a * shallow
    + b`` in discs and sigma.  Beyond the deepest fitted row, ``a`` and ``b``
    are that row's and sigma follows the fitted rows' linear trend in the
    empties (the error grows as the shallow search sees less of the end),
    never below the deepest's; below :data:`.probcut.ENDGAME_MIN_EMPTIES`
    nothing is cut.
    """
    table = empty_endgame_table()
    fitted: list[int] = []
    estimates = np.abs(shallow) < evaluation.WIN_BONUS
    for n in range(ENDGAME_MIN_EMPTIES, ENDGAME_ROWS):
        chosen = estimates & (empties == n)
        if chosen.sum() < min_samples:
            continue
        x = shallow[chosen].astype(np.float64) / evaluation.SCALE
        y = exact[chosen].astype(np.float64)
        a, b = np.polyfit(x, y, 1)
        table[n, :PARAM_SHALLOW] = (a, b, float(np.std(y - (a * x + b))))
        fitted.append(n)
    if not fitted:
        return table
    deepest = fitted[-1]
    slope, intercept = np.polyfit(fitted, table[fitted, PARAM_SIGMA], 1) if len(fitted) > 1 else (0.0, 0.0)
    for n in range(deepest + 1, ENDGAME_ROWS):
        table[n, PARAM_A], table[n, PARAM_B] = table[deepest, PARAM_A], table[deepest, PARAM_B]
        table[n, PARAM_SIGMA] = max(table[deepest, PARAM_SIGMA], slope * n + intercept)
    for n in range(fitted[0] + 1, deepest):  # a gap between fitted rows: the nearer fitted one below
        if n not in fitted:
            table[n, :PARAM_SHALLOW] = table[max(f for f in fitted if f < n), :PARAM_SHALLOW]
    return table


def save_tables(out: str, **arrays: np.ndarray | int) -> None:
    """Write ``out`` with ``arrays``, keeping what the file held of the other fit (the midgame's or the endgame's)."""
    from pathlib import Path

    kept: dict[str, np.ndarray] = {}
    if Path(out).exists():
        with np.load(out) as old:
            kept = {key: old[key] for key in old.files}
    kept.update({key: np.asarray(value) for key, value in arrays.items()})
    np.savez_compressed(out, **kept)  # type: ignore[arg-type]  # numpy's stubs take the keywords as one kind


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endgame", action="store_true", help="fit the endgame's table (see the module doc)")
    parser.add_argument("--positions", type=int, default=600,
                        help="positions labelled (with --endgame: of each number of empties)")
    parser.add_argument("--max-empties", type=int, default=22, help="with --endgame: the most empties solved")
    parser.add_argument("--depth", type=int, default=10, help="the deepest search labelled")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--raw", help="also keep the labelled values here (.npz), or refit from them if the file exists")
    parser.add_argument("--out", default=None, help="the table's file (default: the package's data/probcut.npz)")
    args = parser.parse_args(argv)
    from pathlib import Path

    out = args.out or str(Path(__file__).parent / "data" / PROBCUT_FILE)
    if args.endgame:
        return _main_endgame(args, out)
    if args.raw and Path(args.raw).exists():
        with np.load(args.raw) as raw:
            empties, values = raw["empties"], raw["values"]
    else:
        empties, values = label_positions(args.positions, args.depth, args.seed)
        if args.raw:
            np.savez_compressed(args.raw, empties=empties, values=values)
    table = fit_table(empties, values, evaluation.WIN_BONUS)
    save_tables(out, table=table, positions=len(empties), depth=values.shape[1] - 1, seed=args.seed)
    for phase in range(N_PHASES):
        rows = [f"{d}:{table[phase, d, PARAM_A]:.2f}/{table[phase, d, PARAM_B]:+.0f}/{table[phase, d, PARAM_SIGMA]:.0f}"
                for d in range(MIN_DEPTH, values.shape[1])]
        print(f"empties {phase * PHASE_WIDTH}-{phase * PHASE_WIDTH + PHASE_WIDTH - 1}: " + " ".join(rows))
    print(f"wrote {out} from {len(empties)} positions")
    return 0


def _main_endgame(args: argparse.Namespace, out: str) -> int:
    from pathlib import Path

    if args.raw and Path(args.raw).exists():
        with np.load(args.raw) as raw:
            empties, shallow, exact = raw["empties"], raw["shallow"], raw["exact"]
    else:
        empties, shallow, exact = label_endgame_positions(args.positions, args.max_empties, args.seed)
        if args.raw:
            np.savez_compressed(args.raw, empties=empties, shallow=shallow, exact=exact)
    table = fit_endgame_table(empties, shallow, exact)
    save_tables(out, endgame=table, endgame_positions=len(empties), endgame_seed=args.seed)
    for n in range(ENDGAME_MIN_EMPTIES, ENDGAME_ROWS):
        count = int((empties == n).sum())
        print(f"{n} empties: shallow depth {table[n, PARAM_SHALLOW]:.0f} a {table[n, PARAM_A]:.2f} "
              f"b {table[n, PARAM_B]:+.2f} sigma {table[n, PARAM_SIGMA]:.2f} discs ({count} positions)")
    print(f"wrote {out}'s endgame table from {len(empties)} positions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
