"""Which version played: every game names each program's fingerprint, and a changed submission is not mixed in.

Real runs through the CLI: a student's folder with its own program and a
build that writes a different file every time, a built-in reference, a
submission edited between a stop and ``resume``.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

from click.testing import CliRunner

from othello_arena.agents.registry import version_of
from othello_arena.cli import cli
from othello_arena.referee.fingerprint import fingerprint
from tournament_helpers import AGENT, query, write_tournament

# A build whose output differs every time: a resume must not take it for a new version.
BUILD = "od -An -N8 -tx8 /dev/urandom > built.txt"


def invoke(*args: str):
    return CliRunner().invoke(cli, ["tournament", *args], catch_exceptions=False)


def student(tmp_path: Path, name: str) -> tuple[Path, str]:
    """A student's folder holding its own copy of the tiny agent; returns it and the agent's table."""
    folder = tmp_path / "students" / name
    folder.mkdir(parents=True)
    shutil.copy(AGENT, folder / "agent.py")
    command = f"{sys.executable} agent.py --name {{name}} --style first"
    table = (f"[[agents]]\nname = {json.dumps(name)}\ncommand = {json.dumps(command)}\n"
             f"cwd = {json.dumps(f'students/{name}')}\nbuild = {json.dumps(BUILD)}\n")
    return folder, table


def versions_in_records(results: Path, agent: str) -> list[str]:
    found = []
    for record in sorted((results / "games").glob("*/game.json")):
        agents = json.loads(record.read_text())["agents"]
        if agent in agents:
            found.append(agents[agent]["version"])
    return found


def test_every_game_names_the_versions_and_a_resume_after_the_build_is_the_same_version(tmp_path: Path) -> None:
    folder, heidi = student(tmp_path, "heidi")
    before_build = fingerprint(folder, f"{sys.executable} agent.py --name {{name}} --style first", BUILD)
    path = write_tournament(tmp_path, [heidi, '[[agents]]\nname = "greedy"\n'], games_per_pairing=4, seed=2,
                            time_per_move=5.0)
    result = invoke("run", str(path), "-q", "--max-games", "2")
    assert result.exit_code == 0, result.output
    assert (folder / "built.txt").exists()  # the build wrote into the folder
    result = invoke("resume", str(path), "-q")  # the build's output is not a new version
    assert result.exit_code == 0, result.output
    results = tmp_path / "results"
    # The version is the folder as submitted, before the build wrote built.txt.
    assert versions_in_records(results, "heidi") == [before_build] * 4
    assert versions_in_records(results, "greedy") == [version_of("greedy")] * 4
    rows = query(results / "tournament.sqlite", "SELECT white, white_version, black_version FROM games")
    assert {row["white_version" if row["white"] == "heidi" else "black_version"] for row in rows} == {before_build}
    assert invoke("export", str(path)).exit_code == 0
    with open(results / "export" / "games.csv", newline="") as handle:
        exported = list(csv.DictReader(handle))
    assert {row["white_version"] for row in exported} == {before_build, version_of("greedy")}
    assert invoke("report", str(path)).exit_code == 0
    assert before_build[:12] in (results / "report" / "index.html").read_text()


def test_a_submission_changed_before_resume_is_named_and_not_mixed(tmp_path: Path) -> None:
    folder, heidi = student(tmp_path, "heidi")
    _, ivan = student(tmp_path, "ivan")
    path = write_tournament(tmp_path, [heidi, ivan, '[[agents]]\nname = "greedy"\n'], seed=2, time_per_move=5.0)
    database = tmp_path / "results" / "tournament.sqlite"
    result = invoke("run", str(path), "-q", "--max-games", "4")
    assert result.exit_code == 0, result.output
    v1 = versions_in_records(tmp_path / "results", "heidi")[0]
    played_by_heidi = len(versions_in_records(tmp_path / "results", "heidi"))
    assert played_by_heidi > 0
    with open(folder / "agent.py", "a") as handle:
        handle.write("\n# version 2\n")

    refused = invoke("resume", str(path), "-q")
    assert refused.exit_code == 1
    assert "not mixing versions" in refused.output and f"heidi changed since its {played_by_heidi} earlier game(s)" \
        in refused.output and v1[:12] in refused.output
    assert "ivan" not in refused.output.split("To replay")[0]  # only the agent that changed is named
    assert "othello tournament rerun" in refused.output and "--accept-changed" in refused.output
    assert len(query(database, "SELECT key FROM games WHERE status = 'finished'")) == 4  # nothing was played

    # rerun heidi: her games are replayed by the new version; nobody's versions are mixed.
    result = invoke("rerun", str(path), "heidi", "-q")
    assert result.exit_code == 0, result.output
    v2 = fingerprint(folder, f"{sys.executable} agent.py --name {{name}} --style first", BUILD,
                     leave_out=["built.txt"])
    assert v2 != v1
    assert set(versions_in_records(tmp_path / "results", "heidi")) == {v2}
    replaced = query(database, "SELECT record FROM replaced")
    assert len(replaced) == played_by_heidi and all(v1 in row["record"] for row in replaced)


def test_accept_changed_plays_on_with_both_versions(tmp_path: Path) -> None:
    folder, heidi = student(tmp_path, "heidi")
    path = write_tournament(tmp_path, [heidi, '[[agents]]\nname = "greedy"\n'], games_per_pairing=4, seed=2,
                            time_per_move=5.0)
    assert invoke("run", str(path), "-q", "--max-games", "2").exit_code == 0
    (folder / "agent.py").write_text((folder / "agent.py").read_text() + "\n# version 2\n")
    bad = invoke("resume", str(path), "-q", "--accept-changed", "nobody")
    assert bad.exit_code == 1 and "--accept-changed nobody: no such agent" in bad.output
    result = invoke("resume", str(path), "-q", "--accept-changed", "heidi")
    assert result.exit_code == 0, result.output
    assert "heidi changed since its 2 earlier game(s)" in result.output and "accepted" in result.output
    versions = versions_in_records(tmp_path / "results", "heidi")
    assert len(versions) == 4 and len(set(versions)) == 2


def test_check_estimates_the_duration_worst_case_and_typical_from_earlier_games(tmp_path: Path) -> None:
    from tournament_helpers import agent

    path = write_tournament(tmp_path, [agent("first", "first"), agent("last", "last"), agent("flips", "flips")],
                            time_per_move=2.0, concurrency=2, seed=1)
    before = invoke("check", str(path))
    assert before.exit_code == 0, before.output
    # 6 games x 60 moves x 2 s / 2 at once = 6 min, at most.
    assert "Duration at 2 game(s) at once: at most 6 min (6 games x 60 moves x the time per move / 2)" in before.output
    assert "no typical estimate yet" in before.output
    assert invoke("run", str(path), "-q", "--max-games", "2").exit_code == 0
    after = invoke("check", str(path))
    assert "typically about" in after.output and "from the move times measured in earlier games" in after.output
    assert "first " in after.output.split("typically about")[1]


def test_a_flagged_timeout_says_at_which_move_and_the_agents_times_elsewhere_and_rerun_flagged_replays_it(
        tmp_path: Path) -> None:
    from tournament_helpers import agent

    # The sleeper never answers its 3rd move, asleep (no CPU): the referee flags the timeout as maybe load.
    # 2 s a move: its CPU (a Python's start-up, slower under load) stays well under half its clock's time.
    path = write_tournament(tmp_path, [agent("sleeper", "last", "--sleep-at 3"), agent("first", "first")],
                            time_per_move=2.0, games_per_pairing=2, seed=4)
    assert invoke("run", str(path), "-q").exit_code == 0
    database = tmp_path / "results" / "tournament.sqlite"
    rows = query(database, "SELECT key, plies, load_flag FROM games WHERE reason = 'timeout'")
    assert len(rows) == 2 and all(row["load_flag"] for row in rows)
    status = invoke("status", str(path))
    flagged = [line for line in status.output.splitlines() if line.startswith("flagged:")]
    assert len(flagged) == 2
    for line, row in zip(flagged, sorted(rows, key=lambda r: r["key"])):
        assert f"sleeper ran out of time at move {row['plies'] + 1}" in line
        assert "its other games: median" in line and "max" in line
    state = json.loads(invoke("status", str(path), "--json").output)
    assert {item["move"] for item in state["load_flagged"]} == {row["plies"] + 1 for row in rows}
    assert all(item["agent"] == "sleeper" and item["max_seconds"] is not None for item in state["load_flagged"])
    page = (tmp_path / "results" / "report" / "index.html").read_text()
    assert '"timeout_move":' in page.replace(" ", "") and "ran out of time at move" in page

    result = invoke("rerun", str(path), "--flagged", "-q")
    assert result.exit_code == 0, result.output
    assert "Rerun of the flagged timeouts: 2 finished game(s) queued again" in result.output
    replaced = query(database, "SELECT key, why FROM replaced")
    assert sorted(row["key"] for row in replaced) == sorted(row["key"] for row in rows)
    assert {row["why"] for row in replaced} == {"timeout under load?"}


def test_a_game_of_othello_play_names_each_programs_version_from_the_files_its_command_names(tmp_path: Path) -> None:
    # Without a submission folder the version is the command and the files it names: v1 and v2 of one
    # student's program differ, the same file copied elsewhere is the same version, and the system's
    # python3 is not part of it.
    for name in ("v1", "v2", "elsewhere"):
        (tmp_path / name).mkdir()
        shutil.copy(AGENT, tmp_path / name / "agent.py")
    with open(tmp_path / "v2" / "agent.py", "a") as handle:
        handle.write("\n# v2: one more line\n")

    def played(first: str, second: str) -> dict[str, str]:
        out = tmp_path / f"game-{first}-{second}"
        result = CliRunner().invoke(cli, [
            "play", f"a={sys.executable} {tmp_path / first / 'agent.py'} --name {{name}} --style first",
            f"b={sys.executable} {tmp_path / second / 'agent.py'} --name {{name}} --style first",
            "--time", "5", "--sandbox", "none", "--out", str(out), "-q"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        agents = json.loads((out / "game.json").read_text())["agents"]
        return {name: entry["version"] for name, entry in agents.items()}

    versions = played("v1", "v2")
    assert len(versions["a"]) == 64 and versions["a"] != versions["b"]
    again = played("elsewhere", "v1")
    assert again["a"] == again["b"] == versions["a"]


def test_a_match_typed_in_a_large_folder_versions_each_agent_by_its_command_and_the_files_it_names(
        tmp_path: Path, monkeypatch) -> None:
    # `othello match` typed in a home folder or /tmp makes that folder the agents' cwd: digesting all of it
    # took minutes before the first game, with nothing said.  Past the caps it is not a submission folder:
    # the version is the command and the files it names.
    from othello_arena.referee.fingerprint import FOLDER_FILES_CAP

    home = tmp_path / "home"
    (home / "photos").mkdir(parents=True)
    for number in range(FOLDER_FILES_CAP + 1):
        (home / "photos" / f"{number}.txt").write_text(str(number))
    shutil.copy(AGENT, home / "agent.py")
    monkeypatch.chdir(home)

    def versions(out: str) -> tuple[str, str]:
        result = CliRunner().invoke(cli, ["match", f"a={sys.executable} agent.py --name {{name}} --style first",
                                          "greedy", "--games", "2", "--out", str(tmp_path / out), "-q"],
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.output
        found = versions_in_records(tmp_path / out, "a")
        assert len(found) == 2 and len(set(found)) == 1
        return found[0], versions_in_records(tmp_path / out, "greedy")[0]

    first, greedy = versions("one")
    (home / "photos" / "0.txt").write_text("another photo")  # not the program: the same version
    assert versions("two") == (first, greedy)
    with open(home / "agent.py", "a") as handle:  # the program the command names: a new version
        handle.write("\n# version 2\n")
    changed, still_greedy = versions("three")
    assert changed != first and still_greedy == greedy


def test_a_tournament_folder_s_own_results_do_not_count_towards_the_caps(tmp_path: Path) -> None:
    from othello_arena.referee.fingerprint import FOLDER_FILES_CAP, folder_files, small_folder_files

    (tmp_path / "results" / "games").mkdir(parents=True)
    for number in range(FOLDER_FILES_CAP + 1):
        (tmp_path / "results" / "games" / f"{number}.json").write_text("{}")
    shutil.copy(AGENT, tmp_path / "agent.py")
    assert small_folder_files(tmp_path) is None
    assert small_folder_files(tmp_path, ["results"]) == folder_files(tmp_path, ["results"]) != []
