"""Tournaments: many games between many agents, crash-safe, rated and reported.

The layers, each in its own module (as in cutechess):

- :mod:`.config`: the tournament file (TOML), parsed and validated;
- :mod:`.pairing`: the formats (round robin, double, gauntlet, Swiss) say who
  meets whom; the base turns pairings into games with colours and seeds;
- :mod:`.store`: the SQLite database, one transaction per finished game;
- :mod:`.runner`: plays the games in threads or on a Dask cluster;
- :mod:`.standings` and :mod:`.ratings`: the table, the crosstable, the
  Bradley-Terry ratings with confidence intervals;
- :mod:`.report`: the static HTML report; :mod:`.live`: the terminal display;
- :mod:`.cli`: ``othello tournament run|resume|status|report|check``.
"""
