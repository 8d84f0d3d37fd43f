"""``othello play A B``: one game between two agents, shown move by move."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Optional

import click

from .config import ILLEGAL_RULES, GameConfig
from .display import Display, summary
from .game import play_game
from .process import sigterm_as_interrupt
from .spec import AgentSpec, draw_colours, prepare_builtins

EXIT_NOT_STARTED = 3  # an agent could not be started


def _spec(ctx: click.Context, param: click.Parameter, value: str) -> AgentSpec:
    try:
        return AgentSpec.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


@click.command()
@click.argument("agent_a", metavar="A", callback=_spec)
@click.argument("agent_b", metavar="B", callback=_spec)
@click.option("--time", "time_per_move", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds of wall-clock time per move.")
@click.option("--startup-time", type=click.FloatRange(min=0), default=GameConfig.startup_time, show_default=True,
              help="Extra seconds on each agent's first move, to start up.")
@click.option("--seed", type=int, default=None, help="Seed of the colour draw (default: a random one, kept in game.json).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Game directory: the agents' directories and game.json (default: games/<time>-A-B).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the result line.")
@click.option("--json", "as_json", is_flag=True, help="Print only game.json on standard output.")
@click.option("--illegal", type=click.Choice(ILLEGAL_RULES), default="lose", show_default=True,
              help="An illegal move loses the game, or only the turn (seed 003's other rule).")
@click.option("--manual-time", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds per move for a person (manual:NAME); default: no limit.")
@click.option("--memory", "memory_mb", type=click.IntRange(min=0), default=GameConfig.memory_mb, show_default=True,
              help="Address-space limit per agent process, in MiB (0: none).")
@click.option("--processes", "max_processes", type=click.IntRange(min=0), default=GameConfig.max_processes,
              show_default=True, help="Most processes an agent may run at once (0: no limit).")
@click.option("--suspend/--no-suspend", default=False, show_default=True,
              help="Stop the waiting agent (SIGSTOP) while the other thinks; also catches an agent that "
                   "touches the other's files.")
@click.option("--polling", is_flag=True, help="Poll the files instead of using file events (e.g. on NFS).")
def play(
    agent_a: AgentSpec,
    agent_b: AgentSpec,
    time_per_move: float,
    startup_time: float,
    seed: Optional[int],
    out_dir: Optional[Path],
    quiet: bool,
    as_json: bool,
    illegal: str,
    manual_time: Optional[float],
    memory_mb: int,
    max_processes: int,
    suspend: bool,
    polling: bool,
) -> None:
    """Play one game between A and B; colours are drawn at random.

    A and B are each a built-in agent (random, ...), NAME=COMMAND for any
    program (alice="python3 alice.py --name {name}"; {name}, {dir} and
    {time} are replaced), or manual:NAME for a person who plays by writing
    NAME.out in a text editor.  Exits 0 when the game is played, whatever its
    result; 3 if an agent could not be started.
    """
    prepare_builtins([agent_a, agent_b], lambda line: click.echo(line, err=True))  # before any clock runs
    white, black, seed = draw_colours(agent_a, agent_b, seed)
    if out_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        out_dir = Path("games") / f"{stamp}-{agent_a.file_name}-{agent_b.file_name}"
    config = GameConfig(
        time_per_move=time_per_move,
        startup_time=startup_time,
        manual_time=manual_time,
        illegal=illegal,
        memory_mb=memory_mb,
        max_processes=max_processes,
        suspend_waiting=suspend,
        polling=polling,
    )
    display = Display(file=sys.stderr if as_json else None, quiet=quiet or as_json, prompts=sys.stderr)
    if not (quiet or as_json):
        click.echo(f"{white.label} (W) vs {black.label} (B), seed {seed}, {time_per_move:g} s per move; files in {out_dir}")
    try:
        with sigterm_as_interrupt():
            record = play_game(white, black, config, out_dir, seed=seed, on_event=display)
    except OSError as exc:  # the game directory itself: not an agent's fault
        raise click.ClickException(f"cannot play in {out_dir}: {exc}") from None
    except KeyboardInterrupt:
        click.echo(f"interrupted: the game was not finished; its agents were stopped (files in {out_dir})", err=True)
        sys.exit(130)
    if as_json:
        click.echo(json.dumps(record.to_dict(), indent=2))
    else:
        click.echo(summary(record))
    not_started = [label for label, info in record.extra.get("agents", {}).items() if info.get("start_error")]
    if not_started:
        for label in not_started:
            click.echo(f"error: {record.extra['agents'][label]['start_error']}", err=True)
        sys.exit(EXIT_NOT_STARTED)
