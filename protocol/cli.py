"""Subcommands on the rules and records: ``perft``, ``show``, and the display of ``othello replay`` (whose command is the referee's: it can rerun an agent)."""

from __future__ import annotations

import sys
import time
from typing import Optional

import click

from .errors import OthelloError
from .notation import draw_board, format_obf, legal_names, parse_board, parse_line, parse_obf, parse_transcript
from .record import GameRecord
from .rules import Board, Move, perft as count_leaves


def _position(obf: Optional[str], board_file: Optional[str]) -> Board:
    if obf and board_file:
        raise click.UsageError("give --obf or --board, not both")
    try:
        if obf:
            return parse_obf(obf)
        if board_file:
            with click.open_file(board_file, encoding="utf-8") as handle:
                return parse_board(handle.read())
    except OthelloError as exc:
        raise click.BadParameter(str(exc)) from None
    return Board()


@click.command()
@click.argument("depth", type=click.IntRange(0, 20))
@click.option("--obf", help="Start from this OBF position instead of the start position.")
@click.option("--divide", is_flag=True, help="Also print the count below each first move.")
def perft(depth: int, obf: Optional[str], divide: bool) -> None:
    """Count the leaves of the game tree DEPTH plies deep.

    A pass counts as a move and a finished game as a leaf.  From the start
    position the counts for depths 1-8 are 4, 12, 56, 244, 1396, 8200,
    55092, 390216.
    """
    board = _position(obf, None)
    started = time.perf_counter()
    if divide and depth > 0:
        total = 0
        for move in board.legal_moves():
            leaves = count_leaves(board.play_unchecked(move), depth - 1)
            total += leaves
            click.echo(f"{move.line()} {leaves}")
    else:
        total = count_leaves(board, depth)
    seconds = time.perf_counter() - started
    click.echo(f"perft {depth}: {total}")
    click.echo(f"{seconds:.3f} s, {total / seconds if seconds > 0 else 0:,.0f} leaves/s", err=True)


def _play_moves(board: Board, moves: tuple[str, ...]) -> tuple[Board, Optional[Move]]:
    last: Optional[Move] = None
    for text in moves:
        try:
            if text.strip().startswith("("):
                parsed = parse_line(text)
                if not isinstance(parsed, Move):
                    continue
                seq = [parsed]
            else:
                seq = parse_transcript(text, board)
            for move in seq:
                board = board.play(move)
                last = move
        except OthelloError as exc:
            raise click.BadParameter(str(exc), param_hint="MOVES") from None
    return board, last


@click.command()
@click.argument("moves", nargs=-1)
@click.option("--obf", help="Start from this OBF position.")
@click.option("--board", "board_file", type=click.Path(dir_okay=False, allow_dash=True),
              help="Start from a drawn board read from this file ('-' for standard input).")
@click.option("--as-obf", is_flag=True, help="Print the position as an OBF line instead of a drawing.")
def show(moves: tuple[str, ...], obf: Optional[str], board_file: Optional[str], as_obf: bool) -> None:
    """Draw a position: the start, or the position after MOVES.

    MOVES are move lines such as "(W D 3)" or a transcript such as d3c3c4
    (passes implied).
    """
    board, last = _play_moves(_position(obf, board_file), moves)
    if as_obf:
        click.echo(format_obf(board))
        return
    click.echo(draw_board(board, last), nl=False)
    if not board.is_game_over():
        click.echo(f"  legal: {legal_names(board) or 'pass'}")


def load_record(game: str) -> tuple[GameRecord, str]:
    """The record of ``game`` (a ``game.json`` or a game directory) and its path; ClickException naming what is wrong."""
    import os

    path = os.path.join(game, "game.json") if os.path.isdir(game) else game
    try:
        return GameRecord.load(path), path
    except (OthelloError, OSError) as exc:
        raise click.ClickException(str(exc)) from None


