"""The rules of one game that are not rules of Othello: time settings, limits, options (the clock itself: :mod:`.clock`)."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import platformdirs

from ..protocol import DEFAULT_SIZE, check_size
from .clock import GRACE_SECONDS, PLAY_SECONDS, STARTUP_SECONDS, TimeControl, TimeRule, format_clock, parse_clock

END_GRACE_SECONDS = 1.0  # PROTOCOL.md section 3.7: time to exit after the end line
ILLEGAL_RULES = ("lose", "lose-turn")
SANDBOXES = ("bwrap", "none")  # PROTOCOL.md section 2: every agent in a bubblewrap sandbox, or (told so) none
CACHE_DIR_VARIABLE = "OTHELLO_CACHE_DIR"


def compiled_cache_dir() -> Path:
    """Where compiled code (the champion's numba cache) is kept: ``$OTHELLO_CACHE_DIR``, else the user's cache.

    If the user's cache cannot be written (no home folder, a read-only one),
    a folder of this user's own under the temporary directory, said on stderr.

    Never inside the installed package: a cache written there outlives a
    reinstall, and a leftover ``__pycache__`` folder then shadows an
    editable install as a namespace package (issue 11).  The referee hands
    this directory to the built-in agents through ``$OTHELLO_CACHE_DIR``, so
    an agent whose HOME is elsewhere (a sandbox) still finds the same cache.
    """
    named = os.environ.get(CACHE_DIR_VARIABLE)
    if named:
        return Path(named).expanduser()
    default = Path(platformdirs.user_cache_dir("othello-arena"))
    try:
        default.mkdir(parents=True, exist_ok=True)
        if os.access(default, os.W_OK | os.X_OK):
            return default
        reason = "not writable"
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
    # A user without a writable home (a service account, a read-only home) would
    # otherwise have the champion compile anew in every game and play its
    # fallback meanwhile.  Name the fallback in the environment so that this
    # process's later calls and its children (prepare, the referee's agents) agree.
    fallback = _private_temp_cache()
    os.environ[CACHE_DIR_VARIABLE] = str(fallback)
    print(f"othello: cannot use the compiled-code cache {default} ({reason}); using {fallback} "
          f"(set {CACHE_DIR_VARIABLE} to choose)", file=sys.stderr)
    return fallback


def _private_temp_cache() -> Path:
    """A cache folder under the temporary directory that only this user can write.

    The fixed name lets the cache outlive the run; it is used only if this
    user owns it and nobody else may write it (another user could otherwise
    plant compiled code that the champion would run), else a fresh folder.
    """
    fixed = Path(tempfile.gettempdir()) / f"othello-arena-cache-{os.getuid()}"
    try:
        fixed.mkdir(mode=0o700, exist_ok=True)
        status = fixed.lstat()  # lstat: a planted symbolic link is not a folder of ours
        if stat.S_ISDIR(status.st_mode) and status.st_uid == os.getuid() and not status.st_mode & 0o022:
            return fixed
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="othello-arena-cache-"))


MAX_MOVE_PAUSE = 60.0  # a pause between moves is for people watching: a minute is already long


@dataclass(frozen=True)
class GameConfig:
    """Everything :func:`~othello_arena.referee.play_game` needs besides the two agents.

    - ``time_per_move``: wall-clock seconds per move (PROTOCOL.md section 4);
      with a ``clock`` a cap per move, ``None`` for none;
    - ``clock``: a game clock ``(base, increment)`` in seconds for each
      program (``--clock 300+2``, PROTOCOL.md section 10): a bank of ``base``
      seconds, ``increment`` more after each move; ``None``: the per-move
      limit alone, the seed's rule;
    - ``grace``: margin added to every deadline;
    - ``startup_time``: extra seconds on each agent's first move (and for Black
      to take its colour file), since starting an interpreter, a JVM or a JIT
      compiler is not thinking (chess engine testers do not count start-up either);
    - ``manual_time``: seconds per move for a person, ``None`` for no limit;
    - ``strict_manual``: a person's malformed or illegal move loses as a
      program's does; by default the person is told what was wrong and what
      is legal, and asked again (PROTOCOL.md section 7);
    - ``illegal``: ``"lose"`` (an illegal move loses) or ``"lose-turn"`` (seed
      003's rule: the move is ignored and counts as a pass); with ``lose-turn``
      an agent still loses after ``max_lost_turns`` illegal moves, so a game
      always ends;
    - ``memory_mb``: memory of the whole agent, all its processes and the
      files of its ``/tmp`` and ``/dev/shm`` (a cgroup, else the referee's
      watchdog: :mod:`.process`), and the size of its ``/dev/shm``; 0 for
      none; ``max_processes``: processes per agent, 0 for none;
    - ``disk_mb``: the most an agent may keep in its directory (watched
      during the game; what is beyond it removed after the game), the size of
      its private ``/tmp`` and of any one file (``RLIMIT_FSIZE``); 0 for none;
    - ``keep_files_mb``: the most of an agent's own files left in its
      directory after the game (the largest removed first, :mod:`.trim`), as
      a tournament keeps them; ``None``: everything within ``disk_mb``;
    - ``suspend_waiting``: freeze the agent that waits while the other thinks
      (on by default: PROTOCOL.md section 2), so it can neither think on the
      opponent's time nor take its CPU;
    - ``stderr_limit``: bytes of each agent's output kept in its ``stderr.log``;
    - ``out_limit``: largest ``NAME.out`` read, in bytes (a bigger one is malformed);
    - ``end_grace``: seconds an agent has to exit after its end line;
    - ``polling``: watch the files by polling every ``poll_interval`` seconds
      instead of file events (also used automatically if events fail);
    - ``sandbox``: ``"bwrap"`` runs each agent in its own bubblewrap sandbox
      (:mod:`othello_arena.referee.sandbox`); ``"none"`` runs it as the
      referee's user with rlimits only, and only when asked for;
    - ``hidden_paths``: folders no agent may see even where they lie inside
      one it may read (the tournament's results; the game directory always);
    - ``size``: the board's size, 8 or one of seed 002's bigger boards (10,
      12, 14: PROTOCOL.md section 9), which both agents must play;
    - ``agent_times``: time odds, as chess engine testers give each engine its
      own time control: ``(label, seconds per move)`` pairs for the agents
      that do not have ``time_per_move`` (or ``manual_time``); each agent is
      told its own (``OTHELLO_TIME``, ``{time}``);
    - ``agent_clocks``: clock odds in the same way, ``(label, (base,
      increment))`` pairs for the agents that do not have ``clock``;
    - ``cpus``: the cores this game's agents (and all their processes) may
      run on, set by a tournament for each game at once
      (:func:`.cores.core_sets`); empty: any core;
    - ``move_pause``: seconds the referee waits after each move, once it is
      shown and before the other side is given it, so that people can follow
      a game between programs (two instant agents play a whole game in a
      second or two); no side's clock runs meanwhile; 0: none.
    """

    time_per_move: Optional[float] = PLAY_SECONDS
    grace: float = GRACE_SECONDS
    startup_time: float = STARTUP_SECONDS
    manual_time: Optional[float] = None
    strict_manual: bool = False
    illegal: str = "lose"
    max_lost_turns: int = 3
    memory_mb: int = 4096
    max_processes: int = 64
    disk_mb: int = 256
    keep_files_mb: Optional[int] = None
    suspend_waiting: bool = True
    stderr_limit: int = 1 << 20
    out_limit: int = 64 << 10
    end_grace: float = END_GRACE_SECONDS
    polling: bool = False
    poll_interval: float = 0.005
    sandbox: str = "bwrap"
    hidden_paths: tuple[str, ...] = ()
    size: int = DEFAULT_SIZE
    agent_times: tuple[tuple[str, float], ...] = ()
    clock: Optional[tuple[float, float]] = None
    agent_clocks: tuple[tuple[str, tuple[float, float]], ...] = ()
    cpus: tuple[int, ...] = ()
    move_pause: float = 0.0

    def __post_init__(self) -> None:
        check_size(self.size)
        times = dict(self.agent_times)
        for label, seconds in times.items():
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
                raise ValueError(f"time per move of {label}: must be a positive number of seconds, got {seconds!r}")
        object.__setattr__(self, "agent_times", tuple(sorted((label, float(s)) for label, s in times.items())))
        for label, setting in [("", self.clock), *self.agent_clocks]:
            if setting is not None:  # the bounds of the command line's --clock
                try:
                    parse_clock(format_clock(*setting))
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"clock{' of ' + label if label else ''}: {exc}") from None
        object.__setattr__(self, "agent_clocks", tuple(sorted(
            (label, (float(base), float(inc))) for label, (base, inc) in dict(self.agent_clocks).items())))
        if self.clock is not None:
            object.__setattr__(self, "clock", (float(self.clock[0]), float(self.clock[1])))
        if self.time_per_move is None and self.clock is None:
            raise ValueError("time per move may be None (no cap) only under a game clock")
        if self.time_per_move is not None and not self.time_per_move > 0:
            raise ValueError(f"time per move must be positive, got {self.time_per_move}")
        if self.manual_time is not None and not self.manual_time > 0:
            raise ValueError(f"manual time per move must be positive or None, got {self.manual_time}")
        if self.sandbox not in SANDBOXES:
            raise ValueError(f"sandbox {self.sandbox!r}: expected one of {', '.join(SANDBOXES)}")
        if self.illegal not in ILLEGAL_RULES:
            raise ValueError(f"illegal-move rule {self.illegal!r}: expected one of {', '.join(ILLEGAL_RULES)}")
        if not 0 <= self.move_pause <= MAX_MOVE_PAUSE:
            raise ValueError(f"move_pause must be from 0 to {MAX_MOVE_PAUSE:g} seconds, got {self.move_pause!r}")
        for field in ("grace", "startup_time", "end_grace", "poll_interval"):
            if getattr(self, field) < 0:
                raise ValueError(f"{field} must not be negative")
        object.__setattr__(self, "hidden_paths", tuple(str(path) for path in self.hidden_paths))
        for field in ("memory_mb", "max_processes", "disk_mb", "stderr_limit", "max_lost_turns"):
            if getattr(self, field) < 0:
                raise ValueError(f"{field} must not be negative")
        if any(isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0 for cpu in self.cpus):
            raise ValueError(f"cpus: expected core numbers (integers from 0), got {list(self.cpus)!r}")
        object.__setattr__(self, "cpus", tuple(sorted(set(self.cpus))))
        if self.keep_files_mb is not None and (isinstance(self.keep_files_mb, bool) or self.keep_files_mb < 0):
            raise ValueError(f"keep_files_mb must be a number of MB, 0 or more, got {self.keep_files_mb!r}")
        if self.out_limit < 64:
            raise ValueError("out_limit must be at least 64 bytes")

    def files_kept(self) -> tuple[Optional[int], str]:
        """The MB of its own files an agent's directory keeps after the game, and why (``None``: all of them)."""
        if self.keep_files_mb is not None and (not self.disk_mb or self.keep_files_mb < self.disk_mb):
            return self.keep_files_mb, f"beyond the {self.keep_files_mb} MB kept after each game"
        if self.disk_mb:
            return self.disk_mb, f"beyond the {self.disk_mb} MB disk limit"
        return None, ""

    @property
    def time_rule(self) -> TimeRule:
        """The game's time rule for its programs (the odds apart)."""
        return TimeRule(self.time_per_move, self.clock)

    @property
    def time_text(self) -> str:
        """The time rule as the lines say it, with any agent's own: ``2 s per move (rhino 120 s)``, ``clock 300+2``."""
        return self.time_rule.text_with_odds(self.agent_times, self.agent_clocks)

    def time_control(self, label: str, manual: bool) -> TimeControl:
        """The clock setting of the agent ``label``, a program or a person: its own time and clock (odds), else the game's.

        A person has no game clock unless given one of their own: the game's is for programs.
        """
        own = dict(self.agent_times).get(label)
        per_move = own if own is not None else self.manual_time if manual else self.time_per_move
        clock = dict(self.agent_clocks).get(label, None if manual else self.clock)
        if clock is None:
            return TimeControl(per_move, self.grace, self.startup_time)
        return TimeControl(per_move, self.grace, self.startup_time, base=clock[0], increment=clock[1])

