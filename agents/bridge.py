"""A bridge that makes an Othello engine speaking GTP into a file-protocol agent.

GTP (the Go Text Protocol) is line based: we write a command such as
``genmove black``, the engine answers ``= d3`` (or ``? message``) followed by
an empty line.  Several Othello engines speak it (``gtp-rhino`` from Debian's
``grhino``, for one).

GTP engines use the standard orientation: Black moves first and rows are
counted from the top.  Our games map onto it by keeping every square's label
and swapping the colour names (see ``protocol/record.py``): our White is the
engine's ``black``, and our ``(W D 3)`` is its ``d3``.

The bridge is an ordinary strategy for :func:`.runtime.run_agent`: the
runtime does the files and checks the opponent's moves; the bridge tells the
engine what happened since its last move and asks for the next one.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Optional, Sequence, TextIO

from ..protocol import WHITE, Board, Colour, Move, ParseError, parse_square, square_name


class GTPError(Exception):
    """The engine answered a command with ``?``, or stopped answering."""


def gtp_colour(colour: Colour) -> str:
    """Our colour as the engine calls it: our White moves first, like the standard Black."""
    return "black" if colour is WHITE else "white"


def gtp_vertex(move: Move) -> str:
    """A move as a GTP vertex: the same square label in lower case, or ``pass``."""
    return square_name(move.square).lower() if move.square is not None else "pass"


def parse_vertex(text: str, colour: Colour) -> Move:
    """The engine's answer to ``genmove`` as our move (``pass`` is a pass)."""
    word = text.strip().lower()
    if word == "pass":
        return Move.pass_(colour)
    return Move(colour, parse_square(word))


class GTPEngine:
    """A GTP engine in a child process (same process group: the referee's kill reaches it)."""

    def __init__(self, command: Sequence[str], log: TextIO = sys.stderr) -> None:
        self.command = list(command)
        self.log = log
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
            )
        except OSError as exc:
            raise GTPError(f"cannot start GTP engine {self.command[0]!r}: {exc}") from None

    def send(self, command: str) -> str:
        """Send one command; return the answer's text, or raise :class:`GTPError`."""
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise GTPError(f"GTP engine {self.command[0]!r} is gone (sending {command!r})") from None
        lines: list[str] = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise GTPError(f"GTP engine {self.command[0]!r} closed its output (after {command!r})")
            line = line.rstrip("\r\n")
            if not line.strip():
                if lines:
                    break
                continue  # blank lines before an answer
            lines.append(line)
        head, rest = lines[0], lines[1:]
        status, text = head[:1], head[1:]
        text = text.lstrip("0123456789").strip()  # an optional command id
        body = "\n".join([text, *rest]).strip()
        if status == "=":
            return body
        if status == "?":
            raise GTPError(f"GTP engine refused {command!r}: {body}")
        raise GTPError(f"GTP engine answered {command!r} with {head!r}, not '=' or '?'")

    def try_send(self, command: str) -> Optional[str]:
        """Like :meth:`send`, but a refusal (``?``) is only logged."""
        try:
            return self.send(command)
        except GTPError as exc:
            if self.process.poll() is not None:
                raise
            self.log.write(f"bridge: {exc}\n")
            return None

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.send("quit")
            except GTPError:
                pass
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass


def moves_between(before: Board, after: Board) -> Optional[list[Move]]:
    """The moves (at most two: a pass and a move) that lead from ``before`` to ``after``, or ``None``."""
    if before == after:
        return []
    if Board(before.white, before.black, before.to_move.opponent) == after:
        return [Move.pass_(before.to_move)]  # also a lost turn relayed as a pass (--illegal lose-turn)
    for move in before.legal_moves():
        following = before.play_unchecked(move)
        if following == after:
            return [move]
        for second in following.legal_moves() if not move else []:
            if following.play_unchecked(second) == after:
                return [move, second]
    return None


class GTPBridge:
    """A strategy that asks a GTP engine for every move.

    It remembers the position the engine knows; on each call it replays on
    the engine the opponent's move(s) since then (found by comparing
    positions), then sends ``genmove``.
    """

    def __init__(self, engine: GTPEngine, time_per_move: Optional[float] = None) -> None:
        self.engine = engine
        self.known = Board()
        engine.try_send("boardsize 8")
        engine.send("clear_board")
        if time_per_move is not None:
            # Main time 0, then time_per_move seconds for every single move (many engines ignore it).
            engine.try_send(f"time_settings 0 {max(1, int(time_per_move * 0.8))} 1")

    def tell(self, move: Move) -> None:
        """Tell the engine a move was played.

        Some engines (gtp-rhino) skip a forced pass themselves and refuse
        ``play COLOUR pass``; that refusal is harmless.
        """
        command = f"play {gtp_colour(move.colour)} {gtp_vertex(move)}"
        if move:
            self.engine.send(command)
        else:
            self.engine.try_send(command)

    def opening(self, moves: Sequence[Move]) -> None:
        """Set up an opening's position (PROTOCOL.md section 8) on the engine: ``play`` each move from the start.

        GTP sets a position by ``clear_board`` then the moves that lead to
        it; the runtime calls this before the bridge's first turn.
        """
        board = Board()
        for move in moves:
            self.tell(move)
            board = board.play(move)
        self.known = board

    def __call__(self, board: Board, colour: Colour, time_left: float) -> tuple[Move, list[str]]:
        played = moves_between(self.known, board)
        if played is None:
            raise GTPError(f"cannot follow the game: no move leads from\n{self.known}to\n{board}")
        for move in played:
            self.tell(move)
        self.known = board
        legal = board.legal_moves()
        if legal == [Move.pass_(colour)]:
            # The rules force a pass: no need to ask (some engines skip it themselves).
            self.tell(legal[0])
            self.known = board.play_unchecked(legal[0])
            return legal[0], ["forced pass"]
        answer = self.engine.send(f"genmove {gtp_colour(colour)}")
        try:
            move = parse_vertex(answer, colour)
        except ParseError:
            # "resign" or nonsense: the file protocol has no resignation, so play on.
            self.engine.log.write(f"bridge: engine answered genmove with {answer!r}; playing {legal[0].line()}\n")
            move = legal[0]
            self.tell(move)
            self.known = board.play_unchecked(move)
            return move, [f"engine said {answer!r}"]
        why = board.why_illegal(move)
        if why is not None:
            # An engine bug (or a wrong mapping): say so, take it back, and play a legal move.
            self.engine.log.write(f"bridge: the engine's move {move.line()} is illegal ({why}); "
                                  f"playing {legal[0].line()}\n")
            self.engine.try_send("undo")
            move = legal[0]
            self.tell(move)
            self.known = board.play_unchecked(move)
            return move, [f"engine move {answer} was illegal"]
        self.known = board.play_unchecked(move)
        return move, [f"engine move {answer}"]


def run_gtp_bridge(command: Sequence[str], name: str, directory: str = ".",
                   time_per_move: Optional[float] = None, log: TextIO = sys.stderr) -> int:
    """Play one game through files with the GTP engine ``command``; return the exit code."""
    from .runtime import default_time, run_agent

    seconds = default_time(time_per_move)
    engine = GTPEngine(command, log)
    try:
        bridge = GTPBridge(engine, seconds)
        return run_agent(bridge, name, directory, seconds, log)
    finally:
        engine.close()

