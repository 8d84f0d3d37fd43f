"""othello class final: each student's last version admitted before the deadline, played by the tournament runner."""

from __future__ import annotations

import csv
import io
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import tomllib
from pathlib import Path
from typing import Callable, Iterator

import psutil
import pytest

from test_classroom_server import EXAMPLES, call, get_json, make_class, serving, wait_for

from othello_arena.classroom.admission import record_card
from othello_arena.classroom.arena import LocalPool, load_tournament
from othello_arena.classroom.final import (GAME_BUDGET, PAUSED, FinalMarker, FinalProcess, LadderPause, estimate_line,
                                           plan_final, tournament_file)
from othello_arena.classroom.grades import grade_sheet
from othello_arena.classroom.ladder import Ladder, Scheduler
from othello_arena.classroom.service import standings_json, standings_view
from othello_arena.classroom.settings import ClassSettings, SettingsError, load
from othello_arena.classroom.store import Card, ClassStore, GameStatus, NewVersion, Version, VersionStatus
from othello_arena.classroom.uploads import UploadRefused, parse_command
from othello_arena.referee.fingerprint import fingerprint


def admitted(folder: Path, student: str, submitted_at: str, marker: str,
             command: str = "python3 starter.py {name}") -> str:
    """A version as admission leaves it: its files, its built copy, its row (admitted)."""
    source = folder / "submissions" / student / "x"
    source.mkdir(parents=True)
    (source / "starter.py").write_text((EXAMPLES / "starter.py").read_text() + f"\n# {marker}\n")
    print_ = fingerprint(source, command)
    source = source.rename(source.parent / print_)
    shutil.copytree(source, folder / "builds" / student / print_)
    db = sqlite3.connect(folder / "class.sqlite")
    db.execute("INSERT INTO versions (student, fingerprint, command, build, openings, files, bytes, submitted_at, "
               "status, card) VALUES (?, ?, ?, '', 1, '[]', 0, ?, 'admitted', '{}')",
               (student, print_, command, submitted_at))
    db.commit()
    db.close()
    return print_


