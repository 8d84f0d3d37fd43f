"""Showing a game as it is played: a board after each move, with rich or plain text.

The board is drawn as PROTOCOL.md draws it (row 8 at the top), the last
move marked, with the disc counts and each side's thinking time so far.  On
a terminal ``rich`` colours it; otherwise (a pipe, a file, a test) it is
the plain drawing of :func:`othello_arena.protocol.draw_board`.
"""

from __future__ import annotations

import shlex

from pathlib import Path
from typing import IO, TYPE_CHECKING, Optional

from ..protocol import BLACK, WHITE, Board, Colour, GameRecord, Move, Termination, square
from ..protocol.notation import legal_names
from .game import GameEvent
from .hints import hints, output_tail

if TYPE_CHECKING:  # rich is imported where a board or a game is shown: othello match only prints lines
    from rich.text import Text


def board_text(board: Board, last_move: Optional[Move] = None) -> Text:
    """The board as rich text: white and black discs, the last move in reverse video."""
    from rich.text import Text

    text = Text()
    n = board.size
    header = board.geometry.header + "\n"
    text.append(header, style="dim")
    marked = last_move.square if last_move else None
    for row in range(n, 0, -1):
        text.append(f"{row:>3} ", style="dim")
        for col in range(n):
            sq = square(col, row, n)
            colour = board.at(sq)
            cell, style = ("W", "bold white") if colour is WHITE else ("B", "bold blue") if colour is BLACK else (".", "green")
            if sq == marked:
                cell, style = cell.lower(), style + " reverse"
            text.append(cell, style=style)
            text.append(" ")
        text.append(f"{row}\n", style="dim")
    text.append(header, style="dim")
    return text


class Display:
    """An ``on_event`` callback that prints the game for people."""

    def __init__(self, file: Optional[IO[str]] = None, quiet: bool = False, prompts: Optional[IO[str]] = None) -> None:
        from rich.console import Console

        self.console = Console(file=file, highlight=False, soft_wrap=True)
        self.prompts = Console(file=prompts, highlight=False, soft_wrap=True, stderr=prompts is None)
        self.quiet = quiet

    def __call__(self, event: GameEvent) -> None:
        handler = getattr(self, "on_" + event.kind.replace("-", "_"), None)
        if handler is not None:
            handler(event)

    def line(self, text: str, style: str = "") -> None:
        if not self.quiet:
            self.console.print(text, style=style or None, markup=False)

    def status(self, event: GameEvent) -> str:
        w, b = event.board.count(WHITE), event.board.count(BLACK)
        clocks, names, banks = event.clocks, event.names, event.banks

        def left(colour: Colour) -> str:  # under a game clock: what is left in the bank
            bank = banks.get(colour)
            return "" if bank is None else f" ({bank:.2f} s left)"

        return (
            f"  W {names.get(WHITE, '')}: {w} discs, {clocks.get(WHITE, 0.0):.2f} s{left(WHITE)}"
            f"   B {names.get(BLACK, '')}: {b} discs, {clocks.get(BLACK, 0.0):.2f} s{left(BLACK)}"
        )

    # -- events ------------------------------------------------------------------

    def on_start(self, event: GameEvent) -> None:
        for part in event.message.split("; "):
            self.line(part)

    def on_waiting(self, event: GameEvent) -> None:
        if event.manual:
            self.prompt(event)

    def prompt(self, event: GameEvent) -> None:
        assert event.colour is not None and event.path is not None
        legal = legal_names(event.board) or "none: pass"
        example = event.board.legal_moves()[0].line() if event.board.legal_moves() else f"({event.colour.value} P)"
        limit = "no time limit" if event.time_limit is None else f"{event.time_limit:.3g} s"
        bank = event.banks.get(event.colour)
        if bank is not None:  # under a game clock: the bank, and a cap on the move only where one binds
            capped = event.time_limit is not None and event.time_limit < bank
            limit = f"your clock: {bank:.1f} s left" + (f", {event.time_limit:.3g} s at most this move" if capped else "")
        in_path = event.path.with_suffix(".in")
        holds = event.message or "the opponent's last move"
        self.prompts.print(
            f"{event.player} ({event.colour.full_name}) to move, {limit}.\n"
            f"  Read {in_path} ({holds})\n"
            f"  Write your move into {event.path}, e.g. {example}   legal: {legal}",
            markup=False,
        )

    def on_move(self, event: GameEvent) -> None:
        if self.quiet:
            return
        assert event.move is not None
        self.console.print(f"{event.player}: {event.move.line()}  ({event.seconds:.3f} s)", markup=False)
        if self.console.is_terminal:
            self.console.print(board_text(event.board, event.move), end="")
        else:
            self.console.print(event.board.draw(event.move).rstrip("\n"), markup=False)
        self.console.print(self.status(event), markup=False)

    def on_retry(self, event: GameEvent) -> None:
        # A person's typo: shown with the prompts (even with --quiet), since the person must act on it.
        self.prompts.print(f"{event.player}: {event.message}", style="bold red", markup=False)

    def on_lost_turn(self, event: GameEvent) -> None:
        self.line(f"{event.player}: {event.message}", style="yellow")

    def on_warning(self, event: GameEvent) -> None:
        self.line(f"warning: {event.message}", style="yellow")

    def on_end(self, event: GameEvent) -> None:
        pass


