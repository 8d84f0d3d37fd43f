"""Othello Arena: a referee, agents and a tournament runner for Othello played through files.

The code lives in four packages under this import root:

- ``othello_arena.protocol``: rules, notation, move files, game records (imports nothing else);
- ``othello_arena.referee``: one game between two processes;
- ``othello_arena.agents``: the players;
- ``othello_arena.tournaments``: many games, results, ratings, reports.
"""

__version__ = "0.1.0"
