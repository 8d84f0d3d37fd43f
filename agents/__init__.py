"""The agents: the Python side of the file protocol, the seed players, examples in other languages.

- :mod:`.runtime`: ``run_agent(strategy, name)`` plays one game through files;
- :mod:`.players`: the players of the seeds (PAIP's strategies, the heuristics paper, the beginner);
- :mod:`.registry`: the built-in agents by name (``othello agent NAME``);
- :mod:`.check`: ``othello check``, the conformance checker;
- :mod:`.bridge`: ``othello bridge gtp``, a GTP engine as an agent;
- ``examples/``: complete agents in C and awk.

Nothing is imported here, so ``othello agent random`` loads only what it uses.
"""
