"""A tournament that changes as the class does: a resubmission, a late student, a cheater withdrawn.

Real runs through the CLI (real agent processes, real files, real SQLite).
Each test checks that exactly the right games are played, that nothing else
moves (same keys, seeds, colours, records, attempts), and that standings,
counts, status, the export and the report agree.
"""

from __future__ import annotations

import csv
import datetime
import json
import sys
from pathlib import Path

from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.tournaments.schedule import config, pairing
from tournament_helpers import AGENT, agent, agent_with_build, query, write_tournament

THREE = [agent("first", "first"), agent("last", "last"), agent("flips", "flips")]


def invoke(*args: str):
    return CliRunner().invoke(cli, ["tournament", *args], catch_exceptions=False)


def status_json(path: Path) -> dict:
    result = invoke("status", str(path), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def games(database: Path) -> dict[str, dict]:
    return {row["key"]: dict(row) for row in query(database, "SELECT * FROM games")}


def assert_untouched(before: dict[str, dict], after: dict[str, dict]) -> None:
    """Every game of ``before`` is still there exactly as it was: not replayed, not re-seeded, not recoloured."""
    for key, row in before.items():
        for column in ("white", "black", "seed", "status", "attempts", "record", "record_sha256", "finished"):
            assert after[key][column] == row[column], (key, column)


def assert_counts_agree(path: Path, players: int, games_per_player: int) -> dict:
    state = status_json(path)
    assert state["finished"] == state["scheduled"] and state["complete"]
    assert len(state["standings"]) == players
    assert sum(line["games"] for line in state["standings"]) == 2 * state["finished"]
    assert {line["games"] for line in state["standings"]} == {games_per_player}
    assert sum(line["points"] for line in state["standings"]) == state["finished"]
    # The report is refreshed at the end of every run and says the same.
    report = json.loads((path.parent / "results" / "report" / "status.json").read_text())
    assert (report["finished"], report["scheduled"]) == (state["finished"], state["scheduled"])
    return state


def test_a_late_student_plays_only_their_own_games(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, THREE, concurrency=2, seed=3)
    database = tmp_path / "results" / "tournament.sqlite"
    assert invoke("run", str(path), "-q").exit_code == 0
    before = games(database)
    assert len(before) == 6

    path = write_tournament(tmp_path, [*THREE, agent("late", "flips")], concurrency=2, seed=3)
    state = status_json(path)  # status already tells what run will add
    assert (state["finished"], state["scheduled"], state["to_add"]) == (6, 12, 6)
    result = invoke("run", str(path), "-q")
    assert result.exit_code == 0, result.output
    assert "6 new game(s) scheduled in round 4 for late" in result.output
    assert result.output.count("Started game") == 6
    after = games(database)
    assert_untouched(before, after)
    new = [row for key, row in after.items() if key not in before]
    assert len(new) == 6 and all("late" in (row["white"], row["black"]) for row in new)
    assert all(row["round"] == 4 and row["attempts"] == 1 and row["status"] == "finished" for row in new)
    # The newcomer's games have the seeds and colours they would have had from the start.
    fresh = pairing.fixed_schedule(config.load(path))
    assert fresh is not None
    wanted = sorted((g.white, g.black, g.seed) for g in fresh if "late" in (g.white, g.black))
    assert sorted((row["white"], row["black"], row["seed"]) for row in new) == wanted
    state = assert_counts_agree(path, 4, 6)
    assert state["rounds"] == {"total": 4, "paired": 4, "complete": 4}
    # And once more: nothing to add, nothing played.
    again = invoke("run", str(path), "-q")
    assert "all 12 games are played" in again.output and "Started game" not in again.output


def test_a_gauntlet_schedules_only_the_newcomer_against_the_references(tmp_path: Path) -> None:
    field = [agent("ref", "flips"), agent("s1", "first"), agent("s2", "last")]
    path = write_tournament(tmp_path, field, format="gauntlet", gauntlet=["ref"], concurrency=2)
    database = tmp_path / "results" / "tournament.sqlite"
    assert invoke("run", str(path), "-q").exit_code == 0
    before = games(database)
    path = write_tournament(tmp_path, [*field, agent("s3", "flips")], format="gauntlet", gauntlet=["ref"],
                            concurrency=2)
    result = invoke("run", str(path), "-q")
    assert result.exit_code == 0, result.output
    after = games(database)
    assert_untouched(before, after)
    new = [row for key, row in after.items() if key not in before]
    assert sorted(frozenset((r["white"], r["black"])) == frozenset(("ref", "s3")) for r in new) == [True, True]
    assert status_json(path)["finished"] == 6


def test_a_swiss_takes_a_newcomer_from_the_next_round(tmp_path: Path) -> None:
    field = [agent("a", "first"), agent("b", "last"), agent("c", "flips"), agent("d", "last", "--crash-at 5")]
    path = write_tournament(tmp_path, field, format="swiss", rounds=3, concurrency=2, seed=11)
    database = tmp_path / "results" / "tournament.sqlite"
    assert invoke("run", str(path), "-q", "--max-games", "4").exit_code == 0  # round 1: 2 pairs x 2 games
    before = games(database)
    assert {row["round"] for row in before.values()} == {1}
    path = write_tournament(tmp_path, [*field, agent("e", "flips")], format="swiss", rounds=3, concurrency=2,
                            seed=11)
    state = status_json(path)
    assert (state["finished"], state["scheduled"]) == (4, 4 + 2 * 4)  # 5 agents: 2 pairs a round and a bye
    assert invoke("resume", str(path), "-q").exit_code == 0
    after = games(database)
    assert_untouched(before, after)
    round_two = [row for row in after.values() if row["round"] == 2]
    byes = [row["bye"] for row in query(database, "SELECT bye FROM rounds ORDER BY round")]
    assert byes[0] is None and "e" in {r["white"] for r in round_two} | {r["black"] for r in round_two} | {byes[1]}
    state = status_json(path)
    assert state["finished"] == state["scheduled"] == 12 and state["rounds"]["complete"] == 3


def test_withdrawing_a_cheater_leaves_the_counts_right(tmp_path: Path) -> None:
    field = [*THREE, agent("cheat", "flips")]
    path = write_tournament(tmp_path, field, concurrency=2, seed=4)
    database = tmp_path / "results" / "tournament.sqlite"
    assert invoke("run", str(path), "-q", "--max-games", "8").exit_code == 0
    before = games(database)
    played_by_cheat = sum(1 for r in before.values() if r["status"] == "finished" and "cheat" in (r["white"], r["black"]))

    result = invoke("withdraw", str(path), "cheat", "--reason", "copied greedy.c")
    assert result.exit_code == 0, result.output
    assert "cheat is withdrawn (copied greedy.c)" in result.output
    state = status_json(path)
    assert state["scheduled"] == 6 and state["finished"] == 8 - played_by_cheat
    assert state["withdrawn"] == [{"agent": "cheat", "reason": "copied greedy.c", "games": 6}]
    assert state["withdrawn_games"] == 6 and "cheat" not in {line["agent"] for line in state["standings"]}
    text = invoke("status", str(path)).output
    assert "withdrawn: cheat (copied greedy.c)" in text and f"of 6 games finished" in text

    result = invoke("resume", str(path), "-q")
    assert result.exit_code == 0, result.output
    after = games(database)
    assert_untouched({k: row for k, row in before.items() if row["status"] == "finished"}, after)
    # Cheat's unplayed games were never played; they stay in the database, as do its played ones.
    for key, row in after.items():
        if "cheat" in (row["white"], row["black"]):
            assert row["status"] == before[key]["status"] and row["attempts"] == before[key]["attempts"]
        else:
            assert row["status"] == "finished"
    assert_counts_agree(path, 3, 4)
    report = json.loads((tmp_path / "results" / "report" / "status.json").read_text())
    assert report["withdrawn"][0]["reason"] == "copied greedy.c"


def test_withdraw_in_the_file_before_any_game(tmp_path: Path) -> None:
    cheat = agent("cheat", "flips") + 'withdraw = true\nwithdraw_reason = "left the course"\n'
    path = write_tournament(tmp_path, [*THREE, cheat], concurrency=2)
    assert "WITHDRAWN: left the course" in invoke("check", str(path)).output
    result = invoke("run", str(path), "-q")
    assert result.exit_code == 0, result.output
    assert "cheat is withdrawn (left the course)" in result.output and "Done: 6 games" in result.output
    assert not query(tmp_path / "results" / "tournament.sqlite",
                     "SELECT 1 FROM games WHERE white = 'cheat' OR black = 'cheat'")
    assert_counts_agree(path, 3, 4)


def test_dropping_an_agent_from_the_file_is_refused_with_the_way_out(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, THREE)
    assert invoke("run", str(path), "-q", "--max-games", "1").exit_code == 0
    path = write_tournament(tmp_path, THREE[:2])
    result = CliRunner().invoke(cli, ["tournament", "resume", str(path)])
    assert result.exit_code == 1
    assert "flips have games in" in result.output and "withdraw = true" in result.output


def test_rerun_after_a_resubmission_replays_only_that_agents_games(tmp_path: Path) -> None:
    home = tmp_path / "alice"
    home.mkdir()
    (home / "alice.py").write_text(AGENT.read_text())

    def alice(style: str) -> str:
        return ('[[agents]]\nname = "alice"\ncwd = "alice"\n'
                f'command = "{sys.executable} alice.py --name {{name}} --style {style}"\n'
                'build = "echo built >> builds.txt"\n')

    bob = agent_with_build(tmp_path, "bob", "last", "echo built >> bob-builds.txt")
    field = [bob, agent("carol", "flips")]
    path = write_tournament(tmp_path, [alice("first --crash-at 3"), *field], concurrency=2, seed=8)
    database = tmp_path / "results" / "tournament.sqlite"
    assert invoke("run", str(path), "-q").exit_code == 0
    before = games(database)
    old = {line["agent"]: line for line in status_json(path)["standings"]}
    assert old["alice"]["forfeits"]["crash"] == 4 and old["alice"]["points"] == 0

    # Alice resubmits: a different program under the same name.
    path = write_tournament(tmp_path, [alice("last"), *field], concurrency=2, seed=8)
    result = invoke("rerun", str(path), "alice", "--reason", "fixed the corner bug")
    assert result.exit_code == 0, result.output
    assert "Rerun of alice: 4 finished game(s) queued again" in result.output
    assert result.output.count("Started game") == 4
    assert (home / "builds.txt").read_text() == "built\nbuilt\n"  # alice rebuilt, nobody else
    after = games(database)
    hers = {k for k, row in before.items() if "alice" in (row["white"], row["black"])}
    assert len(hers) == 4
    assert_untouched({k: v for k, v in before.items() if k not in hers}, after)
    for key in hers:
        old, new = before[key], after[key]
        assert (new["white"], new["black"], new["seed"]) == (old["white"], old["black"], old["seed"])
        assert new["attempts"] == 2 and new["status"] == "finished" and new["record"] != old["record"]
    # The old results are history: in the database, their files kept, out of the standings.
    replaced = query(database, "SELECT * FROM replaced ORDER BY key")
    assert [r["key"] for r in replaced] == sorted(hers)
    for row in replaced:
        assert row["record"] == before[row["key"]]["record"] and row["why"] == "fixed the corner bug"
        assert (Path(row["game_dir"]) / "game.json").is_file() and "/games/replaced/" in row["game_dir"]
    state = assert_counts_agree(path, 3, 4)
    assert len(state["replaced"]) == 4
    new = {line["agent"]: line for line in state["standings"]}
    assert new["alice"]["forfeits"]["crash"] == 0  # her fixed program's games, not the old ones
    verify = CliRunner().invoke(cli, ["tournament", "verify", str(path)])
    assert verify.exit_code == 0, verify.output


def test_export_reads_back_with_the_csv_module(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, [*THREE, agent("cheat", "flips")], concurrency=2, seed=2)
    assert invoke("run", str(path), "-q").exit_code == 0
    assert invoke("withdraw", str(path), "cheat", "--reason", "plagiarism").exit_code == 0
    result = invoke("export", str(path), "--format", "csv", "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    with open(tmp_path / "out" / "games.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 12
    stored = games(tmp_path / "results" / "tournament.sqlite")
    for row in rows:
        db = stored[row["key"]]
        assert (row["white"], row["black"], int(row["seed"])) == (db["white"], db["black"], db["seed"])
        assert int(row["white_discs"]) == db["white_discs"] and row["reason"] == db["reason"]
        assert row["counts"] == str("cheat" not in (db["white"], db["black"]))
        winner = {"W": db["white"], "B": db["black"]}.get(db["winner"] or "", "")
        assert row["winner"] == winner
    with open(tmp_path / "out" / "standings.csv", newline="", encoding="utf-8") as handle:
        standings = list(csv.DictReader(handle))
    state = status_json(path)
    assert [(r["agent"], float(r["points"])) for r in standings] == [(l["agent"], l["points"]) for l in state["standings"]]
    with open(tmp_path / "out" / "crosstable.csv", newline="", encoding="utf-8") as handle:
        cross = list(csv.DictReader(handle))
    assert len(cross) == 6 and all(int(r["games"]) == 2 for r in cross)
    for r in cross:
        assert float(r["points"]) == int(r["wins"]) + 0.5 * int(r["draws"])
        assert int(r["wins"]) + int(r["draws"]) + int(r["losses"]) == 2
    result = invoke("export", str(path), "--format", "json", "-o", str(tmp_path / "out"))
    data = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert len(data["games"]) == 12 and data["withdrawn"] == [{"agent": "cheat", "reason": "plagiarism"}]
    assert [line["agent"] for line in data["standings"]] == [line["agent"] for line in state["standings"]]


def test_a_roster_written_once_and_hard_coded_file_names(tmp_path: Path) -> None:
    hard = f"{sys.executable} {AGENT} --name player --style"  # both programs read player.in, whatever they are called
    (tmp_path / "roster.toml").write_text(
        f'[[agents]]\nname = "alice"\ncommand = "{hard} first"\nfiles = "player"\n\n'
        f'[[agents]]\nname = "bob"\ncommand = "{hard} last"\nfiles = "player"\n', encoding="utf-8")
    round_robin = tmp_path / "rr.toml"
    round_robin.write_text('agents = "roster.toml"\n[tournament]\ntime_per_move = 3.0\nresults = "rr"\n')
    gauntlet = tmp_path / "g.toml"
    gauntlet.write_text('agents = [{ include = "roster.toml" }, "greedy"]\n'
                        '[tournament]\nformat = "gauntlet"\ngauntlet = ["greedy"]\nresults = "g"\n')
    assert config.load(gauntlet).agent_names == ["alice", "bob", "greedy"]
    result = invoke("run", str(round_robin), "-q")
    assert result.exit_code == 0, result.output
    rows = query(tmp_path / "rr" / "tournament.sqlite", "SELECT * FROM games")
    assert len(rows) == 2
    for row in rows:
        assert row["reason"] == "normal"  # both found their player.in: no timeout
        record = json.loads(row["record"])
        assert {record["white"], record["black"]} == {"alice", "bob"}
        assert "alice: playing" not in row["white_stderr"]  # the program calls itself player
        assert (Path(row["game_dir"]) / "alice").is_dir() and (Path(row["game_dir"]) / "bob").is_dir()
    # A bad include names the file and what was wrong.
    (tmp_path / "bad.toml").write_text('agents = "nosuch.toml"\n')
    result = CliRunner().invoke(cli, ["tournament", "check", str(tmp_path / "bad.toml")])
    assert result.exit_code == 1 and "include 'nosuch.toml': no such roster file" in result.output
    (tmp_path / "bad.toml").write_text('agents = [{ include = "roster.toml", name = "x" }]\n')
    result = CliRunner().invoke(cli, ["tournament", "check", str(tmp_path / "bad.toml")])
    assert result.exit_code == 1 and "an include takes no other key (found name)" in result.output


def test_the_grade_sheet_ranks_students_apart_from_references(tmp_path: Path) -> None:
    # greedy, the reference, beats both students: it tops the table, yet the students are ranked 1 and 2.
    reference = '[[agents]]\nname = "greedy"\nreference = true\n'
    students = [agent("alice", "first").replace("[[agents]]\n", '[[agents]]\nid = "s1001"\n', 1),
                agent("bob", "flips").replace("[[agents]]\n", '[[agents]]\nid = "s1002"\n', 1)]
    path = write_tournament(tmp_path, [reference, *students], concurrency=2, seed=2)
    assert invoke("run", str(path), "-q").exit_code == 0
    result = invoke("export", str(path), "--format", "csv", "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    with open(tmp_path / "out" / "standings.csv", newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
        handle.seek(0)
        standings = {row["agent"]: row for row in csv.DictReader(handle)}
    assert header[:6] == ["id", "rank", "rank_best", "rank_worst", "agent", "reference"]
    assert (standings["greedy"]["id"], standings["greedy"]["rank"], standings["greedy"]["reference"]) == ("", "", "True")
    assert {standings[name]["id"] for name in ("alice", "bob")} == {"s1001", "s1002"}
    assert sorted(standings[name]["rank"] for name in ("alice", "bob")) in (["1", "2"], ["1", "1"])
    assert all(standings[name]["reference"] == "False" for name in ("alice", "bob"))
    state = status_json(path)
    order = [line["agent"] for line in state["standings"]]
    students_order = [name for name in order if name != "greedy"]
    if standings["alice"]["rank"] != standings["bob"]["rank"]:
        assert [standings[name]["rank"] for name in students_order] == ["1", "2"]
    with open(tmp_path / "out" / "crosstable.csv", newline="", encoding="utf-8") as handle:
        cross = list(csv.DictReader(handle))
    assert {(row["id"], row["agent"]) for row in cross} == {("", "greedy"), ("s1001", "alice"), ("s1002", "bob")}
    # finished: ISO 8601 in UTC, the moment the database keeps as a Unix time.
    with open(tmp_path / "out" / "games.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    stored = games(tmp_path / "results" / "tournament.sqlite")
    for row in rows:
        moment = datetime.datetime.fromisoformat(row["finished"].replace("Z", "+00:00"))
        assert row["finished"].endswith("Z") and moment.utcoffset() == datetime.timedelta(0)
        assert abs(moment.timestamp() - stored[row["key"]]["finished"]) < 1
    assert invoke("export", str(path), "--format", "json", "-o", str(tmp_path / "out")).exit_code == 0
    data = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert {line["agent"]: (line["id"], line["rank"], line["reference"]) for line in data["standings"]}["greedy"] \
        == ("", None, True)
    # The report lists the reference apart, unranked; the students ranked as in the grade sheet.
    page = (tmp_path / "results" / "report" / "index.html").read_text()
    report = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert report["references"] == ["greedy"]
    assert {line["agent"]: line["student_rank"] for line in report["standings"]} == \
        {name: (int(standings[name]["rank"]) if standings[name]["rank"] else None) for name in standings}
    assert "A reference agent" in (tmp_path / "results" / "report" / "agents" / "greedy.html").read_text()


def test_rerun_plays_every_unplayed_game_and_with_only_just_that_agents(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, THREE, seed=3)
    database = tmp_path / "results" / "tournament.sqlite"
    assert invoke("run", str(path), "-q", "--max-games", "1").exit_code == 0
    help_text = invoke("rerun", "--help").output
    assert "nobody else's games are played" not in help_text and "--only" in help_text

    result = invoke("rerun", str(path), "flips", "-q", "--only")
    assert result.exit_code == 0, result.output
    rows = query(database, "SELECT white, black, status FROM games")
    unplayed = [row for row in rows if row["status"] != "finished"]
    assert unplayed and all("flips" not in (row["white"], row["black"]) for row in unplayed)
    assert "Finish with: othello tournament resume" in result.output

    result = invoke("rerun", str(path), "flips", "-q")  # without --only: everyone's unplayed games too
    assert result.exit_code == 0, result.output
    assert {row["status"] for row in query(database, "SELECT status FROM games")} == {"finished"}


def test_identical_students_are_marked_tied_and_every_rank_lies_in_its_range(tmp_path: Path) -> None:
    """Two copies of one deterministic program score alike: the evidence cannot order them, and the sheet says so."""
    reference = '[[agents]]\nname = "greedy"\nreference = true\n'
    students = [agent("alice", "first"), agent("bob", "first"), agent("carol", "flips")]
    path = write_tournament(tmp_path, [reference, *students], concurrency=2, seed=5, games_per_pairing=2)
    assert invoke("run", str(path), "-q").exit_code == 0
    assert invoke("export", str(path), "--format", "csv", "-o", str(tmp_path / "out")).exit_code == 0
    with open(tmp_path / "out" / "standings.csv", newline="", encoding="utf-8") as handle:
        standings = {row["agent"]: row for row in csv.DictReader(handle)}
    assert (standings["greedy"]["rank_best"], standings["greedy"]["rank_worst"]) == ("", "")
    for name in ("alice", "bob", "carol"):
        best, rank, worst = (int(standings[name][key]) for key in ("rank_best", "rank", "rank_worst"))
        assert 1 <= best <= rank <= worst <= 3, standings[name]
    # Two games a pairing cannot separate alice from bob (the same program): both ranges span them both.
    spans = [set(range(int(standings[name]["rank_best"]), int(standings[name]["rank_worst"]) + 1))
             for name in ("alice", "bob")]
    assert {int(standings["alice"]["rank"]), int(standings["bob"]["rank"])} <= spans[0] & spans[1]
    page = (tmp_path / "results" / "report" / "index.html").read_text()
    report = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    shown = {line["agent"]: line["rank_text"] for line in report["standings"]}
    assert shown["greedy"] == "ref" and "-" in shown["alice"] and "-" in shown["bob"]
