"""Games started from the browser, each played by the real referee in a thread of the server.

A person in the browser is a ``manual:NAME`` player of the referee, exactly
as one who plays with a text editor: when it is their turn the server reads
their ``NAME.in`` (the opponent's move, or the referee's note on a refused
move) and, when they click, writes their ``NAME.out``.  The referee checks
the move with the rules core, relays it to the agent's ``NAME.in``, and the
agent sees exactly what a student's program sees.  Three modes, as in seed
002's program: a person against an agent, two people on one board, two
agents watched move by move.
"""

from __future__ import annotations

import itertools
import os
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..agents.registry import builtin_agents
from ..protocol import BOARD_SIZES, DEFAULT_SIZE, GameRecord
from ..referee import AgentSpec, BuiltinAgents, GameConfig, GameEvent, check_sizes, distinct_labels, play_game
from ..referee.clock import parse_clock
from ..referee.config import MAX_MOVE_PAUSE
from ..tournaments.results.safefiles import GAME_RECORD_LIMIT, read_whole
from ..tournaments.run.livelog import LiveLogWriter, event_entry
from .gameview import game_view, square_move

MODES = ("person", "people", "agents")
COLOURS = ("W", "B", "random")
MAX_LIVE_GAMES = 8  # games in play at once: each agent is a process, and the machine is shared


class GameRequestError(ValueError):
    """A request to start a game or make a move that cannot be done; the message says which input and why."""


@dataclass(frozen=True)
class GameRequest:
    """What the play form asks for.

    ``mode`` is ``person`` (``name`` against ``opponent``, playing ``colour``),
    ``people`` (``name`` as White against ``second_name``) or ``agents``
    (``opponent`` as White against ``second_opponent``).  An opponent is a
    built-in agent or ``NAME=COMMAND``; ``time_per_move`` is an agent's
    seconds per move, ``person_time`` a person's (``None``: no limit);
    ``clock`` a game clock ``(base, increment)`` for every side, people
    too, instead (PROTOCOL.md section 10; ``None``: none); ``size`` the
    board's, 8 or one of seed 002's bigger boards; ``move_pause`` the
    seconds the referee waits after each move in the ``agents`` mode, so
    that the game can be followed (ignored in the others: a person's turn
    is its own pause).
    """

    mode: str = "person"
    name: str = "you"
    second_name: str = "friend"
    opponent: str = "greedy"
    second_opponent: str = "random"
    colour: str = "random"
    time_per_move: float = 5.0
    person_time: Optional[float] = None
    size: int = DEFAULT_SIZE
    clock: Optional[tuple[float, float]] = None
    move_pause: float = 0.0

    @classmethod
    def from_form(cls, data: dict[str, Any]) -> "GameRequest":
        """Check the form's fields; :class:`GameRequestError` names the field that is wrong."""
        def text(key: str, default: str) -> str:
            value = data.get(key, default)
            if value is None:
                return default
            if not isinstance(value, str):
                raise GameRequestError(f"{key}: expected text, got {value!r}")
            return value.strip() or default

        def seconds(key: str, default: Optional[float]) -> Optional[float]:
            value = data.get(key, default)
            if value in (None, ""):
                return None
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise GameRequestError(f"{key}: {value!r} is not a number of seconds") from None
            if not 0 < number <= 3600:
                raise GameRequestError(f"{key}: {value!r} must be more than 0 and at most 3600 seconds")
            return number

        mode = text("mode", "person")
        if mode not in MODES:
            raise GameRequestError(f"mode: {mode!r} is not one of {', '.join(MODES)}")
        colour = text("colour", "random")
        if colour not in COLOURS:
            raise GameRequestError(f"colour: {colour!r} is not one of W, B, random")
        time_per_move = seconds("time_per_move", 5.0)
        clock_text = text("clock", "")
        try:
            clock = parse_clock(clock_text) if clock_text else None
        except ValueError as exc:
            raise GameRequestError(f"clock: {exc}") from None
        pause_text = text("move_pause", "0")
        try:
            move_pause = float(pause_text)
        except ValueError:
            raise GameRequestError(f"move_pause: {pause_text!r} is not a number of seconds") from None
        if not 0 <= move_pause <= MAX_MOVE_PAUSE:
            raise GameRequestError(f"move_pause: {pause_text!r} must be from 0 to {MAX_MOVE_PAUSE:g} seconds")
        size = text("size", str(DEFAULT_SIZE))
        if size not in [str(n) for n in BOARD_SIZES]:
            raise GameRequestError(f"size: {size!r} is not one of {', '.join(map(str, BOARD_SIZES))}")
        return cls(mode=mode, name=text("name", "you"), second_name=text("second_name", "friend"),
                   opponent=text("opponent", "greedy"), second_opponent=text("second_opponent", "random"),
                   colour=colour, time_per_move=time_per_move or 5.0, person_time=seconds("person_time", None),
                   size=int(size), clock=clock, move_pause=move_pause if mode == "agents" else 0.0)

    def players(self, base: Path, builtins: BuiltinAgents) -> tuple[AgentSpec, AgentSpec]:
        """``(white, black)`` for this request; :class:`GameRequestError` quotes a player that cannot be parsed."""
        def parse(field: str, text: str, manual: bool = False) -> AgentSpec:
            try:
                return AgentSpec.manual(text) if manual else AgentSpec.parse(text, base=base, builtins=builtins)
            except ValueError as exc:
                raise GameRequestError(f"{field}: {exc}") from None

        if self.mode == "person":
            person, agent = parse("name", self.name, manual=True), parse("opponent", self.opponent)
            if agent.is_manual:
                raise GameRequestError(f"opponent: {self.opponent!r} is a person; choose the mode 'two people'")
            colour = self.colour if self.colour != "random" else random.choice("WB")
            pair = (person, agent) if colour == "W" else (agent, person)
        elif self.mode == "people":
            pair = (parse("name", self.name, manual=True), parse("second_name", self.second_name, manual=True))
        else:
            pair = (parse("opponent", self.opponent), parse("second_opponent", self.second_opponent))
            if any(spec.is_manual for spec in pair):
                raise GameRequestError("agents: manual:NAME is a person; choose the mode 'two people'")
        white, black = distinct_labels(*pair)
        try:
            check_sizes(white, black, self.size)
        except ValueError as exc:
            raise GameRequestError(f"size: {exc}") from None
        return white, black


