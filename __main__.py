"""``python -m othello_arena`` runs the ``othello`` command."""

from othello_arena.cli import cli

if __name__ == "__main__":
    cli(prog_name="othello")
