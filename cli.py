"""The ``othello`` command: one click group, one module per family of subcommands.

Subcommands are imported only when used, so ``othello perft`` does not pay
for loading the tournament runner or the compiled engine.
"""

from __future__ import annotations

import importlib

import click

# name -> "module:attribute", relative to this package
SUBCOMMANDS = {
    "perft": "protocol.cli:perft",
    "show": "protocol.cli:show",
    "replay": "referee.cli:replay",
    "play": "referee.cli:play",
    "doctor": "referee.cli:doctor",
    "agent": "agents.cli:agent",
    "check": "agents.cli:check",
    "bridge": "agents.cli:bridge",
    "analyze": "agents.champion.cli:analyze",
    "train": "agents.champion.cli:train",
    "tournament": "tournaments.cli:tournament",
    "match": "tournaments.match.cli:match",
    "openings": "tournaments.schedule.suite:openings",
    "serve": "web.cli:serve",
    "class": "classroom.cli:class_group",
}


class LazyGroup(click.Group):
    """A group whose subcommands are loaded from :data:`SUBCOMMANDS` on demand."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in SUBCOMMANDS if self._load(name) is not None)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self._load(cmd_name)

    @staticmethod
    def _load(name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        try:
            module = importlib.import_module(f"{__package__}.{module_name}")
        except ModuleNotFoundError as exc:
            # A family not built yet is simply absent; any other missing
            # module is a real error and must surface.
            if exc.name and exc.name.startswith(f"{__package__}."):
                return None
            raise
        return getattr(module, attribute, None)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="othello-arena", prog_name="othello")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Othello Arena: play Othello between programs that talk through files."""
    from .agents.registry import builtin_agents

    # The context object every subcommand finds: the built-in agents, which the
    # referee runs by name but may not import (it is the layer below the agents).
    ctx.obj = builtin_agents()
