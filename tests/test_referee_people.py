"""People at a text editor (``manual:NAME``): no message lost, a typo pointed out and asked again.

The person is a thread acting on the real files as PROTOCOL.md section 7
says: wait for ``me.in``, read it, pause, delete it, save ``me.out``.
"""

from __future__ import annotations

import codecs
import threading
import time
from pathlib import Path
from typing import Callable, Optional

import pytest
from click.testing import CliRunner
from referee_helpers import command, write_agent

from othello_arena.cli import cli
from othello_arena.protocol import BLACK, WHITE, Board, Colour, GameRecord, parse_line
from othello_arena.referee import AgentSpec, GameConfig, GameEvent, play_game
from othello_arena.referee import files

# A person has no clock; this limit only keeps a broken referee from hanging the test.
PEOPLE = GameConfig(time_per_move=5, end_grace=0.3, manual_time=30)


class Person(threading.Thread):
    """Plays the first legal move by hand; ``attempts`` are saved first, one per try, as they are.

    ``pause`` is called between reading ``me.in`` and deleting it (a person
    reads slowly); ``encodings[k]`` encodes the person's k-th good move (an
    editor's way of saving).  ``seen`` keeps every ``me.in`` read.
    """

    def __init__(self, directory: Path, name: str = "me", attempts: tuple[bytes, ...] = (),
                 encodings: tuple[Callable[[str], bytes], ...] = (), pause: Callable[[], None] = lambda: None) -> None:
        super().__init__(daemon=True)
        self.inbox, self.outbox = directory / f"{name}.in", directory / f"{name}.out"
        self.attempts, self.encodings = list(attempts), list(encodings)
        self.pause = pause
        self.seen: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        board, colour = Board(), None
        while not self.stop.is_set():
            if not self.inbox.exists():
                time.sleep(0.005)
                continue
            text = self.inbox.read_text()
            self.seen.append(text)
            self.pause()
            self.inbox.unlink()
            retry = text.startswith("(C")  # the move asked again: already on the board
            for line in text.splitlines():
                if line.startswith("(END"):
                    return
                if retry or line.startswith("(C"):
                    continue
                if colour is None:
                    colour = Colour.parse(line)
                else:
                    board = board.play(parse_line(line))  # type: ignore[arg-type]
            if colour is board.to_move and not board.is_game_over():
                if self.attempts:
                    self.outbox.write_bytes(self.attempts.pop(0))
                    continue
                move = board.legal_moves()[0]
                board = board.play(move)
                encode = self.encodings.pop(0) if self.encodings else str.encode
                self.outbox.write_bytes(encode(move.line() + "\n"))

    def __enter__(self) -> "Person":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.join(5)


def _game(tmp_path: Path, person: Person, person_colour: Colour, config: GameConfig = PEOPLE,
          events: Optional[list[GameEvent]] = None) -> GameRecord:
    bot = AgentSpec.program("bot", command(write_agent(tmp_path)))
    me = AgentSpec.manual("me")
    white, black = (me, bot) if person_colour is not BLACK else (bot, me)
    with person:
        return play_game(white, black, config, tmp_path / "g", on_event=events.append if events is not None else None)


# -- 11.5: a person playing Black loses no message --------------------------------------------


def test_a_person_playing_black_who_reads_pauses_and_deletes_loses_no_message(tmp_path: Path) -> None:
    # The person is slower than a program: they delete what they read only once White's
    # first move has reached their me.in (so a colour file alone would have been replaced).
    whites_move_relayed = threading.Event()

    def on_event(event: GameEvent) -> None:
        if event.kind == "relayed" and event.colour is BLACK:
            whites_move_relayed.set()

    person = Person(tmp_path / "g" / "me", pause=lambda: whites_move_relayed.wait(20))
    bot = AgentSpec.program("bot", command(write_agent(tmp_path)))
    with person:
        record = play_game(bot, AgentSpec.manual("me"), PEOPLE, tmp_path / "g", on_event=on_event)
    assert record.result is not None and record.result.termination == "normal", record.result
    first = person.seen[0].splitlines()
    assert first[0] == "B" and first[1] == record.moves[0].move.line()  # colour and White's move, in one file


# -- 11.6: a person's typo is pointed out, and they are asked again ----------------------------

TYPOS = (
    b"hello",  # saved without a newline: complete once the editor closed it
    b"W D 3\n",
    b"(W I 3)\n",
    "\uff08W D 3\uff09\n".encode(),  # full-width brackets
    b"(W A 1)\n",  # flips nothing
    b"(B D 3)\n",  # not the person's colour
)


def test_a_persons_typos_are_explained_and_asked_again_and_counted(tmp_path: Path) -> None:
    events: list[GameEvent] = []
    person = Person(
        tmp_path / "g" / "me", attempts=TYPOS,
        encodings=(lambda text: codecs.BOM_UTF8 + text.encode(), lambda text: text.replace("\n", "\r\n").encode("utf-16")),
    )
    record = _game(tmp_path, person, WHITE, events=events)
    assert record.result is not None and record.result.termination == "normal", record.result
    assert record.extra["agents"]["me"]["retries"] == len(TYPOS)
    notes = record.moves[0].comments
    assert len(notes) == len(TYPOS) and notes[0].startswith("retry 1: me.out was malformed")
    assert "(W A 1): A1 flips no disc" in notes[4] and "not White's" not in notes[4]
    # the person is told in me.in (written again after they deleted it) and in the terminal
    retries = [text for text in person.seen if text.startswith("(C")]
    assert len(retries) == len(TYPOS)
    assert "full-width brackets" in retries[3] and "legal: D3 C4 F5 E6" in retries[3]
    assert retries[1].startswith("(C your me.out was malformed: could not parse move line 'W D 3'")
    assert retries[0].splitlines()[1] == "W"  # what the person answers, again
    told = [e.message for e in events if e.kind == "retry"]
    assert len(told) == len(TYPOS) and "A1 flips no disc; legal: D3 C4 F5 E6" in told[4]
    assert all(e.kind != "retry" for e in events[events.index(next(e for e in events if e.kind == "move")):])


