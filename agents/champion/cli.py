"""``othello analyze`` (the engine on one position) and ``othello train``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import click

from ...protocol import Board, ParseError, parse_board, parse_obf


def read_position(position: str) -> Board:
    """A position given as an OBF line, a file holding an OBF line or a drawn board, or ``-`` (stdin)."""
    if position == "-":
        text = sys.stdin.read()
    elif len(position.strip()) >= 64 and not Path(position).exists():
        text = position
    else:
        path = Path(position)
        if not path.exists():
            raise click.BadParameter(f"{position!r} is neither an OBF line nor a file", param_hint="POSITION")
        text = path.read_text()
    stripped = text.strip()
    first = stripped.splitlines()[0] if stripped else ""
    try:
        if len(first.split()[0] if first.split() else "") >= 64:
            return parse_obf(first)
        return parse_board(text)
    except ParseError as exc:
        raise click.BadParameter(str(exc), param_hint="POSITION") from None


# How a printed score counts, named wherever one is printed.
EMPTIES_TO_WINNER = "empties to the winner"  # the standard: every Othello program and published suite
EVALUATION = "evaluation in discs"


# An OBF line starts with "-" whenever a1 is empty (most of the FFO suite):
# unknown "options" are taken as the position, as users type it.
@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("position")
@click.option("--time", "seconds", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
              help="Seconds of search.")
@click.option("--exact/--no-exact", default=None,
              help="Solve the endgame exactly (--exact: whatever the time; --no-exact: never). "
                   "Default: solve when few squares are empty.")
@click.option("--depth", type=click.IntRange(min=1, max=60), default=60, help="Deepest iteration.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON line for programs.")
def analyze(position: str, seconds: float, exact: Optional[bool], depth: int, as_json: bool) -> None:
    """Search POSITION with the champion's engine and print the best move.

    POSITION is an OBF line (64 cells a1..h8 then X or O; X is White, who
    moves first; quote it), a file holding one or a drawn board, or - for
    standard input.  The score is the side to move's final disc difference
    when solved, counting empty squares for the winner as every Othello
    program and published suite does; else the evaluation in discs.
    --exact without --time waits for the solver however long it takes.
    """
    from .agent import load_engine

    board = read_position(position)
    if board.is_game_over():
        raise click.UsageError("the game is over in this position: nothing to analyze")
    limit = None if exact and not _time_given() else seconds
    engine = load_engine()  # every compiled function loaded before the clock starts
    result = engine.think(board, seconds=limit, max_depth=depth, exact=exact)
    report: dict[str, object] = {
        "best_move": result.move_name,
        "score": int(result.score) if result.exact else round(result.score, 2),
        "exact": result.exact and not result.outcome_only,
        "depth": result.depth,
        "nodes": result.nodes,
        "seconds": round(result.seconds, 3),
        "score_convention": EMPTIES_TO_WINNER if result.exact else EVALUATION,
    }
    if result.outcome_only:
        report["outcome"] = "win" if result.score > 0 else "loss" if result.score < 0 else "draw"
    if as_json:
        click.echo(json.dumps(report))
        return
    click.echo(board.draw(), nl=False)
    kind = "exact" if report["exact"] else f"outcome {report['outcome']}" if result.outcome_only else "eval"
    click.echo(f"best move {report['best_move']}  score {result.score:+g} ({kind}, {report['score_convention']})  "
               f"depth {result.depth}  nodes {result.nodes}  {result.seconds:.2f}s")
    for it_depth, score, square in result.iterations:
        name = "pass" if square is None else f"{'ABCDEFGH'[square % 8]}{square // 8 + 1}"
        click.echo(f"  depth {it_depth:2d}  {name}  {score:+.2f}")


def _time_given() -> bool:
    ctx = click.get_current_context()
    source = ctx.get_parameter_source("seconds")
    return source is not None and source.name != "DEFAULT"


@click.command()
@click.option("--games", type=click.IntRange(min=10), default=6000, show_default=True, help="Self-play games.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the random openings and noise.")
@click.option("--depth", type=click.IntRange(min=1, max=8), default=2, show_default=True,
              help="Search depth of the self-play moves.")
@click.option("--noise", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="Chance of a random move in self-play.")
@click.option("--solve-empties", type=click.IntRange(min=4, max=20), default=14, show_default=True,
              help="Empties at which the exact solver labels the game.")
@click.option("--l2", type=click.FloatRange(min=0), default=3.0, show_default=True, help="Ridge penalty.")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True,
              help="Rounds of self-play; later rounds play with the weights of the last.")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Weights file (default: the shipped agents/champion/data/weights.npz).")
def train(games: int, seed: int, depth: int, noise: float, solve_empties: int, l2: float, rounds: int,
          out: Optional[str]) -> None:
    """Train the champion's pattern evaluation by self-play (reproducible from --seed)."""
    from .training import train as run_training

    target = out or str(Path(__file__).parent / "data" / "weights.npz")
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    run_training(games, seed, target, depth=depth, noise=noise, solve_empties=solve_empties, l2=l2, rounds=rounds,
                 log=lambda line: click.echo(line))
