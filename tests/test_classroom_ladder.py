"""Who the ladder pairs, and what a killed server's games become: the scheduler's rules on a real database.

Games are not played here: each planned game is given a result in the
database, as the scheduler would record it, and the next plan is asked for.
"""

from __future__ import annotations

import csv
import io
import json
import random
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from classroom_helpers import make_class

from othello_arena.classroom.grades import grade_sheet, standings
from othello_arena.classroom.ladder import Ladder, Scheduler, outcome_of, recover
from othello_arena.classroom.matchmaking import IdleReason
from othello_arena.classroom.service import class_json, class_view
from othello_arena.classroom.settings import load
from othello_arena.classroom.store import Card, ClassStore, GameStatus, NewVersion, PairKind, VersionStatus
from othello_arena.protocol import BLACK, WHITE, GameRecord, Result, Termination


@pytest.fixture()
def ladder(class_store) -> Ladder:
    # settle_elo at its top: every standing settles once the first pairs are played (the rules of those here)
    return Ladder(*class_store(["alice", "bob", "carol"], ["random", "greedy", "champion@0.1"], pairs_per_opponent=1,
                               settle_elo=2000))


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


def play_by_chance(ladder: Ladder, strength: dict[str, float], chance: random.Random) -> None:
    """Give every queued game a result drawn by Elo's model from ``strength`` (Elo; 1500 by default)."""
    for game in ladder.store.games(GameStatus.QUEUED):
        white, black = strength.get(game.white, 1500.0), strength.get(game.black, 1500.0)
        white_wins = chance.random() < 1.0 / (1.0 + 10.0 ** ((black - white) / 400.0))
        finish(ladder.store, game.id, GameRecord(white=game.white, black=game.black, result=Result(
            WHITE if white_wins else BLACK, Termination.NORMAL, *((40, 24) if white_wins else (24, 40)))))


def test_the_ladder_goes_on_learning_after_the_first_pairs_then_says_idle_until_a_version_arrives(class_store) -> None:
    settings, store = class_store(["alice", "bob", "carol"], ["random"], pairs_per_opponent=1, settle_elo=150)
    ladder = Ladder(settings, store)
    for student in ("alice", "bob", "carol"):
        admit(ladder, student, f"{student}-1")
    chance = random.Random(2026)  # the games' results by chance, always the same draw: no timing, no flakiness
    strength = {"random": 1000.0, "alice": 1600.0, "bob": 1550.0, "carol": 1450.0}
    for _ in range(500):  # pairs at most: a ladder that never settles fails here rather than hanging
        if not plan_all(ladder):
            break
        play_by_chance(ladder, strength, chance)
    assert ladder.plan() is None and ladder.idle is not None and ladder.idle.reason is IdleReason.SETTLED
    assert ladder.state().startswith("idle: the standings are settled")
    view = class_view(settings, store)  # the instructor's dashboard says it (and the API's class view)
    assert view.ladder == ladder.state() and class_json(view)["ladder"] == view.ladder
    classmates = [pair for pair in store.pairs() if pair.kind is PairKind.LADDER]
    meetings = Counter(frozenset((pair.a, pair.b)) for pair in classmates)
    # past the first pairs (one climb each, each two classmates once): the repeat limit relaxed as needed
    assert len(classmates) > 3 and max(meetings.values()) > 1, meetings
    # the k-th meeting of two students plays another opening: two deterministic programs play new games
    for together in meetings:
        openings = [pair.opening for pair in classmates if frozenset((pair.a, pair.b)) == together]
        assert all(openings) and len(set(openings)) == len(openings)
    # no version starved: each played a fair share of the classmates' games
    games = Counter(side.label for game in store.finished_games() for side in game.sides)
    assert min(games[s] for s in ("alice", "bob", "carol")) >= 0.2 * sum(games[s] for s in ("alice", "bob", "carol"))
    lines, _ = standings(settings, store)
    assert all(line.rating_error is not None for line in lines)
    # settled: each interval within 150 Elo either side, or apart from every other's
    for line in lines:
        others = [o for o in lines if o.id != line.id]
        assert line.rating_error <= 150 or all(o.rating + o.rating_error < line.rating - line.rating_error
                                               or o.rating - o.rating_error > line.rating + line.rating_error
                                               for o in others)
    # the scheduler says it once in the server's log, not at every turn of its loop
    said: list[str] = []
    scheduler = Scheduler(ladder, HeldPool(), log=said.append)
    scheduler._fill()
    scheduler._fill()
    assert said == ["ladder: " + ladder.idle.text()] and "settled" in said[0]
    # a new version arrives: it climbs, and the ladder plays again (and says so)
    newer = admit(ladder, "carol", "carol-2")
    scheduler._fill()
    assert said[-1].startswith("ladder: playing again") and len(said) == 2
    assert class_view(settings, store).ladder == "playing: 1 game running, 1 queued"
    assert [(game.white, game.white_version) for game in store.games(GameStatus.RUNNING)][:1] == [("carol", newer)]