def print_record(record: GameRecord, path: str, step: bool, fmt: str) -> None:
    """``othello replay``'s display: the boards move by move (``--step``: Enter between them), or the game exported as ``fmt``."""
    if fmt == "transcript":
        click.echo(record.transcript())
        return
    if fmt == "ggf":
        click.echo(record.to_ggf())
        return
    if fmt == "json":
        click.echo(record.to_json(), nl=False)
        return
    click.echo(f"White: {record.white}   Black: {record.black}   seed: {record.seed}")
    if record.opening:
        from .openings import format_opening

        click.echo(f"Opening: {format_opening(record.opening)} ({len(record.opening)} moves; the board below is after it)")
    try:
        for number, (board, entry) in enumerate(record.positions()):
            if entry is not None:
                notes = "".join(f"  (C {c})" for c in entry.comments)
                click.echo(f"\n{number}. {entry.move.line()}  {entry.seconds:.2f} s{notes}")
            click.echo(draw_board(board, entry.move if entry else None), nl=False)
            if step and sys.stdin.isatty():
                click.pause("")
    except OthelloError as exc:
        raise click.ClickException(f"{path}: {exc}") from None
    if record.fault is not None:
        fault = record.fault
        number = record.result.move_number if record.result and record.result.move_number else len(record.moves) + 1
        seconds = "" if fault.seconds is None else f"  {fault.seconds:.2f} s"
        notes = "".join(f"  (C {c})" for c in fault.comments)
        click.echo(f"\n{number}. {record.name(fault.colour)} wrote {fault.line!r}{seconds}{notes}  (the fault)"
                   if fault.line is not None else f"\n{number}. no move from {record.name(fault.colour)}{seconds}")
    if record.result is not None:
        click.echo(f"\nResult: {record.result.summary()}")
        if record.result.detail:
            where = f" (move {record.result.move_number})" if record.result.move_number else ""
            click.echo(f"  {record.result.detail}{where}")


def last_position(record: GameRecord) -> int:
    """The last move number whose position ``othello replay --at`` shows: the last move's, or the one after it
    where the game stopped without ending on the board (a fault, or no result: the move that was awaited)."""
    ended = record.result is not None and record.fault is None and not record.result.termination.is_forfeit
    return len(record.moves) + (0 if ended else 1)


def print_position(record: GameRecord, path: str, number: int) -> None:
    """``othello replay GAME --at N``: the board before move ``number`` as the referee draws it, whose turn it is,
    and the move played there (or the fault); a number the game does not have is click's error naming it."""
    last = last_position(record)
    if not 1 <= number <= last:
        extra = f" and {last}, where it stopped" if last > len(record.moves) else ""
        raise click.BadParameter(
            f"the game has no move {number}: it has {len(record.moves)} moves, numbered 1 to {len(record.moves)}"
            f"{extra} (--at N shows the board before move N)", param_hint="--at")
    try:
        board, previous = list(record.positions())[number - 1]
    except OthelloError as exc:
        raise click.ClickException(f"{path}: {exc}") from None
    click.echo(f"White: {record.white}   Black: {record.black}   ({len(record.moves)} moves)")
    after = (f"after move {number - 1}, {previous.move.line()}" if previous is not None
             else "after the opening" if record.opening else "the start")
    if board.is_game_over():
        click.echo(f"The board before move {number} ({after}): the game is over")
    else:
        mover = record.name(board.to_move)
        click.echo(f"The board before move {number} ({after}): {mover} ({board.to_move.full_name}) to play move "
                   f"{number}; legal: {legal_names(board) or 'none: pass'}")
    click.echo(draw_board(board, previous.move if previous is not None else None), nl=False)
    comments: list[str] = []
    if number <= len(record.moves):
        entry = record.moves[number - 1]
        comments = entry.comments
        click.echo(f"move {number}: {record.name(entry.move.colour)} played {entry.move.line()} in "
                   f"{entry.seconds:.2f} s")
    elif record.fault is not None:
        fault = record.fault
        comments = fault.comments
        wrote = f"wrote {fault.line!r}" if fault.line is not None else "gave no move"
        detail = record.result.detail if record.result is not None and record.result.detail else ""
        click.echo(f"move {number}: {record.name(fault.colour)} {wrote}, the fault" + (f": {detail}" if detail else ""))
    else:
        click.echo(f"move {number}: never played (the game has no result)")
    for comment in comments:  # one a line: an agent's drawn board stays a board
        click.echo(f"  (C {comment})")
