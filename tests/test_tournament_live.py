"""What the terminal says while and after games play: the games in progress, and result lines that read right."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rich.console import Console

from othello_arena.tournaments.schedule import config
from othello_arena.tournaments.run.display import in_progress_table
from othello_arena.tournaments.run.runner import Runner
from othello_arena.protocol import BLACK, WHITE, Result, Termination
from tournament_helpers import agent, write_tournament


def test_the_live_display_names_the_games_in_progress_with_move_and_clocks(tmp_path: Path) -> None:
    agents = [agent("slowpoke", "first", "--delay 0.05"), agent("snail", "last", "--delay 0.05")]
    tournament = config.load(write_tournament(tmp_path, agents, concurrency=2))
    runner = Runner(tournament)
    seen: list[dict] = []
    tables = []

    def watch() -> None:
        # Reads only what the display reads (no database: that belongs to the runner's thread).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            games = [dict(g) for g in list(runner.in_progress.values())]
            if len(games) == 2 and all(g["ply"] >= 4 for g in games):
                seen.extend(games)
                tables.append(in_progress_table(runner))
                break
            time.sleep(0.02)
        runner.request_stop()

    try:
        runner.prepare()
        watcher = threading.Thread(target=watch)
        watcher.start()
        runner.run()
        watcher.join(60)
        assert seen, "no two games in progress seen"
        assert {(g["white"], g["black"]) for g in seen} == {("slowpoke", "snail"), ("snail", "slowpoke")}
        assert all(g["clocks"]["W"] > 0 and g["clocks"]["B"] > 0 for g in seen)
        console = Console(record=True, width=120)
        console.print(tables[0])
        text = console.export_text()
        assert "In progress" in text and "slowpoke" in text and "snail" in text
        assert "move" in text and "White's clock" in text
        assert not runner.in_progress  # nothing listed once the games are over
    finally:
        runner.close()


def test_result_lines_say_the_reason_before_the_discs() -> None:
    assert Result(WHITE, Termination.NORMAL, 40, 24).summary() == "1-0 White wins 40-24"
    assert Result(BLACK, Termination.TIMEOUT, 13, 36).summary() == "0-1 White loses on time (13-36 on the board)"
    assert Result(WHITE, Termination.CRASH, 3, 2).summary() == "1-0 Black loses: its program crashed (3-2 on the board)"
    assert Result(WHITE, Termination.BUILD, 2, 2).summary() == "1-0 Black loses: its build failed"
    assert Result(None, Termination.NORMAL, 32, 32).summary() == "1/2-1/2 Draw 32-32"
    assert Result(None, Termination.BUILD, 2, 2).summary() == "1/2-1/2 Draw: neither build succeeded"
    assert Result(BLACK, Termination.ILLEGAL, 30, 20).summary("alice", "bob") == (
        "0-1 alice loses by an illegal move (30-20 on the board)")