def summary(record: GameRecord) -> str:
    """The result in one line for people: ``alice (W) vs bob (B): 0-1 alice loses on time (13-36 on the board)``."""
    result = record.result
    if result is None:
        return "no result"
    text = f"{record.white} (W) vs {record.black} (B): {result.summary(record.white, record.black)}"
    if result.detail:
        text += f": {result.detail}"
    return text


def fault_lines(record: GameRecord, game_dir: Path) -> list[str]:
    """Under a game lost on a fault: where, what the faulty side wrote, the end of its output, the known hints.

    ``game_dir`` is the game's directory (where ``game.json`` and the
    agents' ``NAME.stderr.log`` are).  Nothing for a game that ended on the
    board or a build that failed (it has its own log).
    """
    result = record.result
    if result is None or not result.termination.is_forfeit or result.termination is Termination.BUILD:
        return []
    fault = record.fault
    faulty = [fault.colour] if fault is not None else [result.loser] if result.loser is not None else [WHITE, BLACK]
    lines: list[str] = []
    for colour in faulty:
        name = record.name(colour)
        info = record.extra.get("agents", {}).get(name, {})
        if info.get("start_error"):
            continue  # it never ran: its start error says it all (and is printed as the error)
        if fault is not None and fault.colour is colour:
            wrote = f"wrote {fault.line!r}" if fault.line is not None else "no move"
            took = f" after {fault.seconds:.2f} s" if fault.seconds is not None else ""
            lines.append(f"{name} at move {result.move_number}: {wrote}{took}"
                         + "".join(f"  (C {comment})" for comment in fault.comments))
        output = ""
        if info.get("stderr_log"):
            log = game_dir / str(info["stderr_log"])
            try:
                output = log.read_text(errors="replace")
            except OSError:
                output = ""
            tail = output_tail(log)
            lines.append(f"{name}'s output ({log}), last lines:" if tail else f"{name}'s output ({log}) is empty")
            lines += [f"  | {line}" for line in tail]
        moves_made = sum(1 for entry in record.moves if entry.move.colour is colour)
        out_name = f"{info.get('file_name', name)}.out"
        sent = [str(entry.move) for entry in record.moves if entry.move.colour is colour]
        if fault is not None and fault.colour is colour and fault.line is not None:
            sent.append(fault.line)  # the faulty line came through NAME.out too
        lines += [f"hint: {hint}" for hint in hints(output, info.get("exit_code"), moves_made, out_name, sent)]
        if fault is not None and fault.colour is colour and result.move_number is not None:
            # The next step of the debugging loop (docs/STUDENTS.md): the same files again, at that move.
            lines.append(f"to see it again: othello replay {shlex.quote(str(game_dir))} --rerun {shlex.quote(name)} "
                         f"--at {result.move_number} (add --command \"...\" to try a fixed version there)")
    return lines


def side_by_side(left: Board, right: Board, titles: tuple[str, str]) -> list[str]:
    """Two boards drawn as the referee draws them, side by side under their titles (a board against another)."""
    drawings = [board.draw().rstrip("\n").splitlines()[:-1] for board in (left, right)]  # (not whose turn: unknown)
    width = max(len(titles[0]), *(len(line) for line in drawings[0])) + 4
    return [f"{titles[0]:<{width}}{titles[1]}"] + [f"{a:<{width}}{b}" for a, b in zip(*drawings)]
