"""One agent in its place, seen from the referee: the one way to run an agent through its two files.

The referee's games (:mod:`.game`) and the conformance checker
(``othello check``, :mod:`othello_arena.agents.check`) both run agents
through an :class:`AgentSeat`:

1. :meth:`~AgentSeat.open` makes the agent's directory and clears files
   left from before;
2. :meth:`~AgentSeat.start` starts the agent there, sandboxed as the game's
   configuration says (:func:`.launch.start_agent`);
3. :meth:`~AgentSeat.write_in` writes its ``NAME.in`` atomically;
4. :meth:`~AgentSeat.take_message` reads its ``NAME.out`` once complete
   (PROTOCOL.md section 3.5, :func:`.files.read_message`) and deletes it:
   the one place a read ``NAME.out`` is deleted.

What a side owes in a game (its clock, turns, faults) is the game's business
(:mod:`.player`, :mod:`.clock`), not this module's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional, Sequence

from . import files
from .config import GameConfig
from .launch import start_agent
from .process import AgentProcess
from .sandbox import Isolation
from .spec import AgentSpec
from .watch import Waker


class AgentSeat:
    """An agent's directory, its ``NAME.in`` and ``NAME.out``, and its processes once started.

    Every file access goes through a descriptor of the directory opened by
    :meth:`open` (``dir_fd``): an agent that renames or replaces its
    directory cannot send the referee elsewhere.  ``NAME.in`` is written
    through a temporary file in ``temp_fd`` when given (a directory on the
    same file system that nobody watches), else in the directory itself.
    """

    def __init__(self, spec: AgentSpec, directory: Path, stderr_path: Path) -> None:
        self.spec = spec
        self.directory = directory
        self.stderr_path = stderr_path  # the agent's output, kept outside its directory (only the referee writes it)
        self.in_name = f"{spec.file_name}.in"
        self.out_name = f"{spec.file_name}.out"
        self.in_path = directory / self.in_name
        self.out_path = directory / self.out_name
        self.dir_fd = -1
        self.temp_fd: Optional[int] = None
        self.process: Optional[AgentProcess] = None
        self._spare: Optional[tuple[str, int]] = None  # the next NAME.in's temporary file, made ahead (prepare_in)

    @property
    def label(self) -> str:
        """The agent's name in the game record."""
        return self.spec.label

    def open(self) -> None:
        """Make the directory (if needed), hold it open, and delete a ``NAME.in`` or ``NAME.out`` left there."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.dir_fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        files.remove(self.dir_fd, self.in_name)
        files.remove(self.dir_fd, self.out_name)

    def start(self, config: GameConfig, isolation: Optional[Isolation], *, time_per_move: Optional[float],
              clock: str = "", move_cap: Optional[float] = None, hidden: Sequence[Path] = (), on_exit: Optional[Callable[[], None]] = None,
              warn: Callable[[str], None] = lambda text: None) -> AgentProcess:
        """Start the agent in its directory; raises :class:`~.process.StartError` if it cannot start."""
        self.process = start_agent(self.spec, self.directory, config, self.stderr_path, isolation,
                                   time_per_move=time_per_move, clock=clock, move_cap=move_cap, hidden=hidden, on_exit=on_exit, warn=warn)
        return self.process

    @property
    def exited(self) -> bool:
        """Whether the agent's main process has exited (``False`` before it starts)."""
        return self.process is not None and self.process.exited

    def pids(self) -> list[int]:
        """The agent's processes now (none before it starts)."""
        return self.process.pids() if self.process else []

    # -- the two files ---------------------------------------------------------------

    def write_in(self, text: str) -> None:
        """Put ``text`` in place as ``NAME.in`` in one rename (raises OSError)."""
        spare, self._spare = self._spare, None
        files.write_atomically(self.dir_fd, self.in_name, text, self.temp_fd, spare)

    def prepare_in(self) -> None:
        """Make the temporary file of the next ``NAME.in`` now, while nothing waits for it (idempotent).

        Creating a file can take a millisecond and more on a journaled file
        system that others use (ext4 under load: median 0.8 ms, p99 5 ms,
        where writing and renaming take microseconds), and the relay waits
        for it (issue 27).  Made ahead, :meth:`write_in` only writes and
        renames.  If it cannot be made now, :meth:`write_in` makes its own.
        """
        if self._spare is not None or self.dir_fd < 0:
            return
        try:
            self._spare = files.new_temp(self._temp_dir(), self.in_name)
        except OSError:
            pass

    def _temp_dir(self) -> int:
        return self.dir_fd if self.temp_fd is None else self.temp_fd

    def in_present(self) -> bool:
        """Whether ``NAME.in`` is still there (the agent deletes it once read)."""
        return files.exists(self.dir_fd, self.in_name)

    def out_present(self) -> bool:
        return files.exists(self.dir_fd, self.out_name)

    def take_message(self, waker: Waker, limit: int, size: int = 8) -> Optional[files.Message]:
        """The agent's ``NAME.out`` once complete, deleted as it is taken; ``None`` while absent or incomplete.

        The file is complete by :func:`.files.read_message`'s rule, its
        writer having closed it when the agent has exited or ``waker`` saw
        the close.  Raises :class:`~.files.OutFileError` (the file deleted
        too) for a ``NAME.out`` the referee will not read.  Its move is read
        as a move of a ``size`` x ``size`` board.
        """
        exited = self.exited  # before the read: an agent that wrote, then exited, has closed the file
        try:
            text = files.read_out(self.dir_fd, self.out_name, limit)
        except files.OutFileError:
            self.discard_out(waker)
            raise
        if text is None:
            return None
        closed = exited or waker.is_closed(self.out_path, self.pids)
        message = files.read_message(text, closed, person=self.spec.is_manual, size=size)
        if message is not None:
            self.discard_out(waker)
        return message

    def discard_out(self, waker: Waker) -> None:
        """Delete ``NAME.out`` (PROTOCOL.md section 3.6), and forget what ``waker`` knew of its writer."""
        files.remove(self.dir_fd, self.out_name)
        waker.forget(self.out_path)

    def close(self) -> None:
        """Let go of the directory (the processes are the caller's to stop), and of a temporary file made ahead."""
        spare, self._spare = self._spare, None
        if spare is not None:
            try:
                files.drop_temp(self._temp_dir(), spare)
            except OSError:
                pass
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1
