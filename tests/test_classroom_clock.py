"""The class's game clock: ``clock = "BASE+INC"`` in class.toml, read by the tournament key's rule, used by the
ladder's games (a real game under it) and the final, and said on the class's pages (a real server).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from test_classroom_server import call, make_class, serving

from othello_arena.classroom.final import tournament_file
from othello_arena.classroom.ladder import Ladder
from othello_arena.classroom.settings import SettingsError, load
from othello_arena.classroom.store import ClassStore, now
from othello_arena.protocol import GameRecord
from othello_arena.referee.clock import parse_clock

EXAMPLES = Path(__file__).resolve().parent.parent / "agents" / "examples"


def set_class_keys(folder: Path, **keys: object) -> None:
    """Write ``keys`` into class.toml's [class] table (a value ``None`` deletes the key)."""
    path = folder / "class.toml"
    text = path.read_text(encoding="utf-8")
    for key, value in keys.items():
        text = re.sub(rf"^{key} = .*\n", "", text, flags=re.M)
        if value is not None:
            shown = f'"{value}"' if isinstance(value, str) else str(value)
            text = text.replace("[class]\n", f"[class]\n{key} = {shown}\n", 1)
    path.write_text(text, encoding="utf-8")


def test_the_class_clock_is_a_bank_and_time_per_move_caps_a_move_only_when_given(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["random"], time=0.5)
    plain = load(folder)
    assert plain.clock is None and plain.game_time() == {"time_per_move": 0.5} and plain.time_text == "0.5 s a move"

    set_class_keys(folder, clock="300+2")  # the template gives time_per_move: it caps a single move
    capped = load(folder)
    assert capped.clock == (300.0, 2.0) and capped.clock_text == "300+2"
    assert capped.game_time() == {"time_per_move": 0.5, "clock": (300.0, 2.0)}
    assert capped.time_text == "clock 300+2, 0.5 s a move at most"

    set_class_keys(folder, time_per_move=None)  # the bank alone; the checks give a move a fair share of it
    bank = load(folder)
    assert bank.game_time() == {"time_per_move": None, "clock": (300.0, 2.0)}
    assert bank.time_text == "clock 300+2" and bank.time_per_move == 12.0  # 300 s over 30 moves, plus 2


@pytest.mark.parametrize("value", ["5", "+1", "-3+1", "300+", "1e9+1", "ten+1"])
def test_a_bad_class_clock_is_named_as_the_tournament_key_names_it(tmp_path: Path, value: str) -> None:
    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["random"])
    set_class_keys(folder, clock=value)
    with pytest.raises(ValueError) as expected:
        parse_clock(value)  # the one rule: --clock, the tournament's clock key, class.clock
    with pytest.raises(SettingsError) as refused:
        load(folder)
    assert str(refused.value) == f"{folder / 'class.toml'}: class.clock: {expected.value}"


def test_a_class_clock_that_is_not_a_string_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["random"])
    set_class_keys(folder, clock=300)
    with pytest.raises(SettingsError, match=r"class\.clock must be a string, not 300"):
        load(folder)


def test_a_ladder_game_is_played_under_the_class_clock_and_the_final_has_it(tmp_path: Path) -> None:
    """A student's admitted program (the Python starter, told only OTHELLO_CLOCK and a fair share) against a
    reference, through the ladder's own job and the real referee: the record keeps the clock and every bank."""
    from othello_arena.classroom.arena import play_job

    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["greedy"], pairs_per_opponent=1)
    set_class_keys(folder, clock="3+0.1", time_per_move=None)
    settings = load(folder)
    store = ClassStore(settings.database)
    home = folder / "builds" / "alice" / "fp1"
    home.mkdir(parents=True)
    shutil.copy(EXAMPLES / "starter.py", home / "starter.py")
    version = store.execute(
        "INSERT INTO versions (student, fingerprint, command, openings, files, bytes, submitted_at, status) "
        "VALUES ('alice', 'fp1', 'python3 starter.py {name}', 1, '[]', 0, ?, 'admitted')", now())
    ladder = Ladder(settings, store)
    assert ladder.plan() is not None  # alice's version climbs: a game pair against greedy
    game = store.row("SELECT * FROM games WHERE white_version = ? OR black_version = ? ORDER BY id", version, version)
    job = ladder.job(game, remote=False)
    assert job.config["clock"] == (3.0, 0.1) and job.config["time_per_move"] is None
    record = GameRecord.from_dict(play_job(job).record)
    assert record.result is not None and record.result.termination.value == "normal", record.result
    assert record.clock == "3+0.1" and all(entry.clock is not None for entry in record.moves)

    final = tournament_file(settings, [store.version(version)])
    assert 'clock = "3+0.1"' in final and "time_per_move" not in final.split("[[agents]]")[0]


def test_the_class_pages_say_the_clock(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice"], [])
    set_class_keys(folder, clock="300+2", time_per_move=None)
    with serving(folder, "-j", "1") as server:
        for who, path in (("alice", "/"), ("alice", "/standings"), ("instructor", "/")):
            status, body, _ = call(server.base, path, tokens[who])
            assert status == 200 and "clock 300+2" in body.decode("utf-8"), (who, path)
        status, body, _ = call(server.base, "/api/standings", tokens["alice"])
        assert status == 200 and b'"clock": "300+2"' in body.replace(b'":"', b'": "')