class WebGame:
    """One game the server plays: the referee in a thread, its events kept for the page."""

    def __init__(self, game_id: str, directory: Path, white: AgentSpec, black: AgentSpec,
                 config: GameConfig, mode: str, builtins: BuiltinAgents) -> None:
        self.id = game_id
        self.builtins = builtins
        self.directory = directory
        self.mode = mode
        self.specs = {"W": white, "B": black}
        self.config = config
        self.entries: list[dict[str, Any]] = []
        self.version = 0
        self.error = ""
        self.record: Optional[GameRecord] = None
        self.inbox: dict[str, str] = {}  # the last NAME.in each person read: what the referee told them
        self.out_path: dict[str, Path] = {}  # where each person writes their move, from the referee's prompt
        self.written: dict[str, str] = {}  # a person's NAME.out written, not yet taken by the referee
        self._lock = threading.Lock()
        self._log = LiveLogWriter(directory)
        self.created = time.time()
        self.thread = threading.Thread(target=self._play, name=f"web-game-{game_id}", daemon=True)

    # -- the referee's side ----------------------------------------------------

    def start(self) -> None:
        self.thread.start()

    def _play(self) -> None:
        try:
            self.builtins.prepare_for(list(self.specs.values()), lambda line: None)  # before any clock runs
            self.record = play_game(self.specs["W"], self.specs["B"], self.config, self.directory,
                                    seed=None, on_event=self.on_event)
        except Exception as exc:  # noqa: BLE001 - a setup problem (no sandbox here...): shown on the page
            with self._lock:
                self.error = f"the game could not be played: {exc}"
                self.version += 1

    def on_event(self, event: GameEvent) -> None:
        """The referee's event: kept for the page and logged; a person's turn reads their ``NAME.in``."""
        self._log(event)
        entry = event_entry(event)
        with self._lock:
            if entry is not None:
                self.entries.append(entry)
            colour = event.colour.value if event.colour is not None else ""
            if event.kind == "waiting" and event.manual and event.path is not None:
                self.out_path[colour] = event.path
                self.inbox[colour] = self._read_in(event.path)
            if event.kind in ("move", "lost-turn", "retry") and colour:
                self.written.pop(colour, None)  # the referee took (or refused) the file
            if event.kind == "end":
                self.written.clear()
            self.version += 1

    @staticmethod
    def _read_in(out_path: Path) -> str:
        """Read and delete the person's ``NAME.in``, as the protocol asks of a player (PROTOCOL.md section 3)."""
        in_path = out_path.with_suffix(".in")
        try:
            text = in_path.read_text(encoding="utf-8", errors="replace")[:4096]
        except OSError:
            return ""
        try:
            in_path.unlink()
        except OSError:
            pass
        return text

    # -- the person's side -------------------------------------------------------

    def play(self, colour: str, sq: Optional[int]) -> None:
        """Write ``colour``'s move (``sq`` 0-63, ``None`` to pass) into that person's ``NAME.out``.

        The move is not checked here: the referee checks it with the rules
        core, and a refused move comes back as a note (a second chance).
        """
        if colour not in ("W", "B"):
            raise GameRequestError(f"colour: {colour!r} is not W or B")
        try:
            move = square_move(colour, sq, self.config.size)
        except ValueError as exc:
            raise GameRequestError(f"square: {exc}") from None
        with self._lock:
            if not self.specs[colour].is_manual:
                raise GameRequestError(f"{self.specs[colour].label} ({colour}) is an agent, not a person of this page")
            view = game_view(self.entries)
            if view["result"] is not None or self.error:
                raise GameRequestError("the game is over")
            if view["to_move"] != colour or colour not in self.out_path:
                raise GameRequestError(f"it is not {self.specs[colour].label}'s turn")
            if colour in self.written:
                raise GameRequestError(f"{self.written[colour]} is written already; the referee is reading it")
            path = self.out_path[colour]
            temporary = path.with_name(path.name + ".tmp")
            # Written whole, then renamed: the referee never sees half a move.
            temporary.write_text(move.line() + "\n", encoding="utf-8")
            os.replace(temporary, path)
            self.written[colour] = move.line()
            self.version += 1

    # -- the page's side ---------------------------------------------------------

    def view(self) -> dict[str, Any]:
        with self._lock:
            data = game_view(list(self.entries), self.specs["W"].label, self.specs["B"].label)
            data.update(
                id=self.id, mode=self.mode, error=self.error,
                people=[colour for colour, spec in self.specs.items() if spec.is_manual],
                inbox={colour: text for colour, text in self.inbox.items()},
                written=dict(self.written),
                files={colour: spec.file_name for colour, spec in self.specs.items()},
                # each program's standard output and error, once the game is over (the page links them for its owner)
                stderr={colour: f"/api/games/{self.id}/stderr/{colour}" for colour, spec in self.specs.items()
                        if not spec.is_manual and self.record is not None},
                finished=self.record is not None or bool(self.error),
                time_per_move=self.config.time_per_move, person_time=self.config.manual_time,
            )
            return data

    def record_json(self) -> bytes:
        """The exact ``game.json`` the referee wrote; ``FileNotFoundError`` before the end."""
        return read_whole(self.directory, "game.json", GAME_RECORD_LIMIT)

    def stderr_log(self, colour: str) -> bytes:
        """The ``NAME.stderr.log`` of the program playing ``colour``, as the record names it; ``FileNotFoundError`` if none."""
        if self.record is None or colour not in self.specs:
            raise FileNotFoundError(colour)
        info = self.record.extra.get("agents", {}).get(self.specs[colour].label, {})
        name = info.get("stderr_log")
        if not name or "/" in str(name):
            raise FileNotFoundError(colour)
        return read_whole(self.directory, str(name), GAME_RECORD_LIMIT)  # (the referee caps it at 1 MiB)

    @property
    def live(self) -> bool:
        return self.thread.is_alive()


