"""``othello class ...``: init, serve, submit, final, export (one click group; each command loads what it needs)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import click


@click.group(name="class")
def class_group() -> None:
    """A class server: students submit versions, each is checked in the sandbox and plays a ladder.

    \b
    othello class init DIR --roster ROSTER.csv      the class folder, a token per student
    othello class serve DIR                         the web API, the admission worker and the ladder
    othello class submit URL --token T --command C  send a version from a terminal
    othello class final DIR                         the final tournament on each student's last version
    othello class export DIR -o grades.csv          the grade sheet
    """


@class_group.command()
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--roster", required=True, type=click.Path(dir_okay=False, exists=True),
              help="CSV with a header holding id and name (more columns kept).")
@click.option("--time", "time_per_move", type=click.FloatRange(0.01, 600), default=None,
              help="Seconds per move in checks and games (default 1; written into a new class.toml).")
def init(folder: str, roster: str, time_per_move: Optional[float]) -> None:
    """Make the class folder FOLDER (or add the roster's new students to it)."""
    from .roster import RosterError, init_class
    from .settings import SettingsError

    try:
        report = init_class(Path(folder), Path(roster), time_per_move)
    except (RosterError, SettingsError) as exc:
        raise click.ClickException(str(exc)) from None
    for line in report.lines:
        click.echo(line)