@pytest.mark.slow
def test_the_final_plays_the_last_versions_before_the_deadline(tmp_path: Path) -> None:
    """A final with references = ["greedy"]: greedy plays, is never ranked; openings in pairs; the sheet has it."""
    folder = tmp_path / "class"
    make_class(folder, ["alice", "bob"], ["random", "greedy"], time=0.25)
    text = (folder / "class.toml").read_text()
    text = text.replace("references = []", 'references = ["greedy"]\ngames_per_pairing = 4')
    text = text.replace('# deadline = "2026-12-04T18:00:00+01:00"', 'deadline = "2026-06-01T12:00:00+00:00"')
    (folder / "class.toml").write_text(text)
    before = admitted(folder, "alice", "2026-05-30T10:00:00+00:00", "v1")
    admitted(folder, "alice", "2026-06-02T10:00:00+00:00", "v2 (late)")
    # the command that made json.dumps write surrogate escapes TOML refused (the whole final failed)
    bob = admitted(folder, "bob", "2026-05-31T10:00:00+00:00", "bob", command="python3 starter.py 😀 {name}")
    final = subprocess.Popen([sys.executable, "-m", "othello_arena", "class", "final", str(folder), "-j", "2"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert final.stdout is not None
        said = []
        for line in final.stdout:  # the plan is said first; then the runner plays, the marker held
            said.append(line)
            if line.startswith("The ladder is paused while the final runs"):
                break
        assert FinalMarker(folder).running()
        said += final.stdout.readlines()
        assert final.wait(timeout=900) == 0, "".join(said)
    finally:
        final.kill()
        final.wait()
        if final.stdout is not None:
            final.stdout.close()
    output = "".join(said)
    assert "Openings: balanced; each pairing plays its openings twice, the colours swapped." in output
    assert "The final: 2 students, 1 reference, 3 pairings, 12 games" in output
    assert not FinalMarker(folder).running()  # released: the ladder goes on
    final_file = (folder / "final.toml").read_text()
    assert before in final_file and bob in final_file and "v2" not in final_file and f"builds/alice/{before}" in final_file
    tournament = load_tournament(folder / "final.toml")
    assert tournament.references == ("greedy",) and {a.id for a in tournament.agents} == {"alice", "bob", ""}
    assert tournament.openings is not None and tournament.games_per_pairing == 4
    games = sqlite3.connect(folder / "final" / "results" / "tournament.sqlite")
    played = list(games.execute("SELECT white, black, reason FROM games"))
    games.close()
    assert {name for row in played for name in row[:2]} == {"alice", "bob", "greedy"} and len(played) == 12
    assert {row[2] for row in played} <= {"normal", "timeout"}  # bob's emoji command started every game
    # (a game on a loaded machine may end by a 0.25 s move overrun: never by a program that could not start)
    assert (folder / "final" / "results" / "report").is_dir()
    # the sheet: the final's rank among the students only (greedy is none of them), points and games as numbers
    store = ClassStore(folder / "class.sqlite")
    try:
        rows = {row["id"]: row for row in csv.DictReader(io.StringIO(grade_sheet(load(folder), store)[1:]))}
    finally:
        store.close()
    assert set(rows) == {"alice", "bob"}
    assert sorted(rows[s]["final_rank"] for s in rows) in (["1", "2"], ["1", "1"])
    for row in rows.values():
        assert row["final_games"] == "8" and 0 <= float(row["final_points"]) <= 8
        assert 1 <= int(row["final_rank_best"]) <= int(row["final_rank"]) <= int(row["final_rank_worst"]) <= 2


# -- the final's file: written by a TOML writer, read back by the tournament runner ---------------

HOSTILE_COMMANDS = [
    "python3 agent.py 😀 {name}",  # an emoji: json.dumps wrote surrogate escapes that TOML refuses
    'python3 "my agent.py" {name}',  # quotes
    "python3 agent.py C:\\\\x\\u {name}",  # backslashes, one that looks like an escape
    "python3 agent.py 'Zoë Ångström' {name}\t#",  # diacritics, a tab
    "python3 agent.py \x7f {name}",  # DEL: raw in a TOML string it is refused
]


@pytest.fixture
def final_class(class_folder) -> Iterator[Callable[..., tuple[ClassSettings, ClassStore]]]:
    """``final_class(students, references, final=[...])``: a new class whose final has these references."""
    opened: list[ClassStore] = []

    def make(students: list[str], references: list[str], final: list[str] = []) -> tuple[ClassSettings, ClassStore]:
        folder = class_folder(students, references)
        text = (folder / "class.toml").read_text(encoding="utf-8")
        (folder / "class.toml").write_text(text.replace("\nreferences = []", f"\nreferences = {json.dumps(final)}"),
                                           encoding="utf-8")
        settings = load(folder)
        assert settings.final.references == tuple(final)
        opened.append(ClassStore(settings.database))
        return settings, opened[-1]

    yield make
    for store in opened:
        store.close()


def stored_version(store: ClassStore, student: str, command: str, openings: bool = True) -> Version:
    version, _ = store.add_version(NewVersion(student, f"fp-{student}", command, "", openings, False, ()),
                                   check_again=lambda _: False)
    store.decide(Card(student, version.id, version.fingerprint, VersionStatus.ADMITTED, ""))
    (Path(store.path).parent / "builds" / student / version.fingerprint).mkdir(parents=True)  # its built copy
    found = store.version(version.id)
    assert found is not None
    return found


def test_every_students_command_round_trips_through_final_toml_and_references_are_marked(final_class) -> None:
    students = [f"s{i}" for i in range(len(HOSTILE_COMMANDS))]
    settings, store = final_class(students, ["random", "greedy"], final=["greedy"])
    for student, command in zip(students, HOSTILE_COMMANDS):
        stored_version(store, student, command)
    plan = plan_final(settings, store)
    path = settings.folder / "final.toml"
    path.write_text(tournament_file(settings, plan), encoding="utf-8")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    commands = {agent["name"]: agent.get("command") for agent in data["agents"]}
    assert [commands[student] for student in students] == HOSTILE_COMMANDS
    tournament = load_tournament(path)  # the runner's own reader takes it whole
    by_name = {agent.name: agent for agent in tournament.agents}
    assert [by_name[student].command for student in students] == HOSTILE_COMMANDS
    assert by_name["greedy"].reference and tournament.references == ("greedy",)
    assert all(by_name[student].id == student and not by_name[student].reference for student in students)
    assert tournament.openings is not None and tournament.games_per_pairing == plan.games_per_pairing


def test_a_command_that_is_not_unicode_never_reaches_a_file(final_class) -> None:
    """A lone surrogate cannot be stored (so never written into final.toml): the store refuses it, nothing kept."""
    settings, store = final_class(["alice"], ["greedy"], final=["greedy"])
    with pytest.raises(UnicodeEncodeError):
        stored_version(store, "alice", "python3 agent.py \ud800 {name}")
    assert store.versions() == []


def test_newlines_are_refused_where_the_server_takes_a_command() -> None:
    """A command or build line is one line (so no file the server writes ever holds one across lines)."""
    for command, build in (("python3 agent.py {name}\nrm -rf ~", ""), ("python3 agent.py {name}", "make\nmake")):
        with pytest.raises(UploadRefused, match="one line"):
            parse_command(command, build)


def test_student_strings_round_trip_through_the_store_the_cards_and_the_sheet(class_store) -> None:
    """Every other file the server writes and reads back: class.sqlite's JSON columns, the cards, the sheet."""
    settings, store = class_store(["alice"], ["greedy"])
    name = 'Zoë "Z" Ångström \\ 😀'
    store.rename_student("alice", name, {"e-mail": "zoë@example.org", "note": 'a "quoted", comma'})
    files = (('weird "name" \\ 😀.py', 10), ("ünï/cödé.c", 3))
    version, _ = store.add_version(NewVersion("alice", "fp", HOSTILE_COMMANDS[0], "make 'x' \\", True, False, files),
                                   check_again=lambda _: False)
    card = Card("alice", version.id, "fp", VersionStatus.ADMITTED, "ok 😀", command=HOSTILE_COMMANDS[0],
                build_log='"quoted" \\ 😀', stderr="é\tü", number=version.number)
    record_card(settings, store, card)
    again = store.version(version.id)
    assert again is not None and again.files == files and again.command == HOSTILE_COMMANDS[0]
    assert again.card is not None and again.card.to_dict() == card.to_dict()
    on_disk = json.loads(next((settings.folder / "cards").rglob("*.json")).read_text(encoding="utf-8"))
    assert on_disk == card.to_dict()
    student = store.student("alice")
    assert student is not None and student.name == name and student.extra["note"] == 'a "quoted", comma'
    rows = list(csv.DictReader(io.StringIO(grade_sheet(settings, store).removeprefix("\ufeff"))))
    assert rows[0]["name"] == name and rows[0]["e-mail"] == "zoë@example.org"


def test_a_class_folder_named_with_an_emoji_and_quotes_makes_a_class_toml_that_loads(tmp_path: Path) -> None:
    """othello class init writes class.toml with the folder's name as the class's: a TOML writer's quoting."""
    folder = tmp_path / 'Othello 😀 "2026" \\'
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nalice,Alice\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "othello_arena", "class", "init", str(folder), "--roster", str(roster)],
                   check=True, capture_output=True)
    assert load(folder).name == folder.name


