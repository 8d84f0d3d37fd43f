"""One game as the browser draws it: every position, the last move and its flips, the clocks, what is legal.

Two sources give the same view: a game's live log (:mod:`..tournaments.run.livelog`,
a game still being played, here or by a tournament runner in another process)
and a finished game's record.  The positions are computed here by the rules
core; the page only draws them, so the rules of Othello stay in one place.
"""

from __future__ import annotations

import time
from typing import Any, Optional

from ..protocol import (
    BLACK,
    WHITE,
    Board,
    GameRecord,
    IllegalMoveError,
    Move,
    ParseError,
    parse_move,
    parse_obf,
    square_name,
)
from ..protocol.notation import format_obf
from ..protocol.rules import COLUMN_LETTERS
from ..protocol.record import result_from_dict, result_to_dict


def cells(board: Board) -> str:
    """The board as 64 characters (n*n on a bigger board), square A1 first: ``W``, ``B`` or ``.``."""
    return "".join("W" if board.at(sq) is WHITE else "B" if board.at(sq) is BLACK else "."
                   for sq in range(board.size * board.size))


def entries_from_record(record: GameRecord) -> list[dict[str, Any]]:
    """A finished game's record as the live-log entries that would have led to it."""
    start: dict[str, Any] = {"event": "start", "white": record.white, "black": record.black,
                             "board": format_obf(record.opening_board())}
    if record.size != 8:
        start["size"] = record.size
    entries: list[dict[str, Any]] = [start]
    clocks = {"W": 0.0, "B": 0.0}
    banks: dict[str, Optional[float]] = {"W": None, "B": None}  # under a game clock: each side's bank
    for entry in record.moves:
        colour = entry.move.colour.value
        clocks[colour] += entry.seconds
        banks[colour] = entry.clock
        move = {"event": "move", "colour": colour, "move": entry.move.line(), "seconds": entry.seconds,
                "comments": entry.comments[:5], "clocks": dict(clocks), "forfeit": entry.forfeit}
        if record.clock is not None:
            move["banks"] = dict(banks)
        entries.append(move)
    if record.result is not None:
        end: dict[str, Any] = {"event": "end", "result": result_to_dict(record.result)}
        if record.fault is not None:
            end["fault"] = record.fault.to_dict()
        entries.append(end)
    return entries


def _banks(entry: dict[str, Any], before: dict[str, Optional[float]]) -> dict[str, Optional[float]]:
    """The banks an entry gives (a log is data: anything but a number is no bank), else those ``before``."""
    given = entry.get("banks")
    if not isinstance(given, dict):
        return before
    return {c: float(given[c]) if isinstance(given.get(c), (int, float)) else None for c in ("W", "B")}