class HeldPool:
    """A pool that holds the jobs it is given and plays none: what the scheduler chose is what is tested."""

    remote = True
    slots = 1

    def submit(self, job: object) -> object:
        return job


def test_the_same_program_sent_with_a_tidier_command_is_the_same_version_its_games_go_on(class_store) -> None:
    from othello_arena.classroom.admission import submit

    settings, store = class_store(["alice", "bob"], ["random"], settle_elo=2000)
    files = [("agent.py", b"print('my agent')\n"), ("lib/helper.py", b"DEPTH = 3\n")]
    first, new = submit(settings, store, "alice", files, "openings:python3   'agent.py'  {name}", "")
    assert new
    store.decide(Card("alice", first.id, first.fingerprint, VersionStatus.ADMITTED, ""))
    admit_version(store, "bob", "b1")
    ladder = Ladder(settings, store)
    while plan_all(ladder):  # alice climbs and meets bob: she has games and a rating
        play_planned(ladder, {"alice": 0.6, "bob": 0.4})
    before, _ = standings(settings, store)
    alice = next(line for line in before if line.id == "alice")
    assert alice.version == first.id and alice.games > 0 and alice.rating is not None
    # the same files with the command spaced and quoted otherwise: the very same process, the very same version
    again, new = submit(settings, store, "alice", files, "openings:python3 agent.py {name}", "")
    assert (again.id, new) == (first.id, False) and again.command == first.command
    assert [path.name for path in (settings.folder / "submissions" / "alice").iterdir()] == [first.fingerprint]
    after, _ = standings(settings, store)
    assert next(line for line in after if line.id == "alice") == alice  # its games, rating and rank go on
    assert ladder.plan() is None  # and nothing starts from nothing: no new climb
    # another program: other command words (argv[0] differs), another build line, other files
    for command, build, changed in (("openings:python3 ./agent.py {name}", "", files),
                                    ("openings:python3 agent.py {name}", "true", files),
                                    ("openings:python3 agent.py {name}", "", files[:1])):
        version, new = submit(settings, store, "alice", changed, command, build)
        assert new and version.id != first.id and version.program != first.program, (command, build)


def test_the_learning_pairs_keep_within_the_hours_budget_the_first_pairs_never_wait(class_store) -> None:
    settings, store = class_store(["alice", "bob"], ["random"], pairs_per_opponent=1, games_per_hour=4)
    ladder = Ladder(settings, store)
    admit(ladder, "alice", "a1")
    admit(ladder, "bob", "b1")
    for _ in range(3):  # the climbs (4 games), then alice against bob: 6 games, past the budget of 4
        plan_all(ladder)
        play_planned(ladder, {"alice": 0.6, "bob": 0.5})
    assert len(store.games(GameStatus.FINISHED)) == 6 and store.pairs()[-1].kind is PairKind.LADDER
    assert ladder.plan() is None and ladder.idle is not None and ladder.idle.reason is IdleReason.BUDGET
    assert ladder.state() == "waiting: this hour's budget of 4 games is spent ([ladder] games_per_hour)"
    # an hour later (the games' start moved back, as the clock would): the ladder learns on
    db = sqlite3.connect(settings.database)
    db.execute("UPDATE games SET started_at = '2000-01-01T00:00:00+00:00'")
    db.commit()
    db.close()
    assert ladder.plan() is not None and store.pairs()[-1].kind is PairKind.LADDER


