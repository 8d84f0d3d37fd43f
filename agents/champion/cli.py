"""``othello analyze`` (the engine on one position, or a file of them) and ``othello train``."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import click

from ...protocol import Board, ParseError, parse_board, parse_obf

if TYPE_CHECKING:
    from .engine import Engine  # numba: loaded only when a position needs a search


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


def read_positions(path: str) -> list[tuple[int, Board]]:
    """The positions of a file, one OBF line each, with their line numbers; ``-`` is standard input.

    Blank lines and lines starting with ``#`` or ``%`` are skipped.  Every
    bad line is named (all of them, before anything is searched).
    """
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"cannot read {path}: {exc}", param_hint="--file") from None
    positions: list[tuple[int, Board]] = []
    errors: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#%":
            continue
        try:
            positions.append((number, parse_obf(stripped)))
        except ParseError as exc:
            errors.append(f"{path}, line {number}: {exc}")
    if errors:
        raise click.BadParameter("\n".join(errors), param_hint="--file")
    if not positions:
        raise click.BadParameter(f"{path} holds no position (one OBF line a position)", param_hint="--file")
    return positions


# How a printed score counts, named wherever one is printed.
EMPTIES_TO_WINNER = "empties to the winner"  # the standard: every Othello program and published suite
EVALUATION = "evaluation in discs"


def finished_score(board: Board) -> int:
    """A finished game's score for the side to move: the disc difference, empty squares to the winner.

    The rule of the engine's compiled :func:`.search.final_score`, here in
    plain Python so that a finished position is scored without loading the
    engine (tests check that the two agree).
    """
    own, opp = board.count(board.to_move), board.count(board.to_move.opponent)
    empties = board.size * board.size - own - opp
    difference = own - opp
    return difference + empties if difference > 0 else difference - empties if difference < 0 else 0


class LazyEngine:
    """The champion's engine, loaded (numba and every compiled function) the first time a position needs one."""

    def __init__(self) -> None:
        self._engine: Optional["Engine"] = None

    def fresh(self) -> "Engine":
        """The engine with an empty transposition table: each position is searched as if it were the only one."""
        if self._engine is None:
            from .agent import load_engine

            self._engine = load_engine()  # every compiled function loaded before the clock starts
        else:
            self._engine.clear()
        return self._engine

    def exit_at_once(self) -> None:
        """End the process now, its answer written, when the engine was loaded and this is ``othello`` itself.

        Python's teardown of a process that loaded numba (its compiled
        libraries, the garbage of its compiler's objects) takes 0.1-0.5 s of
        the command's time, more on a loaded machine (bench/RESULTS.md, issue
        27), and there is nothing left to do: only the output to flush.  Not
        when the standard output is not the process's own (click's test
        runner, pytest): the caller goes on there.
        """
        own = sys.__stdout__
        if self._engine is None or own is None or sys.stdout is not own or threading.active_count() > 1:
            return
        own.flush()
        sys.stderr.flush()
        os._exit(0)


Iterations = list[tuple[int, float, Optional[int]]]


def analysis(board: Board, engine: LazyEngine, seconds: Optional[float], depth: int,
             exact: Optional[bool]) -> tuple[dict[str, object], Iterations]:
    """The report of one position (the ``--json`` object) and the search's iterations.

    A finished game needs no search: its ``best_move`` is ``None`` and its
    score the final one.
    """
    if board.is_game_over():
        report: dict[str, object] = {
            "best_move": None, "score": finished_score(board), "exact": True, "depth": 0, "nodes": 0,
            "seconds": 0.0, "score_convention": EMPTIES_TO_WINNER,
        }
        return report, []
    result = engine.fresh().think(board, seconds=seconds, max_depth=depth, exact=exact)
    report = {
        "best_move": result.move_name,
        "score": int(result.score) if result.exact or result.selectivity else round(result.score, 2),
        "exact": result.exact and not result.outcome_only,
        "depth": result.depth,
        "nodes": result.nodes,
        "seconds": round(result.seconds, 3),
        "score_convention": EMPTIES_TO_WINNER if result.exact or result.selectivity else EVALUATION,
    }
    if result.selectivity:
        report["selectivity_sigma"] = result.selectivity / 100  # solved selectively: a probable score, no proof
    if result.outcome_only:
        report["outcome"] = "win" if result.score > 0 else "loss" if result.score < 0 else "draw"
    return report, result.iterations


def summary(report: dict[str, object]) -> str:
    """The report in one line for people."""
    score = report["score"]
    assert isinstance(score, (int, float))
    if report["best_move"] is None:
        return f"game over  score {score:+g} (final, {report['score_convention']})"
    if report["exact"]:
        kind = "exact"
    elif "outcome" in report:
        kind = f"outcome {report['outcome']}"
    elif "selectivity_sigma" in report:
        kind = f"selective {report['selectivity_sigma']:.1f} sigma"
    else:
        kind = "eval"
    return (f"best move {report['best_move']}  score {score:+g} ({kind}, {report['score_convention']})  "
            f"depth {report['depth']}  nodes {report['nodes']}  {report['seconds']:.2f}s")


