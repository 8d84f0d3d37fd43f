"""Othello Arena: a referee, agents, a tournament runner and a class server for Othello played through files.

The code lives in six packages under this import root, each importing only those listed before it
(``tests/test_architecture.py`` checks it; ``docs/MAINTAINERS.md`` draws it):

- ``othello_arena.protocol``: rules, notation, move files, game records, openings (imports nothing else);
- ``othello_arena.referee``: one game between two sandboxed processes, its clock and limits;
- ``othello_arena.agents``: the players, the checker, the GTP bridge, the champion;
- ``othello_arena.tournaments``: many games, results, ratings, matches, reports;
- ``othello_arena.web``: ``othello serve``, the browser app;
- ``othello_arena.classroom``: ``othello class``, the class server.

``cli.py`` is the ``othello`` command over all of them.
"""

__version__ = "0.1.0"
