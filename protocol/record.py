"""Game records: ``game.json``, transcripts and GGF.

A record is plain data: who played which colour, the seed that drew the
colours, every move with the seconds it took and the agent's comments, and
the result (winner, reason, discs).  It converts to and from JSON, to the
compact transcript and to GGF, the format NBoard, Edax and GGS read.

GGF games are in the standard orientation, where Black moves first and rows
are counted from the top.  Our games map onto them by keeping every square's
label and swapping the colour names: our White is GGF's Black (``PB``), so our
first move ``(W D 3)`` is the standard opening ``B[d3]``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .errors import IllegalMoveError, ParseError
from .notation import format_cells, format_obf, format_transcript, parse_cells, parse_obf
from .rules import (
    BLACK,
    DEFAULT_SIZE,
    WHITE,
    Board,
    Colour,
    Comment,
    Move,
    Result,
    Termination,
    check_size,
    parse_line,
    parse_square,
    square_name,
)

RECORD_VERSION = 1


SECONDS_DIGITS = 4  # a record keeps times to 0.1 ms: in memory as in game.json, so that one time reads the same everywhere


def _kept(seconds: Optional[float]) -> Optional[float]:
    """``seconds`` as a record keeps it (see :data:`SECONDS_DIGITS`)."""
    return None if seconds is None else round(float(seconds), SECONDS_DIGITS)


@dataclass
class MoveRecord:
    """One move as played: the move, the seconds it took, the agent's comments.

    ``forfeit`` marks a turn lost under the referee's ``lose-turn`` rule: the
    agent's illegal move was ignored and recorded as its pass (a pass that
    the rules would not allow, so replays play it without checking).
    ``clock`` is the mover's game clock after the move, the increment
    added (seconds left in its bank; ``None``: the game had no clock for it).
    """

    move: Move
    seconds: float = 0.0
    comments: list[str] = field(default_factory=list)
    forfeit: bool = False
    clock: Optional[float] = None

    def __post_init__(self) -> None:
        # Rounded where the record is made, not only where it is written: the summary `othello play` prints
        # from the game in memory said 0.80 s where the report of the same game.json said 0.81 s.
        self.seconds = round(float(self.seconds), SECONDS_DIGITS)
        self.clock = _kept(self.clock)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"move": self.move.line(), "seconds": self.seconds, "comments": list(self.comments)}
        if self.forfeit:
            data["forfeit"] = True
        if self.clock is not None:
            data["clock"] = self.clock
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], size: int = DEFAULT_SIZE) -> "MoveRecord":
        parsed = parse_line(str(data["move"]), size)
        if isinstance(parsed, Comment):
            raise ParseError(f"record move {data['move']!r} is a comment, not a move")
        forfeit = bool(data.get("forfeit", False))
        if forfeit and parsed.square is not None:
            raise ParseError(f"record move {data['move']!r} is marked forfeit but is not a pass")
        clock = data.get("clock")
        return cls(parsed, float(data.get("seconds", 0.0)), [str(c) for c in data.get("comments", [])], forfeit,
                   None if clock is None else float(clock))


def result_to_dict(result: Result) -> dict[str, Any]:
    """A result as ``game.json`` holds it: ``{"winner": "W", "reason": "normal", "discs": {"W": 40, "B": 24}}``."""
    data: dict[str, Any] = {
        "winner": result.winner.value if result.winner else None,
        "reason": result.termination.value,
        "discs": {"W": result.white_discs, "B": result.black_discs},
    }
    if result.detail:
        data["detail"] = result.detail
    if result.move_number is not None:
        data["move_number"] = result.move_number
    return data


def result_from_dict(data: dict[str, Any]) -> Result:
    """Read what :func:`result_to_dict` wrote (an unknown reason raises ``ValueError``)."""
    winner = data.get("winner")
    discs = data.get("discs", {})
    return Result(
        Colour(winner) if winner else None,
        Termination.parse(str(data["reason"])),
        int(discs.get("W", 0)),
        int(discs.get("B", 0)),
        str(data.get("detail", "")),
        int(data["move_number"]) if data.get("move_number") is not None else None,
    )


@dataclass
class FaultyMove:
    """The answer that ended the game by a fault, kept as the agent wrote it (``game.json``'s ``fault``).

    It is not one of the record's ``moves`` (every reader of ``moves``
    replays legal moves only): it is the move after them, number
    ``len(moves) + 1``, which the result names (``Result.move_number``).
    ``line`` is the agent's answer as written, its move line or the lines
    that were not one (``None`` when nothing was read: a timeout, a crash),
    ``seconds`` how long the side had thought when the referee judged it
    (``None`` when it was not its turn), ``comments`` its ``(C ...)`` lines.
    """

    colour: Colour
    line: Optional[str] = None
    seconds: Optional[float] = None
    comments: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.seconds = _kept(self.seconds)  # as MoveRecord's

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"colour": self.colour.value, "line": self.line, "seconds": self.seconds,
                                "comments": list(self.comments)}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "FaultyMove":
        try:
            colour = Colour(str(data["colour"]))
        except ValueError:
            raise ParseError(f"record fault has the colour {data['colour']!r} (expected W or B)") from None
        line = data.get("line")
        seconds = data.get("seconds")
        return cls(colour, None if line is None else str(line), None if seconds is None else float(seconds),
                   [str(c) for c in data.get("comments", [])])


@dataclass
class GameRecord:
    """A whole game, as kept in ``game.json``.

    The board's size is the size of ``start`` (:attr:`size`); a game on a
    bigger board keeps it in ``game.json`` as ``"size": 10``.  A game ended
    by a fault keeps the faulty answer apart from ``moves`` (:attr:`fault`).
    ``clock`` is the game clock, ``"300+2"`` (``None``: the per-move limit
    alone); an agent with a clock of its own (odds) has it in its entry under ``agents``.
    """

    white: str
    black: str
    seed: Optional[int] = None
    moves: list[MoveRecord] = field(default_factory=list)
    result: Optional[Result] = None
    time_per_move: Optional[float] = None
    start: Board = field(default_factory=Board)
    extra: dict[str, Any] = field(default_factory=dict)
    opening: list[Move] = field(default_factory=list)
    fault: Optional[FaultyMove] = None
    clock: Optional[str] = None

    @property
    def size(self) -> int:
        """The board's size: 8, or 10, 12, 14 (PROTOCOL.md section 9)."""
        return self.start.size

    # -- positions -----------------------------------------------------------

    def opening_board(self) -> Board:
        """The position the agents played from: ``start`` after the opening moves.

        Raises :class:`IllegalMoveError` if an opening move is illegal.
        """
        board = self.start
        for move in self.opening:
            board = board.play(move)
        return board

    def all_moves(self) -> list[Move]:
        """The whole game: the opening moves, then the moves the agents played."""
        return [*self.opening, *(entry.move for entry in self.moves)]

    def positions(self) -> Iterator[tuple[Board, Optional[MoveRecord]]]:
        """The position after the opening (the start position if none), then the position after each move with that move."""
        board = self.opening_board()
        yield board, None
        for entry in self.moves:
            if entry.forfeit and entry.move.colour is board.to_move:
                board = board.play_unchecked(entry.move)  # a lost turn: a pass the rules would refuse
            else:
                board = board.play(entry.move)
            yield board, entry

    def final_board(self) -> Board:
        board = self.start
        for board, _ in self.positions():
            pass
        return board

    def name(self, colour: Colour) -> str:
        return self.white if colour is WHITE else self.black

    # -- JSON ------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "version": RECORD_VERSION,
            "white": self.white,
            "black": self.black,
            "seed": self.seed,
            "time_per_move": self.time_per_move,
            "moves": [m.to_dict() for m in self.moves],
            "result": result_to_dict(self.result) if self.result else None,
        }
        if self.size != DEFAULT_SIZE:
            data["size"] = self.size
        if self.start != Board.start(self.size):
            data["start"] = format_obf(self.start)
        if self.opening:
            data["opening"] = [move.line() for move in self.opening]
        if self.fault is not None:
            data["fault"] = self.fault.to_dict()
        if self.clock is not None:
            data["clock"] = self.clock
        data.update(self.extra)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "GameRecord":
        known = {"version", "white", "black", "seed", "time_per_move", "moves", "result", "start", "opening", "size", "fault",
                 "clock"}
        try:
            try:
                size = check_size(data.get("size", DEFAULT_SIZE))
            except ValueError as exc:
                raise ParseError(f"game record: {exc}") from None
            start = Board.start(size)
            if data.get("start"):
                start = parse_obf(data["start"], size)
            record = cls(
                white=str(data["white"]),
                black=str(data["black"]),
                seed=data.get("seed"),
                moves=[MoveRecord.from_dict(m, size) for m in data.get("moves", [])],
                result=result_from_dict(data["result"]) if data.get("result") else None,
                time_per_move=data.get("time_per_move"),
                start=start,
                extra={k: v for k, v in data.items() if k not in known},
                opening=[_opening_move(str(line), size) for line in data.get("opening", [])],
                fault=FaultyMove.from_dict(data["fault"]) if data.get("fault") else None,
                clock=None if data.get("clock") is None else str(data["clock"]),
            )
        except KeyError as exc:
            raise ParseError(f"game record is missing the field {exc.args[0]!r}") from None
        except (TypeError, AttributeError) as exc:
            raise ParseError(f"game record has a field of the wrong type: {exc}") from None
        return record

    @classmethod
    def from_json(cls, text: str) -> "GameRecord":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(f"game record is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ParseError("game record must be a JSON object")
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str) -> "GameRecord":
        with open(path, encoding="utf-8") as handle:
            try:
                return cls.from_json(handle.read())
            except ParseError as exc:
                raise ParseError(f"{path}: {exc}") from None

    # -- transcript and GGF ------------------------------------------------------

    def transcript(self) -> str:
        """Compact transcript (``d3c3...``) of the whole game, opening included; identical in the standard orientation."""
        return format_transcript(self.all_moves())

    def to_ggf(self) -> str:
        """The game in GGF, standard orientation (our White is GGF's Black)."""
        parts = ["(;GM[Othello]PC[Othello Arena]"]
        parts.append(f"PB[{_ggf_text(self.white)}]PW[{_ggf_text(self.black)}]")
        if self.time_per_move:
            parts.append(f"TI[{self.time_per_move:g}]")
        parts.append(f"TY[{self.size}]")
        if self.result is not None:
            # GGF's result follows the standard convention: empty squares count
            # for the winner (a 13-0 wipe-out is +64); our Result keeps the
            # referee's disc counts.
            diff = self.result.white_discs - self.result.black_discs
            cells = self.size * self.size
            empties = cells - self.result.white_discs - self.result.black_discs
            diff += empties if diff > 0 else -empties if diff < 0 else 0
            # GGF knows a normal end, a loss on time (:t) and a resignation (:r): every forfeit is the last.
            how = self.result.termination
            suffix = "" if how is Termination.NORMAL else ":t" if how is Termination.TIMEOUT else ":r"
            if how.is_forfeit:
                diff = cells if self.result.winner is WHITE else -cells if self.result.winner is BLACK else 0
            parts.append(f"RE[{diff:+d}.000{suffix}]")
        parts.append(f"BO[{self.size} {_ggf_board(self.start)}]")
        # GGF has no opening of its own: the opening moves are the game's first moves, with no time.
        for entry in [*(MoveRecord(move) for move in self.opening), *self.moves]:
            tag = "B" if entry.move.colour is WHITE else "W"
            where = "PA" if entry.move.square is None else square_name(entry.move.square, self.size).lower()
            parts.append(f"{tag}[{where}//{entry.seconds:.2f}]")
        parts.append(";)")
        return "".join(parts)

    @classmethod
    def from_ggf(cls, text: str) -> "GameRecord":
        """Read a GGF game back (our colour names: GGF's Black is our White)."""
        body = text.strip()
        if not body.startswith("(;") or not body.endswith(";)"):
            raise ParseError(f"not a GGF game (expected '(;' ... ';)'): {text[:60]!r}")
        props = re.findall(r"([A-Z]{1,2})\[([^\]]*)\]", body)
        white = black = "?"
        time_per_move = None
        start = Board()
        moves: list[MoveRecord] = []
        board = start
        for key, value in props:
            if key == "PB":
                white = value
            elif key == "PW":
                black = value
            elif key == "TI":
                try:
                    time_per_move = float(value.split("/")[0])
                except ValueError:
                    time_per_move = None
            elif key == "BO":
                start = _parse_ggf_board(value)
                board = start
            elif key in ("B", "W"):
                colour = WHITE if key == "B" else BLACK
                fields = value.split("/")
                where = fields[0].strip().upper()
                seconds = float(fields[2]) if len(fields) > 2 and fields[2] else 0.0
                square = None if where in ("PA", "PASS") else parse_square(where, board.size)
                move = Move(colour, square, board.size)
                try:
                    board = board.play(move)
                except IllegalMoveError as exc:
                    raise ParseError(f"GGF game has an illegal move {key}[{value}]: {exc}") from None
                moves.append(MoveRecord(move, seconds))
        record = cls(white, black, moves=moves, time_per_move=time_per_move, start=start)
        record.result = board.outcome()
        return record


def _opening_move(line: str, size: int) -> Move:
    parsed = parse_line(line, size)
    if isinstance(parsed, Comment):
        raise ParseError(f"record opening move {line!r} is a comment, not a move")
    return parsed


def _ggf_text(text: str) -> str:
    return text.replace("]", ")").replace("[", "(")


def _ggf_board(board: Board) -> str:
    # GGF rows run from the top, labelled 1..8 there; labels are kept, so
    # GGF's first row is our row 1 (likewise 1..n on an n x n board).
    return format_cells(board, "*", "O", "-") + " " + ("*" if board.to_move is WHITE else "O")


def _parse_ggf_board(value: str) -> Board:
    fields = value.split()
    try:
        size = check_size(int(fields[0])) if len(fields) >= 2 and fields[0].isdigit() else 0
    except ValueError:
        size = 0
    if not size:
        raise ParseError(f"unsupported GGF board {value!r} (the size must be 8, 10, 12 or 14)")
    cells = "".join(fields[1:-1]) if len(fields) > 2 else fields[1]
    side = fields[-1]
    if len(cells) != size * size:
        raise ParseError(f"GGF board {value!r} must have {size * size} cells")
    return parse_cells(cells, "*", "O", WHITE if side == "*" else BLACK, size)
