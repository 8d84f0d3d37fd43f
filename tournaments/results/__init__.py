"""What was played, and reading it: the database (:mod:`.store`), its one writer at a time (:mod:`.lock`),
standings and ratings, the read model (:mod:`.state`) and its readers (report, export, verify).

Nothing here imports what plays games (:mod:`..run`); tests/test_architecture.py checks it.
"""
