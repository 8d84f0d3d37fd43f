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
