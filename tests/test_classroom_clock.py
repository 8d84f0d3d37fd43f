"""The class's game clock: ``clock = "BASE+INC"`` in class.toml, read by the tournament key's rule, used by the
ladder's games (a real game under it) and the final, and said on the class's pages (a real server).
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tomllib
from pathlib import Path

import pytest

from test_classroom_ladder import admit_version
from test_classroom_server import call, make_class, serving

from othello_arena.classroom.final import plan_final, tournament_file
from othello_arena.classroom.ladder import Ladder
from othello_arena.classroom.settings import SettingsError, load
from othello_arena.classroom.store import SCHEMA, ClassStore
from othello_arena.classroom.uploads import parse_command
from othello_arena.tournaments.run.jobs import agent_spec
from othello_arena.protocol import GameRecord
from othello_arena.referee.clock import TimeRule, parse_clock

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
    assert plain.time == TimeRule(0.5) and plain.time.text == "0.5 s per move"
    assert (plain.game.time_per_move, plain.game.clock) == (0.5, None)

    set_class_keys(folder, clock="300+2")  # the template gives time_per_move: it caps a single move
    capped = load(folder)
    assert capped.time == TimeRule(0.5, (300.0, 2.0)) and capped.time.clock_text == "300+2"
    assert (capped.game.time_per_move, capped.game.clock) == (0.5, (300.0, 2.0))
    assert capped.time.text == "clock 300+2, 0.5 s per move at most"

    set_class_keys(folder, time_per_move=None)  # the bank alone; the checks give a move a fair share of it
    bank = load(folder)
    assert (bank.game.time_per_move, bank.game.clock) == (None, (300.0, 2.0))
    assert bank.time.text == "clock 300+2" and bank.check_seconds == 12.0  # 300 s over 30 moves, plus 2


@pytest.mark.parametrize("value", ["5", "+1", "-3+1", "300+", "1e9+1", "ten+1"])
def test_a_bad_class_clock_is_named_as_the_tournament_key_names_it(tmp_path: Path, value: str) -> None:
    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["random"])
    set_class_keys(folder, clock=value)
    with pytest.raises(ValueError) as expected:
        parse_clock(value)  # the one rule: --clock, the tournament's clock key, class.clock
    with pytest.raises(SettingsError) as refused:
        load(folder)
    assert str(refused.value) == f"{folder / 'class.toml'}: [class] clock: {expected.value}"


def test_a_class_clock_that_is_not_a_string_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["random"])
    set_class_keys(folder, clock=300)
    with pytest.raises(SettingsError, match=r"class\.toml: \[class\] clock = 300: expected a string \"BASE\+INC\""):
        load(folder)


def test_a_ladder_game_is_played_under_the_class_clock_and_the_final_has_it(tmp_path: Path) -> None:
    """A student's admitted program (the Python starter, sent as clock:openings:..., so it reads its bank) against
    a reference, through the ladder's own job and the real referee: the record keeps the clock and every bank."""
    from othello_arena.classroom.arena import play_job

    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["greedy"], pairs_per_opponent=1)
    set_class_keys(folder, clock="3+0.1", time_per_move=None)
    settings = load(folder)
    store = ClassStore(settings.database)
    home = folder / "builds" / "alice" / "fp1"
    home.mkdir(parents=True)
    shutil.copy(EXAMPLES / "starter.py", home / "starter.py")
    command, _, openings, reads_clock = parse_command("clock:openings:python3 starter.py {name}", "")
    version = admit_version(store, "alice", "fp1", command, openings, reads_clock)
    ladder = Ladder(settings, store)
    assert ladder.plan() is not None  # alice's version climbs: a game pair against greedy
    game = next(game for game in store.games() if version in (game.white_version, game.black_version))
    job = ladder.job(game, remote=False)
    assert job.config.clock == (3.0, 0.1) and job.config.time_per_move is None
    alice = job.white if job.white.name == "alice" else job.black
    assert alice.reads_clock and alice.openings and agent_spec(alice).reads_clock  # (CLOCK s) in its NAME.in
    record = GameRecord.from_dict(play_job(job).record)
    assert record.result is not None and record.result.termination.value == "normal", record.result
    assert record.clock == "3+0.1" and all(entry.clock is not None for entry in record.moves)

    admitted = store.version(version)
    assert admitted is not None
    final = tomllib.loads(tournament_file(settings, plan_final(settings, store)))
    assert final["tournament"]["clock"] == "3+0.1" and "time_per_move" not in final["tournament"]
    assert [agent.get("reads_clock") for agent in final["agents"]] == [True]


def test_a_class_database_made_before_the_clock_gains_the_declaration(tmp_path: Path) -> None:
    """A class.sqlite whose versions table has no reads_clock column (made before the game clock) gets one,
    every existing version reading as not declaring it."""
    path = tmp_path / "class.sqlite"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA.replace("    reads_clock INTEGER NOT NULL DEFAULT 0, -- the program declared that it reads the clock line\n", ""))
    db.execute("INSERT INTO students (id, name, token_sha256, added_at) VALUES ('alice', 'Alice', 'x', 'now')")
    db.execute("INSERT INTO versions (student, fingerprint, command, files, bytes, submitted_at, status) "
               "VALUES ('alice', 'fp', './a {name}', '[]', 0, 'now', 'admitted')")
    db.commit()
    assert "reads_clock" not in {row[1] for row in db.execute("PRAGMA table_info(versions)")}
    db.close()
    store = ClassStore(path)
    assert store.versions()[0].reads_clock is False
    store.close()


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
