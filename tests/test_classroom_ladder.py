"""Who the ladder pairs, and what a killed server's games become: the scheduler's rules on a real database.

Games are not played here: each planned game is given a result in the
database, as the scheduler would record it, and the next plan is asked for.
"""

from __future__ import annotations

import json

import pytest

from othello_arena.classroom.grades import grade_sheet, standings
from othello_arena.classroom.ladder import Ladder, recover
from othello_arena.classroom.store import now
from othello_arena.protocol import BLACK, WHITE, GameRecord, Result, Termination


@pytest.fixture()
def ladder(class_store) -> Ladder:
    return Ladder(*class_store(["alice", "bob", "carol"], ["random", "greedy", "champion@0.1"], pairs_per_opponent=1))


def admit(ladder: Ladder, student: str, fingerprint: str) -> int:
    return ladder.store.execute(
        "INSERT INTO versions (student, fingerprint, command, openings, files, bytes, submitted_at, status) "
        "VALUES (?, ?, 'python3 a.py', 1, '[]', 0, ?, 'admitted')", student, fingerprint, now())


def play_planned(ladder: Ladder, strength: dict[str, float]) -> list[tuple[str, str]]:
    """Give every queued game a result: the stronger player wins (``strength``, 0.5 by default), equals draw."""
    played = []
    for game in ladder.store.rows("SELECT * FROM games WHERE status = 'queued' ORDER BY id"):
        white, black = strength.get(game["white"], 0.5), strength.get(game["black"], 0.5)
        winner = WHITE if white > black else BLACK if white < black else None
        discs = (40, 24) if winner is WHITE else (24, 40) if winner is BLACK else (32, 32)
        record = GameRecord(white=game["white"], black=game["black"], result=Result(winner, Termination.NORMAL, *discs))
        points = 1.0 if winner is WHITE else 0.0 if winner is BLACK else 0.5
        ladder.store.execute("UPDATE games SET status = 'finished', white_points = ?, winner = ?, termination = 'normal', "
                             "plies = 0, record = ? WHERE id = ?", points, None if winner is None else winner.value,
                             record.to_json(), game["id"])
        played.append((game["white"], game["black"]))
    return played


def plan_all(ladder: Ladder) -> list[tuple[str, str]]:
    """Every pair the ladder plans now (one per version at a time), as (planned for, opponent)."""
    pairs = []
    while (pair := ladder.plan()) is not None:
        row = ladder.store.row("SELECT a, b FROM pairs WHERE id = ?", pair)
        pairs.append((row["a"], row["b"]))
    return pairs


def test_a_version_climbs_the_references_in_order_and_stops_where_it_lost_badly(ladder: Ladder) -> None:
    admit(ladder, "alice", "a1")
    assert plan_all(ladder) == [("alice", "random")]  # one pair at a time: the next depends on its result
    assert play_planned(ladder, {"alice": 1.0, "random": 0.0}) == [("alice", "random"), ("random", "alice")]
    assert plan_all(ladder) == [("alice", "greedy")]
    play_planned(ladder, {"alice": 0.0, "greedy": 1.0})  # lost both games: the climb ends here
    assert plan_all(ladder) == []  # and no classmate yet
    sheet = grade_sheet(ladder.settings, ladder.store).splitlines()
    assert sheet[0].split(",")[11:14] == ["random", "greedy", "champion-0.1s"]
    assert sheet[1].split(",")[11:14] == ["2/2", "0/2", ""]


