"""What the terminal shows while games play.

On a terminal: a progress bar, the games in progress (who plays whom, the
move, each side's clock) and the running standings, redrawn in place (rich).
Elsewhere (a log file, a CI job): one line per game, the result's reason
before the discs::

    Started game 3 of 20 (alice vs bob)
    Finished game 3 (alice vs bob): 1-0 White wins 40-24
    Finished game 4 (bob vs carol): 0-1 White loses on time (13-36 on the board)
"""

from __future__ import annotations

import time
from typing import Any, Optional

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from ..results.standings import Standings
from .runner import Runner, ScheduleEvent, ScheduleEventKind

def result_text(event: ScheduleEvent) -> str:
    """``1-0 White wins 40-24``, ``0-1 White loses on time (13-36 on the board)``."""
    outcome = event.outcome
    assert outcome is not None
    words = outcome.result.summary()
    if outcome.load_flag:
        words += f" [timeout under load? {outcome.load_flag}]"
    return words


def in_progress_table(runner: Runner, now: Optional[float] = None) -> Optional[Table]:
    """The games being played: number, White, Black, move, both clocks (the side to move's still running)."""
    games = sorted(list(runner.in_progress.values()), key=lambda g: g["number"])
    if not games:
        return None
    now = time.monotonic() if now is None else now
    table = Table(title="In progress", title_justify="left", expand=False)
    for name, justify in (("game", "right"), ("White", "left"), ("Black", "left"), ("move", "right"),
                          ("White's clock", "right"), ("Black's clock", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for game in games:
        if not game["live"]:  # on a Dask worker: only who, and since when
            table.add_row(str(game["number"]), game["white"], game["black"], "-",
                          f"{now - game['started']:.0f} s in play", "")
            continue
        clocks = dict(game["clocks"])
        clocks[game["to_move"]] = clocks.get(game["to_move"], 0.0) + max(0.0, now - game["since"])
        marks = {colour: " <" if colour == game["to_move"] else "" for colour in ("W", "B")}
        table.add_row(str(game["number"]), game["white"], game["black"], str(game["ply"] + 1),
                      f"{clocks.get('W', 0.0):.1f} s{marks['W']}", f"{clocks.get('B', 0.0):.1f} s{marks['B']}")
    return table


class LineDisplay:
    """One line per game started and finished."""

    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self.total = total

    def __call__(self, event: ScheduleEvent, runner: Runner) -> None:
        game = event.game
        if event.kind is ScheduleEventKind.STARTED:
            self.console.print(f"Started game {event.number} of {self.total} ({game.white} vs {game.black})", highlight=False)
        elif event.kind is ScheduleEventKind.FAILED:
            self.console.print(f"Game {event.number} ({game.white} vs {game.black}) could not be played: {event.error}; "
                               "resume will play it", highlight=False)
        else:
            self.console.print(
                f"Finished game {event.number} ({game.white} vs {game.black}): {result_text(event)}", highlight=False
            )

    def __enter__(self) -> "LineDisplay":
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def standings_table(standings: Standings, limit: int = 20, title: str = "Standings") -> Table:
    """The standings as a rich table (the first ``limit`` lines)."""
    table = Table(title=title, title_justify="left", expand=False)
    for name, justify in (("#", "right"), ("agent", "left"), ("games", "right"), ("points", "right"),
                          ("W-D-L", "center"), ("discs", "right"), ("Elo (95%)", "right"), ("forfeits", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for line in standings.lines[:limit]:
        forfeits = ", ".join(f"{v} {k}" for k, v in line.forfeits.items() if v) or ""
        table.add_row(
            str(line.rank), line.agent, str(line.games), f"{line.points:g}",
            f"{line.wins}-{line.draws}-{line.losses}", f"{line.disc_difference:+d}",
            f"{line.elo:.0f} ± {line.elo_error:.0f}", forfeits,
        )
    if len(standings.lines) > limit:
        table.caption = f"... and {len(standings.lines) - limit} more"
    return table


class LiveDisplay:
    """A progress bar and the running standings, redrawn in place."""

    def __init__(self, console: Console, total: int, finished: int) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]games"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[running]} running"),
            TimeElapsedColumn(), TimeRemainingColumn(), console=console,
        )
        self.task = self.progress.add_task("games", total=total, completed=finished, running=0)
        self.running = 0
        self.table: Optional[Table] = None
        self.last_table = 0.0
        self.runner: Optional[Runner] = None
        # get_renderable: redrawn at every refresh, so the clocks of the games in progress tick.
        self.live = Live(console=console, refresh_per_second=4, transient=False, get_renderable=self._render)

    def _render(self) -> Group:
        parts: list[Any] = [self.progress]
        playing = in_progress_table(self.runner) if self.runner is not None else None
        if playing is not None:
            parts.append(playing)
        if self.table is not None:
            parts.append(self.table)
        return Group(*parts)

    def __call__(self, event: ScheduleEvent, runner: Runner) -> None:
        game = event.game
        self.runner = runner
        if event.kind is ScheduleEventKind.STARTED:
            self.running += 1
        elif event.kind is ScheduleEventKind.FAILED:
            self.running -= 1
            self.live.console.print(f"Game {event.number} ({game.white} vs {game.black}) could not be played: "
                                    f"{event.error}; resume will play it", highlight=False)
        else:
            self.running -= 1
            self.progress.advance(self.task)
            self.live.console.print(
                f"Finished game {event.number} ({game.white} vs {game.black}): {result_text(event)}", highlight=False
            )
            now = time.monotonic()
            if now - self.last_table > 1.0:
                self.table = standings_table(runner.standings(), title="Running standings")
                self.last_table = now
        self.progress.update(self.task, running=self.running)
        self.live.refresh()

    def __enter__(self) -> "LiveDisplay":
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(None, None, None)
