"""Opening suites made here: ``othello openings generate``.

XOT-style: short random openings (8 plies by default) from the start
position, kept when the champion's engine, searching a fixed depth, scores
the position within +-2 discs for the side to move (a balanced start, so a
game pair measures the agents rather than the opening), and deduplicated by
symmetry (an opening and its mirror image are one opening).

Everything is drawn from the seed and the search has a fixed depth (no
clock, a cleared hash table for each position), so the same seed, plies,
depth and engine give the same file on any machine.  Each line is the
opening's moves with the engine's score as a comment::

    # othello openings generate --plies 8 --seed 1 --depth 8 --within 2
    d3 c5 f6 f5 e6 e3 c3 d2  # +0.84
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Callable, Optional

import click

from ...protocol import Board, Move
from ...protocol.openings import canonical_key, format_opening, read_openings

Evaluator = Callable[[Board], float]


def random_opening(rng: random.Random, plies: int) -> Optional[list[Move]]:
    """``plies`` random legal moves from the start (a forced pass counts), or ``None`` if the game ends first."""
    board, moves = Board(), []
    for _ in range(plies):
        if board.is_game_over():
            return None
        move = rng.choice(board.legal_moves())
        board = board.play(move)
        moves.append(move)
    return None if board.is_game_over() else moves


def generate(count: int, seed: int, plies: int, within: float, evaluate: Evaluator,
             max_tries: Optional[int] = None, progress: Callable[[int, int], None] = lambda kept, tried: None,
             ) -> list[tuple[list[Move], float]]:
    """Up to ``count`` balanced openings with their scores, in the order found.

    ``evaluate`` scores a position for the side to move, in discs.  Openings
    whose position (up to symmetry) was seen already are skipped before
    they are evaluated; at most ``max_tries`` (default ``50 * count``)
    random openings are drawn.
    """
    rng = random.Random(seed)
    seen: set[tuple[int, int, str]] = set()
    kept: list[tuple[list[Move], float]] = []
    tries = 0
    limit = max_tries if max_tries is not None else 50 * count
    while len(kept) < count and tries < limit:
        tries += 1
        moves = random_opening(rng, plies)
        if moves is None:
            continue
        board = Board()
        for move in moves:
            board = board.play(move)
        key = canonical_key(board)
        if key in seen:
            continue
        seen.add(key)
        score = evaluate(board)
        if abs(score) <= within:
            kept.append((moves, score))
            progress(len(kept), tries)
    return kept


def champion_evaluator(depth: int) -> Evaluator:
    """The champion's engine searching ``depth`` plies with no clock: the side to move's score in discs."""
    from ...agents.champion.agent import load_engine

    engine = load_engine()

    def evaluate(board: Board) -> float:
        engine.clear()  # each position from an empty hash table: the same score whatever came before
        return float(engine.think(board, seconds=None, max_depth=depth, exact=False).score)

    return evaluate


def format_suite(openings: list[tuple[list[Move], float]], header: str) -> str:
    """The suite as an opening file: a header comment, then ``moves  # score`` lines."""
    lines = [f"# {line}" for line in header.splitlines()]
    lines += [f"{format_opening(moves)}  # {score:+.2f}" for moves, score in openings]
    return "\n".join(lines) + "\n"


@click.group()
def openings() -> None:
    """Opening suites: make one (generate) or look at one (show)."""


@openings.command()
@click.option("--count", type=click.IntRange(min=1), default=1000, show_default=True, help="Openings to keep.")
@click.option("--plies", type=click.IntRange(min=1, max=30), default=8, show_default=True,
              help="Random moves from the start position.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the random openings.")
@click.option("--depth", type=click.IntRange(min=1, max=30), default=8, show_default=True,
              help="Depth of the champion's search that scores each opening.")
@click.option("--within", type=click.FloatRange(min=0), default=2.0, show_default=True,
              help="Keep openings the search scores within this many discs of even.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The opening file to write.")
def generate_command(count: int, plies: int, seed: int, depth: int, within: float, out_file: Path) -> None:
    """Generate balanced random openings, deduplicated by symmetry, reproducible from the seed."""
    from ...agents import registry

    registry.prepare(["champion"], lambda line: click.echo(line, err=True))
    started = time.monotonic()

    def progress(kept: int, tried: int) -> None:
        if kept % 50 == 0 or kept == count:
            click.echo(f"{kept} of {count} kept ({tried} drawn, {time.monotonic() - started:.0f} s)", err=True)

    found = generate(count, seed, plies, within, champion_evaluator(depth), progress=progress)
    header = (f"othello openings generate --count {count} --plies {plies} --seed {seed} --depth {depth} "
              f"--within {within:g}\n{len(found)} openings; score: the champion's, for the side to move, in discs")
    out_file.write_text(format_suite(found, header), encoding="utf-8")
    click.echo(f"{len(found)} openings written to {out_file}")


generate_command.name = "generate"


@openings.command()
@click.argument("file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
def show(file: Path) -> None:
    """Check an opening file and say how many openings it holds, and how many are distinct up to symmetry."""
    from ...protocol import IllegalMoveError, ParseError

    try:
        suite = read_openings(file)
    except (ParseError, IllegalMoveError) as exc:
        raise click.ClickException(str(exc)) from None
    keys = set()
    for moves in suite:
        board = Board()
        for move in moves:
            board = board.play(move)
        keys.add(canonical_key(board))
    plies = sorted({len(moves) for moves in suite})
    click.echo(f"{file}: {len(suite)} openings, {len(keys)} distinct up to symmetry, "
               f"{'-'.join(str(p) for p in (plies[0], plies[-1])) if plies else 0} plies")


__all__ = ["champion_evaluator", "format_suite", "generate", "random_opening"]