@pytest.mark.parametrize("typo, reason", [(b"hello\n", "malformed"), (b"(W A 1)\n", "illegal")])
def test_strict_manual_makes_a_person_as_strict_as_a_program(tmp_path: Path, typo: bytes, reason: str) -> None:
    person = Person(tmp_path / "g" / "me", attempts=(typo,))
    config = GameConfig(time_per_move=5, end_grace=0.3, manual_time=30, strict_manual=True)
    record = _game(tmp_path, person, WHITE, config)
    assert record.result is not None and record.result.termination == reason
    assert record.name(record.result.winner) == "bot"  # type: ignore[arg-type]


def test_the_cli_prompt_says_what_was_wrong_and_what_is_legal(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    with Person(tmp_path / "g" / "me", attempts=(b"(W A 1)\n",)):
        result = CliRunner().invoke(cli, [
            "play", "manual:me", f"bot={command(script)[0]} {script}", "--seed", "1", "--time", "3", "-q",
            "--out", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    record = GameRecord.load(str(tmp_path / "g" / "game.json"))
    assert record.white == "me", "seed 1 makes the person White"
    assert "me: your me.out was illegal: (W A 1): A1 flips no disc; legal: D3 C4 F5 E6" in result.stderr
    assert result.stderr.count("me (White) to move") >= 2  # prompted again
    strict = CliRunner().invoke(cli, ["play", "--help"])
    assert "--strict-manual" in strict.output


# -- what the referee reads, for everyone ---------------------------------------------------


def test_a_bom_and_utf16_are_text() -> None:
    assert files.decode(codecs.BOM_UTF8 + b"(W D 3)\n") == "(W D 3)\n"
    assert files.decode("(W D 3)\r\n".encode("utf-16")) == "(W D 3)\r\n"
    assert files.decode("(W D 3)".encode("utf-16-be").join([codecs.BOM_UTF16_BE, b""])) == "(W D 3)"
    assert files.decode("(W D 3)\n".encode("utf-16")[:-1]) == "(W D 3)"  # half a character: not yet
    assert files.read_message("W D 3", closed=True) is None  # a program: still being written
    typo = files.read_message("W D 3", closed=True, person=True)  # a person: saved, a typo to point out
    assert typo is not None and typo.move is None and "a move without its brackets?" in typo.error


@pytest.mark.parametrize("fault", ["bom", "utf16"])
def test_a_program_writing_a_bom_or_utf16_is_read(tmp_path: Path, fault: str) -> None:
    script = write_agent(tmp_path)
    record = play_game(AgentSpec.program("alice", command(script, fault, 1)), AgentSpec.program("bob", command(script)),
                       GameConfig(time_per_move=3, end_grace=0.3), tmp_path / "g")
    assert record.result is not None and record.result.termination == "normal", record.result


def test_a_program_still_loses_on_a_typo(tmp_path: Path) -> None:
    script = write_agent(tmp_path)
    record = play_game(AgentSpec.program("alice", command(script, "garbage", 0)), AgentSpec.program("bob", command(script)),
                       GameConfig(time_per_move=3, end_grace=0.3), tmp_path / "g")
    assert record.result is not None and record.result.termination == "malformed"
    assert "retries" not in record.extra["agents"]["alice"]


def test_a_persons_own_game_clock_is_said_in_every_prompt(tmp_path: Path) -> None:
    """``--manual-clock`` gives the person a bank (programs keep theirs: --clock); each prompt says what is left
    of it, the figure the record keeps after the person's previous move, and the record keeps the person's clock."""
    script = write_agent(tmp_path)
    with Person(tmp_path / "g" / "me"):
        result = CliRunner().invoke(cli, [
            "play", "manual:me", f"bot={command(script)[0]} {script}", "--seed", "1", "--clock", "5+0.1",
            "--manual-clock", "30+1", "-q", "--out", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    record = GameRecord.load(str(tmp_path / "g" / "game.json"))
    assert record.result is not None and record.result.termination == "normal", record.result
    assert record.white == "me" and record.extra["agents"]["me"]["clock"] == "30+1"
    assert record.extra["agents"]["bot"]["clock"] == "5+0.1"
    said = [line.split("your clock: ", 1)[1].split(" s left", 1)[0]
            for line in result.stderr.splitlines() if line.startswith("me (White) to move")]
    banks = [entry.clock for entry in record.moves if entry.move.colour is WHITE]
    assert said[0] == "30.0" and len(said) == len(banks)
    # each later prompt: what is left when it is printed, the bank after the person's last move (the record's
    # figure) less the moments since the turn began (well under a second: the bot answers at once), to 0.1 s
    wrong = [(n, text, bank) for n, (text, bank) in enumerate(zip(said[1:], banks))
             if not (bank or 0) - 1.0 <= float(text) <= (bank or 0) + 0.05]
    assert not wrong, (wrong, result.stderr)
    assert float(said[-1]) > 30  # the increments: a person who answers at once gains time


def test_a_bad_manual_clock_is_named() -> None:
    result = CliRunner().invoke(cli, ["play", "manual:me", "random", "--manual-clock", "30"])
    assert result.exit_code == 2 and "--manual-clock" in result.output and "BASE+INC" in result.output