# -- the final's length and its openings -------------------------------------------------------


@pytest.mark.parametrize(("students", "references", "pairings", "games"), [
    (30, 2, 496, 4),  # a class of 30: 1,984 games, an evening on two cores
    (10, 1, 55, 8),  # a small class: the most a pairing gets by default
    (60, 2, 1891, 2),  # a large one: the least a pairing can be
])
def test_the_default_length_stays_within_the_budget(final_class, students: int, references: int, pairings: int,
                                                    games: int) -> None:
    names = [f"s{i:02d}" for i in range(students)]
    refs = ["random", "greedy"][:references]
    settings, store = final_class(names, refs, final=refs)
    for student in names:
        stored_version(store, student, "python3 agent.py {name}")
    plan = plan_final(settings, store)
    assert (plan.pairings, plan.games_per_pairing) == (pairings, games)
    assert plan.openings == "balanced" and plan.games <= max(GAME_BUDGET, 2 * pairings)
    assert "hours" in estimate_line(plan, None, 2)


def test_a_program_that_does_not_read_openings_is_named_and_the_final_plays_from_the_start(final_class) -> None:
    settings, store = final_class(["alice", "bob"], ["greedy"], final=["greedy"])
    stored_version(store, "alice", "python3 agent.py {name}")
    stored_version(store, "bob", "python3 agent.py {name}", openings=False)
    plan = plan_final(settings, store)
    assert plan.openings is None and plan.games_per_pairing == 2
    said = " ".join(plan.notes)
    assert "bob does not declare that its program reads openings" in said and "start position" in said
    data = tomllib.loads(tournament_file(settings, plan))
    assert "openings" not in data["tournament"] and data["tournament"]["games_per_pairing"] == 2


