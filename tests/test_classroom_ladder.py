"""Who the ladder pairs, and what a killed server's games become: the scheduler's rules on a real database.

Games are not played here: each planned game is given a result in the
database, as the scheduler would record it, and the next plan is asked for.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from classroom_helpers import make_class

from othello_arena.classroom.grades import grade_sheet, standings
from othello_arena.classroom.ladder import Ladder, outcome_of, recover
from othello_arena.classroom.settings import load
from othello_arena.classroom.store import (Card, ClassStore, GameStatus, NewVersion, PairKind, VersionStatus)
from othello_arena.protocol import BLACK, WHITE, GameRecord, Result, Termination


@pytest.fixture()
def ladder(class_store) -> Ladder:
    return Ladder(*class_store(["alice", "bob", "carol"], ["random", "greedy", "champion@0.1"], pairs_per_opponent=1))


def admit(ladder: Ladder, student: str, fingerprint: str) -> int:
    """A version of ``student`` stored and admitted, as admission leaves it (it reads openings)."""
    return admit_version(ladder.store, student, fingerprint)


def admit_version(store: ClassStore, student: str, fingerprint: str, command: str = "python3 a.py",
                  openings: bool = True, reads_clock: bool = False) -> int:
    version, new = store.add_version(NewVersion(student, fingerprint, command, "", openings, reads_clock, ()),
                                     check_again=lambda _: False)
    assert new
    store.decide(Card(student, version.id, fingerprint, VersionStatus.ADMITTED, ""))
    return version.id


def finish(store: ClassStore, game_id: int, record: GameRecord, moves: list[str] = []) -> None:
    """Give a queued game the result of ``record`` (with ``moves``), as the scheduler records a played game."""
    data = record.to_dict()
    if moves:
        data["moves"] = [{"move": line, "seconds": 0.0, "comments": []} for line in moves]
    played = GameRecord.from_dict(data)
    store.start_game(game_id)
    assert store.finish_game(game_id, outcome_of(played, json.dumps(data)))


def play_planned(ladder: Ladder, strength: dict[str, float]) -> list[tuple[str, str]]:
    """Give every queued game a result: the stronger player wins (``strength``, 0.5 by default), equals draw."""
    played = []
    for game in ladder.store.games(GameStatus.QUEUED):
        white, black = strength.get(game.white, 0.5), strength.get(game.black, 0.5)
        winner = WHITE if white > black else BLACK if white < black else None
        discs = (40, 24) if winner is WHITE else (24, 40) if winner is BLACK else (32, 32)
        finish(ladder.store, game.id, GameRecord(white=game.white, black=game.black,
                                                 result=Result(winner, Termination.NORMAL, *discs)))
        played.append((game.white, game.black))
    return played


def plan_all(ladder: Ladder) -> list[tuple[str, str]]:
    """Every pair the ladder plans now (one per version at a time), as (planned for, opponent)."""
    pairs = []
    while (pair := ladder.plan()) is not None:
        row = ladder.store.pair(pair)
        assert row is not None
        pairs.append((row.a, row.b))
    return pairs


def test_a_version_climbs_the_references_in_order_and_stops_where_it_lost_badly(ladder: Ladder) -> None:
    admit(ladder, "alice", "a1")
    assert plan_all(ladder) == [("alice", "random")]  # one pair at a time: the next depends on its result
    assert play_planned(ladder, {"alice": 1.0, "random": 0.0}) == [("alice", "random"), ("random", "alice")]
    assert plan_all(ladder) == [("alice", "greedy")]
    play_planned(ladder, {"alice": 0.0, "greedy": 1.0})  # lost both games: the climb ends here
    assert plan_all(ladder) == []  # and no classmate yet
    sheet = next(csv.DictReader(io.StringIO(grade_sheet(ladder.settings, ladder.store).removeprefix("\ufeff"))))
    assert [sheet[f"vs_{name}_points"] for name in ("random", "greedy", "champion-0.1s")] == ["2", "0", ""]
    assert [sheet[f"vs_{name}_games"] for name in ("random", "greedy", "champion-0.1s")] == ["2", "2", ""]


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
    classmates = [pair for pair in ladder.store.pairs() if pair.kind is PairKind.LADDER]
    together = {frozenset((pair.a, pair.b)) for pair in classmates}
    assert together == {frozenset(("alice", "bob")), frozenset(("alice", "carol")), frozenset(("bob", "carol"))}
    assert len(classmates) == 3  # once each
    # alice's new version: queued games of the old one are dropped, the new one climbs from the start
    ladder.plan()
    newer = admit(ladder, "alice", "alice-2")
    ladder.drop_superseded()
    assert not [game for game in ladder.store.games(GameStatus.QUEUED)
                if (game.white == "alice" and game.white_version != newer)
                or (game.black == "alice" and game.black_version != newer)]
    assert ("alice", "random") in plan_all(ladder)
    lines, references = standings(ladder.settings, ladder.store)
    assert [line.id for line in lines if line.rank] and {r.name for r in references} == {"random", "greedy", "champion-0.1s"}
    assert all(line.id in ("alice", "bob", "carol") for line in lines)  # references are never ranked among students


def test_games_running_at_a_kill_are_voided_and_queued_again(ladder: Ladder) -> None:
    admit(ladder, "alice", "a1")
    ladder.plan()
    first, second = ladder.store.games()
    ladder.store.start_game(first.id)
    replayed = recover(ladder.store, ladder.settings)
    assert len(replayed) == 1
    void = ladder.store.game(first.id)
    again = ladder.store.game(replayed[0])
    assert void is not None and again is not None
    assert void.status is GameStatus.VOID and "stopped" in (void.void_reason or "")
    assert again.status is GameStatus.QUEUED and (again.pair, again.game_index, again.white, again.seed) == \
        (first.pair, first.game_index, first.white, first.seed)
    assert ladder.store.game(second.id).status is GameStatus.QUEUED  # not started: simply played later


def test_two_copies_of_one_program_are_named_by_their_moves(ladder: Ladder) -> None:
    admit(ladder, "alice", "a1")
    admit(ladder, "bob", "b1")  # other files (another fingerprint), the same program
    admit(ladder, "carol", "c1")
    plan_all(ladder)
    for game in ladder.store.games(GameStatus.QUEUED):
        moves = ["(W D 3)", "(B C 3)"] if not game.plays("carol") else ["(W F 5)"]
        finish(ladder.store, game.id, GameRecord(white=game.white, black=game.black,
                                                 result=Result(None, Termination.NORMAL, 32, 32)), moves)
    lines, _ = standings(ladder.settings, ladder.store)
    by_id = {line.id: line for line in lines}
    assert by_id["alice"].same_moves_as == ["bob"] and by_id["bob"].same_moves_as == ["alice"]
    assert by_id["carol"].same_moves_as == [] and by_id["alice"].duplicate_of == []


def test_a_pair_is_ladder_games_per_pairing_games_from_one_opening_colours_alternating(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["greedy"], games_per_pairing=4)
    settings = load(folder)
    assert settings.ladder.games_per_pairing == 4
    ladder = Ladder(settings, ClassStore(settings.database))
    admit(ladder, "alice", "a1")
    pair = ladder.plan()
    games = ladder.store.games()
    assert [game.game_index for game in games] == [1, 2, 3, 4] and {game.pair for game in games} == {pair}
    assert [game.white for game in games] == ["alice", "greedy", "alice", "greedy"]
    assert [game.seed - games[0].seed for game in games] == [0, 1, 2, 3]
    planned = ladder.store.pair(pair)
    assert planned is not None and planned.opening  # both read openings: one opening for the four games
    assert {ladder.job(game, remote=True).opening for game in games} == {planned.opening}
