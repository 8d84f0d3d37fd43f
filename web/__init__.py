"""The arena in a browser: ``othello serve`` (Starlette and uvicorn).

It stands on top of everything else: a person plays through the referee as a
``manual:`` player (:mod:`.games`), a tournament is read from its database
and its games' live logs (:mod:`.tournament`), and every position is computed
by the rules core (:mod:`.gameview`); the pages only draw.
"""