# An OBF line starts with "-" whenever a1 is empty (most of the FFO suite):
# unknown "options" are taken as the position, as users type it.
@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("position", required=False)
@click.option("--file", "positions_file", metavar="FILE", default=None,
              help="Analyze every position of FILE (one OBF line each; - for standard input) in one process: "
                   "one line a result, or with --json one JSON list.")
@click.option("--time", "seconds", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
              help="Seconds of search (a position).")
@click.option("--exact/--no-exact", default=None,
              help="Solve the endgame exactly (--exact: whatever the time; --no-exact: never). "
                   "Default: solve when few squares are empty.")
@click.option("--depth", type=click.IntRange(min=1, max=60), default=60, help="Deepest iteration.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON line for programs.")
def analyze(position: Optional[str], positions_file: Optional[str], seconds: float, exact: Optional[bool], depth: int,
            as_json: bool) -> None:
    """Search POSITION with the champion's engine and print the best move.

    POSITION is an OBF line (64 cells a1..h8 then X or O; X is White, who
    moves first; quote it), a file holding one or a drawn board, or - for
    standard input.  The score is the side to move's final disc difference
    when solved, counting empty squares for the winner as every Othello
    program and published suite does; else the evaluation in discs.
    --exact without --time waits for the solver however long it takes.
    A finished game is not searched: no best move, its final score.
    --file FILE analyzes many positions in one process (the engine loads
    once), each exactly as POSITION alone would be; a result line starts
    with the position's line number, a JSON result holds it as "line".
    """
    if (position is None) == (positions_file is None):
        raise click.UsageError("give one POSITION, or --file FILE with one position a line (not both)")
    limit = None if exact and not _time_given() else seconds
    engine = LazyEngine()
    if positions_file is not None:
        reports = []
        for number, board in read_positions(positions_file):
            report, _ = analysis(board, engine, limit, depth, exact)
            reports.append({**report, "line": number})
            if not as_json:
                click.echo(f"line {number}  {summary(report)}")
        if as_json:
            click.echo(json.dumps(reports))
        engine.exit_at_once()
        return
    assert position is not None
    board = read_position(position)
    report, iterations = analysis(board, engine, limit, depth, exact)
    if as_json:
        click.echo(json.dumps(report))
        engine.exit_at_once()
        return
    click.echo(board.draw(), nl=False)
    click.echo(summary(report))
    for it_depth, score, square in iterations:
        name = "pass" if square is None else f"{'ABCDEFGH'[square % 8]}{square // 8 + 1}"
        click.echo(f"  depth {it_depth:2d}  {name}  {score:+.2f}")
    engine.exit_at_once()


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
@click.option("--rounds", type=click.IntRange(min=0), default=3, show_default=True,
              help="Rounds of self-play; later rounds play with the weights of the last (0: fit --positions only).")
@click.option("--players", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Weights file the first round plays with (default: seed 002's heuristics, simplified).")
@click.option("--positions", "earlier", type=click.Path(exists=True, dir_okay=False), multiple=True,
              help="Positions of an earlier run (--save-positions) added to every fit; repeatable.")
@click.option("--save-positions", type=click.Path(dir_okay=False), default=None,
              help="Keep the positions played here in this file, for later fits.")
@click.option("--fit/--no-fit", default=True, show_default=True,
              help="Fit and write the weights (--no-fit: only play, and keep the positions).")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes playing the games (the same games for any number).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Weights file (default: the shipped agents/champion/data/weights.npz).")
def train(games: int, seed: int, depth: int, noise: float, solve_empties: int, l2: float, rounds: int,
          players: Optional[str], earlier: tuple[str, ...], save_positions: Optional[str], fit: bool, jobs: int,
          out: Optional[str]) -> None:
    """Train the champion's pattern evaluation by self-play (reproducible from --seed)."""
    from .patterns import load_weights
    from .training import load_positions
    from .training import train as run_training

    if not fit and save_positions is None:
        raise click.UsageError("--no-fit plays games only to keep them: give --save-positions FILE")
    if rounds == 0 and not earlier:
        raise click.UsageError("--rounds 0 fits positions of earlier runs only: give --positions FILE")
    try:
        earlier_positions = [load_positions(path) for path in earlier]
        player_weights = None if players is None else load_weights(players)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None
    target = None
    if fit:
        target = out or str(Path(__file__).parent / "data" / "weights.npz")
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    run_training(games, seed, target, depth=depth, noise=noise, solve_empties=solve_empties, l2=l2, rounds=rounds,
                 players=player_weights, earlier=earlier_positions, save_to=save_positions, jobs=jobs,
                 log=lambda line: click.echo(line))
