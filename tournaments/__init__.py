"""Tournaments: many games between many agents, crash-safe, rated and reported.

Four folders by job, each importing only those before it (as in cutechess, and fishtest's split of the
pages from the workers):

- :mod:`.schedule`: what is to be played: the tournament file (:mod:`.schedule.config`), the formats
  and the games with colours and seeds (:mod:`.schedule.pairing`), opening suites;
- :mod:`.results`: what was played, and reading it: the SQLite database (:mod:`.results.store`), the
  standings and ratings, and the one read model (:mod:`.results.state`) that ``status``, the report, the
  export and the web app read; it never imports :mod:`.run`;
- :mod:`.run`: playing: the runner, one game as plain data (jobs), threads or Dask (pools), builds,
  each game's live log, the terminal display;
- :mod:`.match`: ``othello match``, A against B in game pairs; its statistics (pentanomial, Elo, SPRT)
  are the leaf :mod:`.stats`, which the tournament file's ``[match]`` table is checked with too.

:mod:`.cli` is ``othello tournament run|resume|rerun|withdraw|status|report|export|verify|check``.
"""