def test_an_odd_games_per_pairing_is_refused_naming_the_key(class_folder) -> None:
    folder = class_folder(["alice"], ["greedy"])
    text = (folder / "class.toml").read_text(encoding="utf-8")
    (folder / "class.toml").write_text(text.replace("[final]", "[final]\ngames_per_pairing = 3", 1), encoding="utf-8")
    with pytest.raises(SettingsError, match=r"\[final\] games_per_pairing = 3: expected an even number"):
        load(folder)


# -- the pause: a final from a terminal or from the dashboard stops the ladder starting games ----------


def test_the_ladder_starts_no_game_while_a_final_process_lives(class_store) -> None:
    settings, store = class_store(["alice"], ["random"])
    stored_version(store, "alice", "python3 agent.py {name}")
    said: list[str] = []
    pause = LadderPause(settings.folder, said.append)
    pool = LocalPool(1)
    scheduler = Scheduler(Ladder(settings, store), pool, paused=pause)
    holder = hold_final(settings.folder)
    try:
        scheduler._fill()
        assert store.games() == [] and said == [f"ladder: {PAUSED} (games in flight finish)"]
        state = FinalProcess(settings).state()
        assert state["running"] and state["ladder"] == PAUSED  # what the dashboard shows
        assert FinalProcess(settings).start() is False  # one final at a time, wherever it was started
        assert standings_json(standings_view(settings, store))["paused"] == PAUSED
        holder.kill()
        holder.wait()
        # the killed final's marker is still there, but its process is gone: the ladder goes on
        assert (settings.folder / "final" / "running").exists()
        scheduler._fill()
        assert said[-1] == "ladder: the final ended: the ladder goes on"
        assert [game.status for game in store.games()][:1] == [GameStatus.RUNNING]
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
        pool.close(abandon=True)


def hold_final(folder: Path) -> "subprocess.Popen[str]":
    """A process that holds the final's marker as ``othello class final`` does while it plays (until killed)."""
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from othello_arena.classroom.final import FinalMarker; "
                               "FinalMarker(Path(sys.argv[1])).hold(); print('held', flush=True); time.sleep(600)",
                               str(folder)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


@pytest.mark.slow
def test_a_running_server_pauses_its_ladder_while_a_final_runs_and_says_so(tmp_path: Path) -> None:
    """A real server, a final held by another process (as from a terminal): no ladder game is planned, the
    dashboard, the standings, the API and the server's log say why; once the final's process is gone, it plays."""
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice"], ["greedy"], time=0.25)
    admitted(folder, "alice", "2026-05-30T10:00:00+00:00", "v1")
    holder = hold_final(folder)
    lines: list[str] = []
    try:
        with serving(folder, "-j", "1") as server:
            assert server.process.stdout is not None
            threading.Thread(target=lambda: lines.extend(server.process.stdout or ()), daemon=True).start()
            wait_for(lambda: f"ladder: {PAUSED} (games in flight finish)" in "".join(lines), 120, "the log's pause")
            status, body, _ = call(server.base, "/", tokens["instructor"])
            assert status == 200 and 'id="final-paused"' in body.decode() and PAUSED.capitalize() in body.decode()
            status, body, _ = call(server.base, "/standings", tokens["alice"])
            assert status == 200 and 'id="ladder-paused"' in body.decode()
            state = get_json(server.base, "/api/final", tokens["instructor"])
            assert state["running"] and state["ladder"] == PAUSED
            assert call(server.base, "/api/final", tokens["instructor"], body=b"")[0] == 409  # one final at a time
            assert games_of(folder) == 0  # paused from the first look: nothing planned
            holder.kill()
            wait_for(lambda: "ladder: the final ended: the ladder goes on" in "".join(lines), 120, "the log's end")
            wait_for(lambda: games_of(folder) > 0, 120, "a ladder game planned after the final")
            assert not get_json(server.base, "/api/final", tokens["instructor"])["running"]
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


