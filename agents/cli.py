"""``othello agent``, ``othello check`` and ``othello bridge``: the agents' commands."""

from __future__ import annotations

import sys
from typing import Optional

import click


@click.command()
@click.argument("agent")
@click.option("--name", "file_name", envvar="OTHELLO_NAME", default=None,
              help="File name: the agent uses NAME.in and NAME.out (default: $OTHELLO_NAME, else AGENT).")
@click.option("--dir", "directory", envvar="OTHELLO_DIR", default=".", show_default=True,
              type=click.Path(file_okay=False, exists=True),
              help="Directory of the two files (default: $OTHELLO_DIR, else the current one).")
@click.option("--time", "time_per_move", envvar="OTHELLO_TIME", default=None, type=click.FloatRange(min=0, min_open=True),
              help="Seconds per move (default: $OTHELLO_TIME, else 60).")
def agent(agent: str, file_name: Optional[str], directory: str, time_per_move: Optional[float]) -> None:
    """Run the built-in agent AGENT as a file-protocol program.

    It plays one game through NAME.in and NAME.out exactly as a student's
    program would, then exits.  Example: `othello agent greedy --name bob`.
    """
    from .registry import get_strategy, names
    from .runtime import run_agent

    try:
        strategy = get_strategy(agent)
    except KeyError:
        raise click.BadParameter(f"no built-in agent {agent!r}; known agents: {', '.join(names())}",
                                 param_hint="AGENT") from None
    sys.exit(run_agent(strategy, file_name or agent, directory, time_per_move))


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("protocol", type=click.Choice(["gtp"]))
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--name", "file_name", envvar="OTHELLO_NAME", default="engine", show_default=True,
              help="File name: the agent uses NAME.in and NAME.out (default: $OTHELLO_NAME).")
@click.option("--dir", "directory", envvar="OTHELLO_DIR", default=".", type=click.Path(file_okay=False, exists=True),
              help="Directory of the two files (default: $OTHELLO_DIR, else the current one).")
@click.option("--time", "time_per_move", envvar="OTHELLO_TIME", default=None, type=click.FloatRange(min=0, min_open=True),
              help="Seconds per move (default: $OTHELLO_TIME, else 60).")
def bridge(protocol: str, command: tuple[str, ...], file_name: str, directory: str,
           time_per_move: Optional[float]) -> None:
    """Run an engine that speaks PROTOCOL (gtp) as a file-protocol agent.

    Example, as a player of `othello play`:

        othello play random "rhino=othello bridge gtp --name {name} -- /usr/games/gtp-rhino -l 2"

    The engine's colours and coordinates are mapped for it (standard
    orientation: same square labels, colour names swapped).
    """
    from .bridge import GTPError, run_gtp_bridge

    try:
        code = run_gtp_bridge(list(command), file_name, directory, time_per_move)
    except GTPError as exc:
        click.echo(f"othello bridge: {exc}", err=True)
        code = 1
    sys.exit(code)
