"""class.toml declared once: its tables read by the tournament file's declared-table reader, the template that
``othello class init`` writes made from the same declarations, and a ``[referee]`` table whose limits reach every
class game (a real ladder game's record), the admission checks and the final.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from test_classroom_ladder import admit_version
from test_classroom_server import EXAMPLES, make_class

from othello_arena.classroom.final import plan_final, tournament_file
from othello_arena.classroom.ladder import Ladder
from othello_arena.classroom.settings import (DEFAULT_REFERENCES, TABLES, ClassSettings, SettingsError, load,
                                             write_template)
from othello_arena.classroom.store import ClassStore
from othello_arena.protocol import GameRecord
from othello_arena.referee import GameConfig
from othello_arena.tournaments.schedule import config as tournament_config

# class.toml as othello class init wrote it before the tables were declared once: such files must still load.
EARLIER_TEMPLATE = """\
# The class's settings (othello class init wrote this; the server reads it when it starts).
[class]
name = {name}
time_per_move = {time}              # seconds per move, in the checks and every game
# clock = "300+2"                   # a game clock instead (PROTOCOL.md section 10): a bank of 300 s, 2 s more a
#                                   # move; time_per_move then caps a single move (delete it for the bank alone)
# deadline = "2026-12-04T18:00:00+01:00"   # ISO 8601: the final plays each student's last version admitted before it
# The reference agents, weakest first: the rungs a new version climbs.  A built-in agent by name, or
# NAME@SECONDS: that agent with its own seconds per move (the champion at small times).
references = [{references}]

[ladder]
games_per_pairing = 2               # a game pair: the same opening, colours swapped
openings = "balanced"               # the shipped suite of balanced openings, or "none" (programs that declare openings)
concurrency = "auto"                # games at once: all cores but one; or a number
pairs_per_opponent = 2              # game pairs between two students' current versions, then the ladder moves on
stop_climb_at = 0.0                 # a pair scoring at most this against a reference ends the climb

[admission]
build_timeout = 120                 # seconds for a version's build line
submissions_per_hour = 12           # per student
max_upload_bytes = 4_000_000        # a whole upload (the request body is refused beyond this)
max_files = 200
max_file_bytes = 2_000_000
max_depth = 8                       # folders inside a submission