def games_of(folder: Path) -> int:
    db = sqlite3.connect(folder / "class.sqlite")
    try:
        return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    finally:
        db.close()


@pytest.mark.slow
def test_a_final_stopped_from_the_server_ends_its_runner_and_lets_the_ladder_go_on(tmp_path: Path) -> None:
    """The server's shutdown stops the final it started: its tournament runner ends too (its games must not go
    on beside the ladder), the marker is released; the next ``othello class final`` resumes it."""
    folder = tmp_path / "class"
    make_class(folder, ["alice", "bob"], ["greedy"], time=0.25)
    admitted(folder, "alice", "2026-05-30T10:00:00+00:00", "alice")
    admitted(folder, "bob", "2026-05-30T10:00:00+00:00", "bob")
    final = FinalProcess(load(folder))
    assert final.start()
    try:
        assert final.process is not None
        parent = psutil.Process(final.process.pid)
        runner = wait_for(lambda: [child for child in parent.children(recursive=True)
                                   if "tournament" in " ".join(child.cmdline())], 120, "the tournament runner")
        assert FinalMarker(folder).running() and final.state()["running"]
    finally:
        final.stop()
    try:
        assert final.process is not None and final.process.returncode == 128 + signal.SIGTERM
        psutil.wait_procs(runner, timeout=30)
        assert not any(process.is_running() and process.status() != psutil.STATUS_ZOMBIE for process in runner)
        assert not (folder / "final" / "running").exists() and not final.state()["running"]
    finally:
        for process in runner:  # (left running only if the test failed)
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass


@pytest.mark.slow
def test_the_finals_timeouts_flagged_as_caused_by_load_are_played_again_a_few_times(tmp_path: Path) -> None:
    """As the ladder does: a game lost on a timeout the tournaments flag (here the loser slept: its clock ran, not
    its CPU) is played again with `othello tournament rerun --flagged`, at most LOAD_RETRIES times, then named."""
    from othello_arena.classroom.final import flagged_games
    from othello_arena.classroom.ladder import LOAD_RETRIES

    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["random", "greedy"], time=0.25)
    text = (folder / "class.toml").read_text()
    (folder / "class.toml").write_text(text.replace("references = []", 'references = ["greedy"]\ngames_per_pairing = 2'))
    sleeper = Path(__file__).resolve().parent / "cpu_agent.py"
    admitted(folder, "alice", "2026-05-30T10:00:00+00:00", "v1", command=f"python3 {sleeper} {{name}} --sleep 2 --at 2")
    done = subprocess.run([sys.executable, "-m", "othello_arena", "class", "final", str(folder), "-j", "1"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    for attempt in range(1, LOAD_RETRIES + 1):
        assert (f"2 game(s) lost on a timeout the machine's load may have caused: played again ({attempt} of at most "
                f"{LOAD_RETRIES})") in done.stdout, done.stdout
    assert (f"2 game(s) still lost on a timeout flagged as caused by load after {LOAD_RETRIES} replays (they count, "
            "flagged in the report)") in done.stdout
    flagged = flagged_games(folder / "final.toml")
    assert len(flagged) == 2 and all(game["loser"] == "alice" and game["attempts"] == LOAD_RETRIES + 1
                                     for game in flagged), flagged
    assert (folder / "final" / "results" / "report").is_dir()
