"""A game's live log: each event a whole line, readable while the game goes on, no descriptor kept after its end."""

from __future__ import annotations

import os
from pathlib import Path

from othello_arena.protocol import BLACK, WHITE, Board, GameRecord, Result, Termination
from othello_arena.referee.game import GameEvent
from othello_arena.tournaments.run.livelog import LiveLogWriter, read_live_log


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_the_log_is_read_while_written_and_closed_at_the_end(tmp_path: Path) -> None:
    board = Board.start()
    move = board.legal_moves()[0]
    before = open_descriptors()
    writer = LiveLogWriter(tmp_path)
    writer(GameEvent("start", board, names={WHITE: "a", BLACK: "b"}))
    writer(GameEvent("waiting", board, colour=board.to_move, time_limit=5.0))
    writer(GameEvent("relayed", board, move=move, colour=BLACK))  # not a line of the log
    assert [entry["event"] for entry in read_live_log(tmp_path)] == ["start", "waiting"]  # the game goes on
    record = GameRecord("a", "b", result=Result(WHITE, Termination.NORMAL, 40, 24))
    writer(GameEvent("end", board, record=record))
    assert [entry["event"] for entry in read_live_log(tmp_path)] == ["start", "waiting", "end"]
    assert open_descriptors() == before  # nothing held once the game has ended
    writer(GameEvent("waiting", board, colour=WHITE, time_limit=5.0))  # (an event after the end: opened again)
    assert len(read_live_log(tmp_path)) == 4
    del writer
    assert open_descriptors() == before