def test_then_classmates_nearest_in_rating_each_once_and_a_new_version_replaces_the_old(ladder: Ladder) -> None:
    for student in ("alice", "bob", "carol"):
        admit(ladder, student, f"{student}-1")
    # everybody climbs: random (alice and bob win it; carol draws both games: one point, she climbs on)
    assert sorted(plan_all(ladder)) == [("alice", "random"), ("bob", "random"), ("carol", "random")]
    play_planned(ladder, {"alice": 1.0, "bob": 1.0})
    assert sorted(plan_all(ladder)) == [("alice", "greedy"), ("bob", "greedy"), ("carol", "greedy")]
    play_planned(ladder, {"greedy": 1.0})  # greedy beats everybody: the climb ends there for all three
    while (more := plan_all(ladder)):
        play_planned(ladder, {})
        assert all(a != b for a, b in more)
    together = {frozenset((row["a"], row["b"])) for row in ladder.store.rows("SELECT a, b FROM pairs WHERE kind = 'ladder'")}
    assert together == {frozenset(("alice", "bob")), frozenset(("alice", "carol")), frozenset(("bob", "carol"))}
    assert ladder.store.row("SELECT COUNT(*) AS n FROM pairs WHERE kind = 'ladder'")["n"] == 3  # once each
    # alice's new version: queued games of the old one are dropped, the new one climbs from the start
    ladder.plan()
    newer = admit(ladder, "alice", "alice-2")
    ladder.drop_superseded()
    assert not ladder.store.rows("SELECT * FROM games WHERE status = 'queued' AND (white_version != ? AND white = 'alice' "
                                 "OR black_version != ? AND black = 'alice')", newer, newer)
    assert ("alice", "random") in plan_all(ladder)
    lines, references = standings(ladder.settings, ladder.store)
    assert [line.id for line in lines if line.rank] and {r["name"] for r in references} == {"random", "greedy", "champion-0.1s"}
    assert all(line.id in ("alice", "bob", "carol") for line in lines)  # references are never ranked among students


def test_games_running_at_a_kill_are_voided_and_queued_again(ladder: Ladder) -> None:
    admit(ladder, "alice", "a1")
    ladder.plan()
    first, second = ladder.store.rows("SELECT * FROM games ORDER BY id")
    ladder.store.execute("UPDATE games SET status = 'running' WHERE id = ?", first["id"])
    replayed = recover(ladder.store, ladder.settings)
    assert len(replayed) == 1
    void = ladder.store.game(first["id"])
    again = ladder.store.game(replayed[0])
    assert void["status"] == "void" and "stopped" in void["void_reason"]
    assert again["status"] == "queued" and (again["pair"], again["game_index"], again["white"], again["seed"]) == \
        (first["pair"], first["game_index"], first["white"], first["seed"])
    assert ladder.store.game(second["id"])["status"] == "queued"  # not started: simply played later


def test_two_copies_of_one_program_are_named_by_their_moves(ladder: Ladder) -> None:
    admit(ladder, "alice", "a1")
    admit(ladder, "bob", "b1")  # other files (another fingerprint), the same program
    admit(ladder, "carol", "c1")
    plan_all(ladder)
    for game in ladder.store.rows("SELECT * FROM games WHERE status = 'queued'"):
        moves = ["(W D 3)", "(B C 3)"] if "carol" not in (game["white"], game["black"]) else ["(W F 5)"]
        play_planned_one(ladder, game["id"], moves)
    lines, _ = standings(ladder.settings, ladder.store)
    by_id = {line.id: line for line in lines}
    assert by_id["alice"].same_moves_as == ["bob"] and by_id["bob"].same_moves_as == ["alice"]
    assert by_id["carol"].same_moves_as == [] and by_id["alice"].duplicate_of == []


def play_planned_one(ladder: Ladder, game_id: int, moves: list[str]) -> None:
    game = ladder.store.game(game_id)
    record = GameRecord(white=game["white"], black=game["black"], result=Result(None, Termination.NORMAL, 32, 32))
    data = record.to_dict()
    data["moves"] = [{"move": line, "seconds": 0.0, "comments": []} for line in moves]
    ladder.store.execute("UPDATE games SET status = 'finished', white_points = 0.5, termination = 'normal', "
                         "plies = ?, record = ? WHERE id = ?", len(moves), json.dumps(data), game_id)