class GameHall:
    """The games started from this server, each in its own directory under ``root``."""

    def __init__(self, root: Path, sandbox: str = "bwrap", base: Optional[Path] = None,
                 config_overrides: Optional[dict[str, Any]] = None) -> None:
        self.root = Path(root).resolve()
        self.sandbox = sandbox
        self.base = base or Path.cwd()
        self.config_overrides = config_overrides or {}
        self.builtins = builtin_agents()
        self.games: dict[str, WebGame] = {}
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        self.stamp = time.strftime("%Y%m%d-%H%M%S")

    def start(self, request: GameRequest) -> WebGame:
        """Start the game ``request`` asks for; :class:`GameRequestError` if it cannot be."""
        white, black = request.players(self.base, self.builtins)
        # Under a game clock every side has it, a person too (whose clock the page shows ticking as well).
        people = tuple((spec.label, request.clock) for spec in (white, black) if spec.is_manual and request.clock)
        config = GameConfig(time_per_move=None if request.clock else request.time_per_move,
                            manual_time=request.person_time, sandbox=self.sandbox, size=request.size,
                            clock=request.clock, agent_clocks=people, move_pause=request.move_pause,
                            **self.config_overrides)
        with self._lock:
            if sum(game.live for game in self.games.values()) >= MAX_LIVE_GAMES:
                raise GameRequestError(f"{MAX_LIVE_GAMES} games are in play already; finish one first")
            game_id = f"{next(self._counter)}"
            directory = self.root / f"{self.stamp}-{game_id}-{white.file_name}-vs-{black.file_name}"
            game = WebGame(game_id, directory, white, black, config, request.mode, self.builtins)
            self.games[game_id] = game
        directory.mkdir(parents=True, exist_ok=True)
        game.start()
        return game

    def get(self, game_id: str) -> Optional[WebGame]:
        return self.games.get(game_id)

    def summaries(self) -> list[dict[str, Any]]:
        result = []
        for game in sorted(self.games.values(), key=lambda g: g.created, reverse=True):
            view = game.view()
            result.append({"id": game.id, "white": view["white"], "black": view["black"], "mode": game.mode,
                           "result": view["result_text"] or game.error or "in play", "plies": len(view["plies"]) - 1})
        return result

