"""Which cores each game may use: a game's CPU is its own (issue 24).

Games that run at once are kept apart by CPU affinity: the runner gives each
of its slots a set of cores (:func:`core_sets`), the game's
:class:`~.config.GameConfig` carries it (``cpus``), and :mod:`.process` pins
each agent to it before its program starts, so both agents of a game and
every process they start share that game's cores and no other.  An agent
cannot widen its set: the sandbox refuses ``sched_setaffinity``
(:data:`.sandbox.BLOCKED_SYSCALLS_X86_64`); without the sandbox it can.

Affinity needs no privilege, so it holds for any user; a cgroup's cpuset
would do the same as root and is not needed.
"""

from __future__ import annotations

import os
from typing import Sequence


def usable_cores() -> list[int]:
    """The cores this process may run on (its affinity mask, not the machine's total), in order."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux: no affinity, every core numbered
        return list(range(os.cpu_count() or 1))


def default_slots(cores: int) -> int:
    """Games at once by default: one core per game, one core spare for the referees (at least one game)."""
    return max(1, cores - 1)


def core_sets(slots: int, cores: Sequence[int]) -> list[tuple[int, ...]]:
    """The cores of each of ``slots`` games at once on ``cores``: disjoint sets when there are enough.

    With more cores than games, the first core is left to the referees (and
    the system) and the rest shared out evenly, each game the same number;
    with as many games as cores, one core each; with more games than cores,
    games share cores round the table (see :func:`describe_sets`).

    >>> core_sets(2, [0, 1])
    [(0,), (1,)]
    >>> core_sets(1, [0, 1])
    [(1,)]
    >>> core_sets(3, [0, 1, 2, 3, 4, 5, 6, 7])
    [(1, 2), (3, 4), (5, 6)]
    >>> core_sets(3, [0, 1])
    [(0,), (1,), (0,)]
    """
    if slots < 1 or not cores:
        raise ValueError(f"core_sets: need at least one game and one core, got {slots} game(s), cores {list(cores)}")
    cores = list(cores)
    if slots > len(cores):
        return [(cores[slot % len(cores)],) for slot in range(slots)]
    free = cores[1:] if slots < len(cores) else cores
    each = len(free) // slots
    return [tuple(free[slot * each:(slot + 1) * each]) for slot in range(slots)]


def describe_sets(sets: Sequence[Sequence[int]]) -> str:
    """One line saying how the games are kept apart: their own cores, or loudly, that they share cores."""
    if not sets or any(not cpus for cpus in sets):
        return "cpu: games are not pinned to cores: an agent's busy turn slows the agents of the games beside it"
    used = [cpu for cpus in sets for cpu in cpus]
    if len(set(used)) == len(used):
        games = ", ".join(f"cpu {'+'.join(map(str, cpus))}" for cpus in sets)
        return f"cpu: each game on its own core(s), {len(sets)} at once: {games}"
    per_core = max(used.count(cpu) for cpu in set(used))
    return (f"cpu: WARNING: {len(sets)} games at once on {len(set(used))} core(s): games share cores, up to "
            f"{per_core} per core, so an agent's busy turn slows the agents of the games beside it and their "
            "clocks are not fair (fewer games at once gives each its own core)")


def cpu_lines(sandboxed: bool) -> list[str]:
    """``othello doctor``'s lines about the CPU: how games at once are kept apart on this machine."""
    cores = usable_cores()
    slots = default_slots(len(cores))
    try:
        os.sched_getaffinity(0)
    except AttributeError:
        return [f"cpu: {len(cores)} core(s); no CPU affinity on this system: games at once share every core"]
    line = describe_sets(core_sets(slots, cores))
    lines = [f"cpu: {len(cores)} usable core(s) ({', '.join(map(str, cores))}); \"auto\" runs {slots} game(s) at once",
             line]
    if sandboxed:
        lines.append("cpu: an agent cannot leave its cores (the sandbox refuses sched_setaffinity)")
    else:
        lines.append("cpu: WARNING: without the sandbox an agent can leave its cores (sched_setaffinity)")
    return lines


__all__ = ["core_sets", "cpu_lines", "default_slots", "describe_sets", "usable_cores"]