def game_view(entries: list[dict[str, Any]], white: str = "", black: str = "") -> dict[str, Any]:
    """What the board page needs from a game's entries (see :mod:`..tournaments.run.livelog`).

    ``plies[0]`` is the position the game starts from; each later ply has the
    move (``square`` ``None`` for a pass), the discs it flipped, its seconds
    and comment lines, and both clocks after it; under a game clock
    ``banks`` what is left of each side's bank (``None``: no clock for that
    side), which the page counts down.  ``to_move``, ``since``
    (wall clock) and ``time_limit`` say whose clock runs; ``legal`` the
    squares the side to move may play, empty when it must pass; ``size``
    the board's (a start entry of a bigger board says it).  An entry
    the rules refuse ends the replay there (``problem`` says why): a log is
    data, never trusted to be right.
    """
    board = Board()
    view: dict[str, Any] = {"white": white, "black": black, "plies": [], "to_move": None, "since": None,
                            "time_limit": None, "manual": False, "legal": [], "result": None, "result_text": "",
                            "retry": "", "problem": "", "clocks": {"W": 0.0, "B": 0.0},
                            "fault": None, "banks": {"W": None, "B": None}}
    started = False
    for entry in entries:
        kind = entry.get("event")
        try:
            if kind == "start":
                board = parse_obf(str(entry.get("board", "")), int(entry.get("size", 8)))
                view["white"] = str(entry.get("white") or white)
                view["black"] = str(entry.get("black") or black)
                view["plies"] = [{"cells": cells(board), "move": None, "square": None, "flips": []}]
                started = True
            elif kind == "move" and started:
                move = parse_move(str(entry["move"]), board.size)
                if entry.get("forfeit") and move.is_pass and move.colour is board.to_move:
                    after = board.play_unchecked(move)  # a lost turn: a pass the rules would refuse
                else:
                    after = board.play(move)
                flipped = [sq for sq in range(board.size ** 2) if board.at(sq) is not None and board.at(sq) is not after.at(sq)]
                clocks = entry.get("clocks") or {}
                view["clocks"] = {"W": float(clocks.get("W", 0.0)), "B": float(clocks.get("B", 0.0))}
                view["banks"] = _banks(entry, view["banks"])
                view["plies"].append({
                    "cells": cells(after), "move": move.line(), "colour": move.colour.value, "square": move.square,
                    "flips": flipped, "seconds": float(entry.get("seconds", 0.0)),
                    "comments": [str(c) for c in entry.get("comments", [])][:5], "forfeit": bool(entry.get("forfeit")),
                })
                board = after
                view["retry"] = ""
                view["to_move"], view["since"] = None, None
            elif kind == "waiting":
                view["to_move"] = entry.get("colour")
                view["since"] = entry.get("at")
                view["time_limit"] = entry.get("time_limit")
                view["manual"] = bool(entry.get("manual"))
                view["banks"] = _banks(entry, view["banks"])
            elif kind == "retry":
                view["retry"] = str(entry.get("message", ""))
            elif kind == "end":
                result = entry.get("result") or {}
                view["result_text"] = result_from_dict(result).summary()
                view["result"] = result
                view["fault"] = entry.get("fault")  # the faulty answer (a fault's detail and move number are in result)
                view["to_move"], view["since"] = None, None
        except (ParseError, IllegalMoveError, ValueError, KeyError, TypeError) as exc:
            view["problem"] = f"entry {entry!r} could not be replayed: {exc}"
            break
    if not view["plies"]:
        view["plies"] = [{"cells": cells(board), "move": None, "square": None, "flips": []}]
    view["score"] = {"W": board.count(WHITE), "B": board.count(BLACK)}
    view["size"] = board.size
    view["side_to_move"] = board.to_move.value if view["result"] is None else None
    if view["result"] is None and not view["problem"]:
        view["legal"] = [move.square for move in board.legal_moves() if move]
    view["now"] = time.time()
    return view


def board_of(view: dict[str, Any]) -> dict[str, Any]:
    """A view's last position as rows of squares, the top row first: the page's first paint (its script redraws it).

    ``n`` the board's size, ``cells`` its 64 characters (n*n), ``files`` the
    column letters; each row its ``rank`` and ``squares``, each with its
    ``name``, ``disc`` (``W``, ``B`` or ``.``) and CSS ``classes`` (the last
    move and its flips marked, as the script marks them).
    """
    last = view["plies"][-1]
    n = int(view["size"])
    flips = set(last.get("flips") or [])
    rows = []
    for rank in range(n, 0, -1):
        squares = []
        for column in range(n):
            sq = (rank - 1) * n + column
            classes = "sq" + (" last" if last.get("square") == sq else "") + (" flip" if sq in flips else "")
            squares.append({"name": square_name(sq, n), "disc": last["cells"][sq], "classes": classes})
        rows.append({"rank": rank, "squares": squares})
    return {"n": n, "rows": rows, "files": COLUMN_LETTERS[:n], "cells": last["cells"]}


def pass_move(colour: str, size: int = 8) -> Move:
    """The pass of ``colour`` (``"W"`` or ``"B"``)."""
    return Move.pass_(WHITE if colour == "W" else BLACK, size)


def square_move(colour: str, sq: Optional[int], size: int = 8) -> Move:
    """``colour``'s move on square ``sq`` (0-63, 0 to n*n-1 on a bigger board), or its pass for ``None``."""
    if sq is None:
        return pass_move(colour, size)
    last = size * size - 1
    if not (isinstance(sq, int) and not isinstance(sq, bool) and 0 <= sq <= last):
        raise ValueError(f"no square {sq!r}: expected 0-{last} (A1 is 0, {square_name(last, size)} is {last})")
    return Move(WHITE if colour == "W" else BLACK, sq, size)
