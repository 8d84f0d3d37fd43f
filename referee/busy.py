"""Was a late move the agent's doing or the machine's?  The figures of one move, and the rule that tells.

A move's clock is wall time: on a loaded machine an agent that thinks
0.05 s may take 1.3 s of clock because it waited for a core.  What the
referee can measure of one move, besides its clock, is the CPU the agent's
processes used (``/proc/PID/stat``) and, where the kernel keeps scheduler
statistics (``/proc/PID/task/TID/schedstat``, on every usual Linux), the time
its threads spent runnable but waiting for a core: the machine's doing,
seen from the agent itself, so a busy neighbour on the agent's own core
shows at once, however quiet the rest of the machine is.

The rule (:meth:`MoveTiming.machine_to_blame`), for a move that ran past its
limit (or no move yet):

- CPU over the limit: the agent thought too long.  Its fault, whatever the load.
- Else, with the wait for a core known: the machine's doing when the clock
  without that wait is within the limit (it would have been in time had it
  had a core).  An agent that sleeps, or that waits for something else,
  waits without queueing for a core: still its fault, on a busy machine too.
- Else (no scheduler statistics): the tournaments' sign, the CPU under
  :data:`LOAD_CPU_SHARE` of the clock while the load average was over the
  cores.  Weaker: it cannot tell a sleep from a wait, so it says "could not
  tell", never "late".

Whoever applies it (``othello check``, the tournaments' flag of a timeout, a
class's admission and ladder) says "could not tell", with these figures,
rather than a verdict against the agent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from .cores import usable_cores

# A timeout looks caused by load when the agent got less than this share of
# a core while its clock ran (an agent thinking hard uses ~100%).
LOAD_CPU_SHARE = 0.5


@dataclass(frozen=True)
class Usage:
    """What an agent's processes had of the machine so far: CPU seconds, and seconds waiting for a core."""

    cpu: float
    waited: Optional[float]  # None: the kernel keeps no scheduler statistics here (or they were unreadable)
    # It was held in the run queue when measured (runnable throughout a short look, hardly on a core): the
    # kernel adds a wait to ``waited`` only once it ends, so it has waited more than ``waited`` says.
    queued: bool = False

    def since(self, before: "Usage") -> "Usage":
        """What was used between ``before`` and this (queued: as now)."""
        waited = None if self.waited is None or before.waited is None else max(0.0, self.waited - before.waited)
        return Usage(max(0.0, self.cpu - before.cpu), waited, self.queued)


def machine_load() -> tuple[float, int]:
    """The 1-minute load average and the cores this process may run on (its affinity), as the figures are shown."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    return load, len(usable_cores())


@dataclass(frozen=True)
class MoveTiming:
    """One move's figures: the clock it ran, what the agent used meanwhile, the limit, the machine's load."""

    clock: float  # seconds of wall time since NAME.in was in place
    used: Usage  # the agent's CPU and wait for a core meanwhile
    limit: float  # seconds the move was allowed (grace and a first move's start-up included)
    load: float  # the 1-minute load average when it was judged
    cores: int  # the cores the judge may run on

    @classmethod
    def measure(cls, clock: float, used: Usage, limit: float) -> "MoveTiming":
        load, cores = machine_load()
        return cls(clock, used, limit, load, cores)

    @property
    def own_seconds(self) -> Optional[float]:
        """The clock without the wait for a core: what the move took of the agent's own doing (``None``: unknown)."""
        return None if self.used.waited is None else max(0.0, self.clock - self.used.waited)

    @property
    def loaded(self) -> bool:
        return self.load > self.cores

    def machine_to_blame(self, awaiting: bool = False) -> bool:
        """Whether the move's lateness is the machine's doing, or may be (see the module's rule).

        ``awaiting``: no move yet.  Then an agent held in the run queue now
        is in a wait the kernel has not yet counted (it counts one when it
        ends): it may still be the machine's doing.
        """
        if self.used.cpu > self.limit:
            return False  # it thought too long, whatever the machine did
        own = self.own_seconds
        if own is not None:
            return own <= self.limit or (awaiting and self.used.queued)
        return self.loaded and self.used.cpu < LOAD_CPU_SHARE * self.clock

    def figures(self, awaited: str = "", what: str = "the move") -> str:
        """``the move took 1.34 s of clock and 0.05 s of CPU (1.21 s waiting for a core), 0.35 s allowed``; with
        ``awaited`` (what never came: ``"move"``), ``no move after 2.40 s of clock and ...``."""
        took = f"no {awaited} after {self.clock:.2f} s" if awaited else f"{what} took {self.clock:.2f} s"
        return f"{took} of clock and {self.used_text()}, {self.limit:g} s allowed"

    def used_text(self) -> str:
        """``0.05 s of CPU (1.21 s waiting for a core)``: what the agent had of the machine meanwhile."""
        waited = self.used.waited
        if waited is None:
            return f"{self.used.cpu:.2f} s of CPU"
        # (summed over its threads and processes, which may queue at once: never shown as more than the clock)
        return f"{self.used.cpu:.2f} s of CPU ({min(waited, self.clock):.2f} s waiting for a core)"

    def busy_text(self, awaited: str = "", then: str = "", what: str = "the move") -> str:
        """Why a judge could not tell, with the figures (:meth:`figures`), for a card or a terminal (``then``: what to do)."""
        return (f"could not tell: the machine was busy (load {self.load:.1f} on {self.cores} "
                f"core{'s' * (self.cores != 1)}): {self.figures(awaited, what)}" + (f"; {then}" if then else ""))