[final]
format = "round-robin"              # or "double-round-robin", "swiss"
games_per_pairing = 2
references = []                     # reference agents that play in the final too (never ranked among students)
"""


def settings_of(tmp_path: Path, text: str) -> ClassSettings:
    folder = tmp_path / "class"
    folder.mkdir(exist_ok=True)
    (folder / "class.toml").write_text(text, encoding="utf-8")
    return load(folder)


def test_a_class_toml_of_the_earlier_template_still_loads(tmp_path: Path) -> None:
    references = ", ".join(f'"{name}"' for name in DEFAULT_REFERENCES)
    settings = settings_of(tmp_path, EARLIER_TEMPLATE.format(name='"Class"', time="0.3", references=references))
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    write_template(fresh, "Class", 0.3)
    again = load(fresh)
    assert settings.name == again.name == "Class" and settings.time == again.time
    # the earlier template wrote the final's 2 games a pairing out: kept as given (the new one leaves the default)
    assert settings.final.games_per_pairing == 2 and again.final.games_per_pairing is None
    assert (settings.references, settings.ladder, settings.admission, replace(settings.final, games_per_pairing=None)) == \
        (again.references, again.ladder, again.admission, again.final)
    assert settings.referee == again.referee == {} and settings.game.memory_mb == GameConfig.memory_mb


def test_the_template_shows_every_declared_key_and_reads_back_as_the_declared_defaults(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    text = write_template(folder, 'Mr "Smith"\'s class', 0.5).read_text(encoding="utf-8")
    for title, declaration in TABLES.items():
        assert f"\n[{title}]\n" in text
        for item in dataclasses.fields(declaration):
            doc = item.metadata["rule"].doc
            assert re.search(rf"^(# )?{item.name} = ", text, re.M), item.name  # set, or commented out with an example
            assert doc.split()[0] in text  # its doc beside it
    assert all(len(line) <= 120 for line in text.splitlines() if not line.startswith("references ="))
    settings = load(folder)
    assert settings.name == 'Mr "Smith"\'s class' and settings.time.per_move == 0.5 and settings.time.clock is None
    for table in (settings.ladder, settings.admission, settings.final):
        assert table == type(table)()  # every key as declared
    assert [ref.name for ref in settings.references][:2] == ["random", "greedy"] and settings.referee == {}


@pytest.mark.parametrize("text, message", [
    ("[class]\ntime_per_move = \"fast\"\n", "[class] time_per_move = \"fast\": expected a number"),
    ("[class]\ntime_per_move = 0\n", "[class] time_per_move = 0: expected a number of seconds from 0.01 to 600"),
    ("[class]\nreferences = [\"random\", \"nobody\"]\n", "[class] references: reference 'nobody': no built-in agent 'nobody'"),
    ("[class]\nreferences = [\"random\", \"random\"]\n", "[class] references names an agent twice"),
    ("[class]\nreferences = [\"random\", \"greedy@0\"]\n", "[class] references: reference 'greedy@0': seconds per move must be in (0, 600]"),
    ("[class]\ndeadline = \"Friday\"\n", "[class] deadline = 'Friday': not an ISO 8601 time"),
    ("[class]\nteacher = \"me\"\n", "unknown key(s) in [class]: teacher; known keys are clock, deadline, name, "
                                    "references, time_per_move"),
    ("[ladder]\ngames_per_pairing = 3\n", "[ladder] games_per_pairing = 3: expected an even number"),
    ("[ladder]\ngames_per_pairing = 2.0\n", "[ladder] games_per_pairing = 2.0: expected an integer"),
    ("[ladder]\nconcurrency = 0\n", "[ladder] concurrency = 0: expected \"auto\" or an integer from 1 to 1024"),
    ("[admission]\nmax_files = true\n", "[admission] max_files = true: expected an integer"),
    ("[final]\nformat = \"knockout\"\n", "[final] format 'knockout' is not one of round-robin, double-round-robin, swiss"),
    ("[final]\nreferences = [\"champion\"]\n[class]\nreferences = [\"random\"]\n",
     "[final] references names 'champion', not one of [class] references (random)"),
    ("[referee]\nmemory_mb = -1\n", "[referee] memory_mb = -1: expected an integer at least 0"),
    ("[referee]\nmemory_mb = \"1G\"\n", "[referee] memory_mb = \"1G\": expected an integer"),
    ("[referee]\nsize = 10\n", "unknown key(s) in [referee]: size; known keys are disk_mb, max_processes, memory_mb"),
    ("[tournament]\nname = \"x\"\n", "unknown table [tournament] (known: [class], [ladder], [admission], [final], [referee])"),
    ("[class\n", "not valid TOML"),
])
def test_a_bad_key_is_named_with_the_file_and_what_was_wrong(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SettingsError) as refused:
        settings_of(tmp_path, text)
    assert str(refused.value).startswith(f"{tmp_path / 'class' / 'class.toml'}: ") and message in str(refused.value)


def test_the_referee_table_takes_the_limits_of_a_tournament_file(tmp_path: Path) -> None:
    settings = settings_of(tmp_path, "[referee]\nmemory_mb = 512\nmax_processes = 0\n")
    assert settings.referee == {"memory_mb": 512, "max_processes": 0}
    assert (settings.game.memory_mb, settings.game.max_processes, settings.game.disk_mb) == (512, 0, GameConfig.disk_mb)
    # the same keys, the same checks as a tournament file's [referee]
    tournament = tournament_config.parse('agents = ["random", "greedy"]\n[referee]\nmemory_mb = 512\nmax_processes = 0\n',
                                         tmp_path / "t.toml")
    assert tournament.referee == settings.referee


def test_the_class_memory_limit_reaches_a_ladder_game_and_the_final(tmp_path: Path) -> None:
    """class.toml's [referee] memory_mb, through the ladder's own job and the real referee: the game's record has it."""
    from othello_arena.classroom.arena import play_job

    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["random"], pairs_per_opponent=1)
    with open(folder / "class.toml", "a", encoding="utf-8") as settings_file:
        settings_file.write("memory_mb = 1000\n")  # below the template's commented [referee] keys
    settings = load(folder)
    assert settings.referee == {"memory_mb": 1000}
    store = ClassStore(settings.database)
    home = folder / "builds" / "alice" / "fp1"
    home.mkdir(parents=True)
    shutil.copy(EXAMPLES / "corners.awk", home / "corners.awk")
    version = admit_version(store, "alice", "fp1", command="awk -f corners.awk {name}")
    ladder = Ladder(settings, store)
    assert ladder.plan() is not None  # alice's version climbs: a game pair against random
    game = next(game for game in store.games() if version in (game.white_version, game.black_version))
    job = ladder.job(game, remote=False)
    assert job.config.memory_mb == 1000
    played = play_job(job)
    record = GameRecord.from_dict(played.record)
    assert record.result is not None and record.result.termination.value == "normal", record.result
    written = GameRecord.load(str(Path(played.game_dir) / "game.json"))
    assert written.extra["referee"]["limits"]["memory_mb"] == 1000

    admitted = store.version(version)
    assert admitted is not None
    plan = plan_final(settings, store)
    assert plan.versions == (admitted,)
    final = tournament_file(settings, plan)
    assert tomllib.loads(final)["referee"] == {"memory_mb": 1000}  # (one student: too few to parse as a tournament)


def test_the_class_limits_reach_the_admission_checks(tmp_path: Path) -> None:
    """Admission checks a version with the class's referee settings (``settings.game``, as admission passes them):
    a program that writes 3 MB into its folder fails under ``[referee] disk_mb = 1``, told why."""
    from othello_arena.classroom.arena import AgentSpec, check_agent

    settings = settings_of(tmp_path, "[class]\ntime_per_move = 0.2\n[referee]\ndisk_mb = 1\n")
    home = tmp_path / "alice"
    home.mkdir()
    shutil.copy(EXAMPLES / "starter.py", home / "starter.py")
    (home / "big.py").write_text(
        "import os, runpy\n"
        "with open('scratch.bin', 'wb') as handle:  # in its own folder of the game\n"
        "    handle.write(b'x' * (3 << 20))\n"
        "runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'starter.py'), run_name='__main__')\n")
    spec = AgentSpec.from_command("alice", "python3 {home}/big.py {name}", base=home)
    card = check_agent(spec, time_per_move=settings.check_seconds, attempts=0, fail_fast=True, clock=settings.time.clock,
                       limits=settings.game)
    assert not card.passed and "File too large" in "\n".join(card.lines())
