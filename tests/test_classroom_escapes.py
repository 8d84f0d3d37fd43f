"""Logs a terminal can show: a program's escapes, carriage returns and bidi controls kept as visible text."""

from __future__ import annotations

import io
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from othello_arena.classroom.arena import play_job
from othello_arena.classroom.escapes import make_log_visible, make_loggers_visible, make_logs_visible, visible
from othello_arena.classroom.ladder import Ladder
from othello_arena.classroom.store import Card, NewVersion, VersionStatus

# What a hostile build or agent writes: a window title, a screen clear, a line overwritten, text reversed.
HOSTILE = "ok\n\x1b]0;pwned\x07\x1b[2Jcleared\rover\u202ereversed\x9b31m\x7f\ttab\r\nend\n"


def test_every_escape_is_made_visible_and_nothing_is_lost() -> None:
    shown = visible(HOSTILE)
    assert shown == ("ok\n\\x1b]0;pwned\\x07\\x1b[2Jcleared\\x0dover\\u202ereversed\\x9b31m\\x7f\ttab\nend\n")
    assert all(ch in "\n\t" or (" " <= ch < "\x7f") for ch in shown)
    assert visible("plain text, é, программа\n\tindented\n") == "plain text, é, программа\n\tindented\n"


def test_a_log_file_is_rewritten_in_place_keeping_its_mode(tmp_path: Path) -> None:
    log = tmp_path / "alice.build.log"
    log.write_bytes(HOSTILE.encode("utf-8") + b"\xff not utf-8\n")
    os.chmod(log, 0o640)
    make_log_visible(log)
    data = log.read_bytes()
    assert b"\x1b" not in data and b"\r" not in data and "\u202e".encode() not in data
    assert b"\\x1b]0;pwned" in data and b"\\xff not utf-8" in data
    assert os.stat(log).st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["alice.build.log"]  # no temporary file left
    make_log_visible(tmp_path / "missing.log")  # a build that wrote nothing: no fault


def test_a_games_stderr_logs_are_made_visible(tmp_path: Path) -> None:
    game = tmp_path / "000007"
    (game / "alice").mkdir(parents=True)
    (game / "alice.stderr.log").write_text("\x1b[31mred\n", encoding="utf-8")
    (game / "bob.stderr.log").write_text("calm\n", encoding="utf-8")
    (game / "game.json").write_text('{"x": "\\u001b"}', encoding="utf-8")
    make_logs_visible(game)
    assert (game / "alice.stderr.log").read_text(encoding="utf-8") == "\\x1b[31mred\n"
    assert (game / "bob.stderr.log").read_text(encoding="utf-8") == "calm\n"
    assert (game / "game.json").read_text(encoding="utf-8") == '{"x": "\\u001b"}'  # JSON escapes its own


def test_the_servers_own_log_lines_quote_a_student_visibly() -> None:
    """uvicorn's loggers, as the server sets them: a message and a traceback that quote a student's text."""
    logger = logging.getLogger("test.classroom.escapes")
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    logger.addHandler(handler)
    try:
        make_loggers_visible("test.classroom.escapes")
        make_loggers_visible("test.classroom.escapes")  # once is enough: not wrapped twice
        logger.error("admission of %s failed", "agent\x1b]0;pwned\x07.py")
        try:
            raise ValueError("bad name \u202eyp.c")
        except ValueError:
            logger.exception("ladder")
    finally:
        logger.removeHandler(handler)
    text = written.getvalue()
    assert text.startswith("ERROR: admission of agent\\x1b]0;pwned\\x07.py failed\n")
    assert "ValueError: bad name \\u202eyp.c" in text and "\x1b" not in text and "\u202e" not in text


@pytest.mark.slow
def test_a_ladder_games_stderr_is_kept_with_its_escapes_visible(class_store: Any) -> None:
    """A real game in the sandbox: the agent's stderr, in the game's folder and in the database, acts on no terminal."""
    settings, store = class_store(["alice"], ["random"])
    home = settings.folder / "builds" / "alice" / "fpa"
    home.mkdir(parents=True)
    (home / "agent.py").write_text('import sys\nsys.stderr.write("hi \\x1b]0;pwned\\x07\\x1b[2J\\r\\u202eover\\n")\n'
                                   "sys.exit(3)\n", encoding="utf-8")
    version, _ = store.add_version(NewVersion("alice", "fpa", "python3 agent.py {name}", "", False, False, ()),
                                   check_again=lambda _: False)
    store.decide(Card("alice", version.id, "fpa", VersionStatus.ADMITTED, ""))
    ladder = Ladder(settings, store)
    assert ladder.plan() is not None
    game = ladder.next_queued(set())
    assert game is not None
    store.start_game(game.id)
    played = play_job(ladder.job(game, remote=False))
    ladder.record(game.id, played)
    expected = "hi \\x1b]0;pwned\\x07\\x1b[2J\\x0d\\u202eover\n"
    row = store.game(game.id)
    assert row is not None and row.stderr_of("alice") == expected
    assert (Path(played.game_dir) / "alice.stderr.log").read_text(encoding="utf-8") == expected
