"""The ``othello`` command: one click group, one module per family of subcommands.

Subcommands are imported only when used, so ``othello perft`` does not pay
for loading the tournament runner or the compiled engine; ``othello --help``
imports none of them: it reads each one's docstring from its source.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Optional

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
        # Its source there says a family is built without importing it; else (no sources shipped) it is loaded.
        return sorted(name for name in SUBCOMMANDS if _source(name).exists() or self._load(name) is not None)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self._load(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The table of subcommands as click prints it, without importing them (see :func:`_docstring`)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)  # click's own layout
        rows = []
        for name in names:
            docstring = _docstring(name)
            command = click.Command(name, help=docstring) if docstring is not None else self._load(name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

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


def _source(name: str) -> Path:
    """The file that defines the subcommand ``name``."""
    module_name = SUBCOMMANDS[name].split(":")[0]
    return Path(__file__).parent.joinpath(*module_name.split(".")).with_suffix(".py")


# What a command's decorator may say that changes its line in the table: such a command is imported instead.
_HELP_KEYWORDS = {"help", "short_help", "hidden", "deprecated"}


def _docstring(name: str) -> Optional[str]:
    """The docstring of the subcommand ``name``, read from its source, or ``None`` if it must be imported to tell.

    The help text of a click command is its function's docstring, unless
    the decorator says otherwise; reading it from the file costs a parse,
    where importing the module costs the whole tournament runner or numba.
    """
    attribute = SUBCOMMANDS[name].split(":")[1]
    try:
        tree = ast.parse(_source(name).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == attribute:
            makers = [decorator for decorator in node.decorator_list if isinstance(decorator, ast.Call)
                      and _called_name(decorator) in ("command", "group")]  # not its options
            if len(makers) != 1 or {keyword.arg for keyword in makers[0].keywords} & _HELP_KEYWORDS:
                return None
            return ast.get_docstring(node, clean=False)
    return None


def _called_name(call: ast.Call) -> str:
    """``command`` for ``@click.command(...)`` or ``@group.command(...)``."""
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else function.id if isinstance(function, ast.Name) else ""


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="othello-arena", prog_name="othello")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Othello Arena: play Othello between programs that talk through files."""
    from .agents.registry import builtin_agents

    # The context object every subcommand finds: the built-in agents, which the
    # referee runs by name but may not import (it is the layer below the agents).
    ctx.obj = builtin_agents()