def test_a_game_the_server_could_not_keep_is_queued_again_a_few_times_at_most(ladder: Ladder) -> None:
    """The referee could not write the game (a fault of the server's, never an agent's): it is played again."""
    from concurrent.futures import Future

    from othello_arena.classroom.ladder import SERVER_RETRIES, Scheduler

    admit(ladder, "alice", "a1")
    pair = ladder.plan()
    said: list[str] = []
    scheduler = Scheduler(ladder, HeldPool(), log=said.append)  # type: ignore[arg-type]
    first = ladder.next_queued(set())
    assert first is not None and first.pair == pair
    attempts = [first.id]
    for attempt in range(SERVER_RETRIES + 1):
        ladder.store.start_game(attempts[-1])
        failed: Future = Future()
        failed.set_exception(OSError(24, "Too many open files"))
        scheduler.running[failed] = attempts[-1]
        scheduler._finish(failed)
        voided = ladder.store.game(attempts[-1])
        assert voided is not None and voided.status is GameStatus.VOID
        assert voided.void_reason.startswith("no result, the server's fault: [Errno 24] Too many open files")
        again = [game for game in ladder.store.games(GameStatus.QUEUED) if game.game_index == first.game_index]
        if attempt < SERVER_RETRIES:
            assert len(again) == 1 and (again[0].pair, again[0].seed, again[0].white) == (pair, first.seed, first.white)
            assert said[-1].endswith(f"queued again as game {again[0].id}")
            attempts.append(again[0].id)
        else:  # a fault that lasts does not spin: the server says so and stops trying that game
            assert again == [] and said[-1].endswith(f"not queued again after {SERVER_RETRIES} tries")


def test_a_game_lost_on_a_timeout_flagged_as_caused_by_load_is_played_again_never_counted(ladder: Ladder) -> None:
    """The tournaments' flag (tournaments/run/jobs.py load_flag), on a really played game: the loser's clock ran,
    not its CPU (it slept: the flag cannot tell a sleep from a wait for a core, so it flags).  The ladder plays
    the game again with the same seed and colours, a few times at most, then leaves it void: never scored."""
    from concurrent.futures import Future

    from othello_arena.classroom.arena import flagged_timeout, play_job
    from othello_arena.classroom.ladder import LOAD_RETRIES, LOAD_VOID

    agent = Path(__file__).resolve().parent / "cpu_agent.py"
    version = admit_version(ladder.store, "alice", "a1", command=f"python3 {agent} {{name}} --sleep 3 --at 2")
    (ladder.settings.folder / "builds" / "alice" / "a1").mkdir(parents=True)
    pair = ladder.plan()
    first = ladder.next_queued(set())
    assert first is not None and first.pair == pair and version in (first.white_version, first.black_version)
    played = play_job(ladder.job(first, remote=False))
    record = GameRecord.from_dict(played.record)
    assert record.result is not None and record.result.termination is Termination.TIMEOUT
    assert (record.white if record.result.winner is BLACK else record.black) == "alice"
    flag = flagged_timeout(played)
    assert flag is not None and "of clock" in flag
    said: list[str] = []
    scheduler = Scheduler(ladder, HeldPool(), log=said.append)  # type: ignore[arg-type]
    attempts = [first.id]
    for attempt in range(LOAD_RETRIES + 1):
        ladder.store.start_game(attempts[-1])
        done: Future = Future()
        done.set_result(played)
        scheduler.running[done] = attempts[-1]
        scheduler._finish(done)
        voided = ladder.store.game(attempts[-1])
        assert voided is not None and voided.status is GameStatus.VOID and voided.result is None
        assert voided.void_reason == f"{LOAD_VOID}: {flag}"
        again = [game for game in ladder.store.games(GameStatus.QUEUED) if game.game_index == first.game_index]
        if attempt < LOAD_RETRIES:
            assert len(again) == 1 and (again[0].pair, again[0].seed, again[0].white) == (pair, first.seed, first.white)
            assert said[-1].endswith(f"; played again as game {again[0].id}")
            attempts.append(again[0].id)
        else:
            assert again == [] and said[-1].endswith(f"not played again after {LOAD_RETRIES} tries")
    assert not [game for game in ladder.store.games(GameStatus.FINISHED) if game.game_index == first.game_index]
