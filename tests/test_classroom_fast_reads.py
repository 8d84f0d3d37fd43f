"""The class server's fast read paths give the answers the slow ones gave (issue 38: a class of 300).

Each fast path is checked against the code it replaced, kept here as the
oracle (the slow, plainly correct version): the standings (every game's row
read and scanned for each student, the copies' comparison over every pair of
versions), the ladder's pairing (every pair scanned for each version), the
pairs' tallies and the finished games (read whole each time, records
included), the ratings (each result read from its record's JSON).  The class
is a real class.sqlite filled through the store's own methods, as admission
and the ladder fill it, with copies, a random classmate, rejected and
newer versions, draws, crashes and timeouts; games finish out of order and
are voided and queued again between reads.
"""

from __future__ import annotations

import csv
import json
import math
import random
import sqlite3
import threading
from types import SimpleNamespace
from typing import Optional, Union

from test_classroom_ladder import admit_version, finish

from othello_arena.classroom.admission import public_version
from othello_arena.classroom.app import ClassApi
from othello_arena.classroom.arena import FinishedGame, fit, read_openings, result_from_dict, suite_path
from othello_arena.classroom.copies import copy_pairs
from othello_arena.classroom.grades import (SAME_MOVES_AT_LEAST, ReferenceLine, StudentLine, compute_standings,
                                            standings)
from othello_arena.classroom.ladder import Ladder, game_summary, rating_key, ratings
from othello_arena.classroom.matchmaking import (Entrant, Idle, IdleReason, PairPlan, PastPair, Policy, Rung, Snapshot,
                                                 decide, nearest_classmate, next_rung, plan, settled)
from othello_arena.classroom.pages import ClassPages
from othello_arena.classroom.service import (LADDER_STATE_READ, Roster, TimeRule, class_json, class_text, class_view,
                                             ladder_state, roster, verdicts_by_version)
from othello_arena.classroom.settings import ClassSettings
from othello_arena.classroom.store import (GAMES_BY_PLAYER, INSTRUCTOR, MIGRATIONS, Card, ClassStore, GameStatus, NewVersion,
                                           PairKind, PairTally, Side, VerdictAction, Version, VersionStatus)
from othello_arena.protocol import BLACK, WHITE, GameRecord, Result, Termination

STUDENTS = ["ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal"]


# -- the oracles: the code the fast paths replaced --------------------------------------------------------


def standings_before(settings: ClassSettings, store: ClassStore) -> tuple[list[StudentLine], list[ReferenceLine]]:
    fitted = ratings_before(store)
    current = {version.student: version for version in store.current_versions()}
    latest: dict[str, Version] = {}
    for version in store.versions():
        latest[version.student] = version
    games = store.finished_games()
    lines = []
    for student in store.students():
        line = StudentLine(student.id, student.name)
        chosen = current.get(student.id) or latest.get(student.id)
        if chosen is not None:
            line.version, line.number, line.fingerprint = chosen.id, chosen.number, chosen.fingerprint
            line.submitted_at, line.status = chosen.submitted_at, chosen.status.value
        if student.id in current:
            against: dict[str, list[float]] = {}
            for game in games:
                if line.version not in (game.white_version, game.black_version):
                    continue
                white = game.white_version == line.version
                points = (game.white_points or 0.0) if white else 1.0 - (game.white_points or 0.0)
                line.games += 1
                line.score += points
                if game.winner == ("B" if white else "W") and game.termination == "crash":
                    line.crashes += 1
                if game.winner == ("B" if white else "W") and game.termination == "timeout":
                    line.timeouts += 1
                opponent, opponent_version = (game.black, game.black_version) if white else (game.white,
                                                                                               game.white_version)
                if opponent_version is None:
                    against.setdefault(opponent, []).append(points)
            line.tallies = {ref.name: (sum(against[ref.name]), len(against[ref.name]))
                            for ref in settings.references if ref.name in against}
            found = fitted.get(rating_key(student.id, line.version))
            if found is not None and line.games:
                line.rating, line.rating_error = found.elo, found.error
        lines.append(line)
    ranked = sorted((line for line in lines if line.rating is not None), key=lambda l: -(l.rating or 0.0))
    for place, line in enumerate(ranked, start=1):
        line.rank = place
    owners: dict[str, list[str]] = {}
    for version in store.versions():
        owners.setdefault(version.fingerprint, [])
        if version.student not in owners[version.fingerprint]:
            owners[version.fingerprint].append(version.student)
    for line in lines:
        if line.fingerprint:
            line.duplicate_of = [other for other in owners.get(line.fingerprint, []) if other != line.id]
    openings = {pair.id: pair.opening for pair in store.pairs()}
    played: dict[int, dict[tuple[str, str, tuple[str, ...]], set[str]]] = {}
    for game in games:
        moves = game.moves_sha256 or ""
        if not moves:
            continue
        for colour, version, opponent in (("W", game.white_version, game.black_fp),
                                          ("B", game.black_version, game.white_fp)):
            if version is not None:
                played.setdefault(version, {}).setdefault((opponent, colour, openings.get(game.pair, ())),
                                                          set()).add(moves)
    current_lines = {line.version: line for line in lines
                     if line.version is not None and line.status == VersionStatus.ADMITTED}
    prints = {line.version: line.fingerprint for line in current_lines.values()}
    for version, line in current_lines.items():
        mine = played.get(version, {})
        for other_version, other in current_lines.items():
            if other.id == line.id:
                continue
            theirs = played.get(other_version, {})
            shared = [key for key in mine if key in theirs and key[0] not in (prints[version], prints[other_version])]
            alike = sum(1 for key in shared if mine[key] & theirs[key])
            if alike >= SAME_MOVES_AT_LEAST and 2 * alike >= len(shared):
                line.same_moves_as.append(other.id)
    references = [ReferenceLine(ref.name, ref.builtin, ref.time_per_move,
                                fitted[ref.name].elo if ref.name in fitted else None,
                                fitted[ref.name].error if ref.name in fitted else None)
                  for ref in settings.references]
    return ranked + sorted((line for line in lines if line.rank is None), key=lambda l: l.id), references


def ratings_before(store: ClassStore) -> dict[str, object]:
    """The fit on each finished game's result as its record's JSON holds it."""
    games = [FinishedGame(str(game.id), 0, rating_key(game.white, game.white_version),
                          rating_key(game.black, game.black_version),
                          result_from_dict(json.loads(game.record or "{}")["result"]), game.plies or 0)
             for game in store.finished_games()]
    return dict(fit(sorted({g.white for g in games} | {g.black for g in games}), games))


def pair_tallies_before(store: ClassStore) -> list[PairTally]:
    rows = store._rows(
        "SELECT p.*, "
        "(SELECT COALESCE(SUM(CASE WHEN g.white = p.a THEN g.white_points ELSE 1 - g.white_points END), 0) "
        " FROM games g WHERE g.pair = p.id AND g.status = ?) AS points, "
        "(SELECT COUNT(*) FROM games g WHERE g.pair = p.id AND g.status IN (?, ?)) AS open "
        "FROM pairs p ORDER BY p.id", "finished", "queued", "running")
    pairs = {pair.id: pair for pair in store.pairs()}
    return [PairTally(pairs[int(row["id"])], float(row["points"]), int(row["open"])) for row in rows]


def decide_before(snapshot: Snapshot) -> Union[PairPlan, Idle]:
    if not snapshot.current:
        return Idle(IdleReason.NOBODY)
    played = {entrant.version: 0 for entrant in snapshot.current}
    for pair in snapshot.pairs:
        for version in (pair.a_version, pair.b_version):
            if version in played:
                played[version] += 1
    busy = {entrant.version for entrant in snapshot.current
            if any(pair.open for pair in snapshot.pairs if pair.has_version(entrant.version))}
    for entrant in sorted(snapshot.current, key=lambda e: (played[e.version], e.version)):
        if entrant.version in busy:
            continue
        mine = [pair for pair in snapshot.pairs if pair.has_version(entrant.version)]
        opponent = next_rung(entrant, mine, snapshot.references, snapshot.policy)
        if opponent is None:
            opponent = nearest_classmate(entrant, snapshot.current, mine, snapshot.policy)
        if opponent is not None:
            return plan(entrant, opponent[0], opponent[1], snapshot)
    unsettled = [entrant for entrant in snapshot.current
                 if entrant.version not in busy and not settled(entrant, snapshot.current, snapshot.policy.settle_elo)]
    alone = len({entrant.student for entrant in snapshot.current}) < 2
    if alone or not unsettled:
        return Idle(IdleReason.PLAYING if busy else IdleReason.ALONE if alone else IdleReason.SETTLED,
                    settle_elo=snapshot.policy.settle_elo)
    if snapshot.budget is not None and snapshot.budget < snapshot.policy.games_per_pairing:
        return Idle(IdleReason.BUDGET, games_per_hour=snapshot.policy.games_per_hour)
    widest = min(unsettled, key=lambda e: (-e.error, played[e.version], e.version))

    def overlap(other: Entrant) -> float:
        if math.isinf(widest.error) and math.isinf(other.error):
            return math.inf
        return min(widest.high, other.high) - max(widest.low, other.low)

    def met(other: Entrant) -> float:
        together = sum(1 for pair in snapshot.pairs if {pair.a, pair.b} == {widest.student, other.student})
        return together if overlap(other) > 0 else math.inf

    classmates = [other for other in snapshot.current if other.student != widest.student]
    rival = min(classmates, key=lambda o: (met(o), -overlap(o), abs(o.rating - widest.rating), played[o.version],
                                           o.version))
    return plan(widest, rival.side, rival.openings, snapshot)


# -- a class whose week is played --------------------------------------------------------------------------


def record(white: str, black: str, outcome: float, termination: Termination, discs: tuple[int, int]) -> GameRecord:
    winner = WHITE if outcome == 1.0 else BLACK if outcome == 0.0 else None
    return GameRecord(white=white, black=black, result=Result(winner, termination, *discs))


def play_week(settings: ClassSettings, store: ClassStore, chance: random.Random, rounds: int) -> None:
    """The ladder plans; each planned game gets a result, some out of order, some voided and queued again.

    ann and bob run the same program under two fingerprints (the same moves against everybody, every time);
    cat moves at random (other moves every game); the others each have moves of their own.
    """
    ladder = Ladder(settings, store)
    for _ in range(rounds):
        while ladder.plan() is not None:
            pass
        queued = store.games(GameStatus.QUEUED)
        chance.shuffle(queued)  # finished out of order, as -j 2 and retries finish them
        for number, game in enumerate(queued):
            if number % 7 == 3:  # the server could not keep it: voided and queued again
                store.start_game(game.id)
                store.requeue_game(game.id, "no result, the server's fault", 3)
                continue
            def moves_of(side: str) -> list[str]:
                if side in ("ann", "bob", "eve"):
                    return ["(W D 3)", "(B C 3)"]
                if side == "cat":
                    return [f"(W {'ABCDEFGH'[chance.randrange(8)]} {1 + chance.randrange(8)})", "(B C 3)"]
                own = STUDENTS.index(side) if side in STUDENTS else 0
                return ["(W D 3)", f"(B {'ABCDEFGH'[own]} {1 + own})"]
            mover = game.white if game.white_version is not None else game.black
            roll = chance.random()
            outcome = 1.0 if roll < 0.45 else 0.0 if roll < 0.9 else 0.5
            termination = chance.choice([Termination.NORMAL] * 6 + [Termination.CRASH, Termination.TIMEOUT])
            if outcome == 0.5:
                termination = Termination.NORMAL
            finish(store, game.id, record(game.white, game.black, outcome, termination,
                                          (40, 24) if outcome == 1.0 else (24, 40) if outcome == 0.0 else (32, 32)),
                   moves_of(mover))
            if chance.random() < 0.3:  # read between finishes, some out of order: kept up to date
                assert [result.id for result in store.finished_results()] == finished_ids(store)


def finished_ids(store: ClassStore) -> list[int]:
    return [int(row["id"]) for row in store._rows("SELECT id FROM games WHERE status = 'finished' ORDER BY id")]


def a_class(class_store, seed: int) -> tuple[ClassSettings, ClassStore]:  # type: ignore[no-untyped-def]
    settings, store = class_store(STUDENTS, ["random", "greedy"], pairs_per_opponent=1)
    for student in STUDENTS:
        admit_version(store, student, f"{student}-1")
    version, _ = store.add_version(NewVersion("hal", "hal-2", "python3 a.py", "", True, False, ()),
                                   check_again=lambda _: False)
    store.decide(Card("hal", version.id, "hal-2", VersionStatus.REJECTED, "the check failed"))
    store.add_version(NewVersion("gus", "gus-2", "python3 a.py", "", True, False, ()), check_again=lambda _: False)
    play_week(settings, store, random.Random(seed), 3)
    admit_version(store, "dan", "dan-2")  # a newer version: it plays from nothing, the older one's games stay
    admit_version(store, "eve", "ann-1")  # the very same files as ann's: a duplicate
    play_week(settings, store, random.Random(seed + 1), 2)
    return settings, store


def plain(result: tuple[list[StudentLine], list[ReferenceLine]]) -> tuple[list[dict[str, object]], list[object]]:
    lines, references = result
    return [{**line.to_dict(), "rating": line.rating, "rating_error": line.rating_error} for line in lines], \
        [reference.to_dict() for reference in references]


# -- the tests ---------------------------------------------------------------------------------------------


def test_the_standings_are_the_ones_the_slow_code_gave(class_store) -> None:  # type: ignore[no-untyped-def]
    settings, store = a_class(class_store, seed=5)
    fast, slow = plain(compute_standings(settings, store)), plain(standings_before(settings, store))
    assert fast == slow
    lines = {line["id"]: line for line in fast[0]}
    assert "bob" in lines["ann"]["same_moves_as"] and lines["cat"]["same_moves_as"] == []  # (not vacuous)
    assert lines["eve"]["duplicate_of"] == ["ann"] and any(line["crashes"] for line in fast[0])
    assert lines["hal"]["status"] == "admitted" and lines["gus"]["status"] == "admitted"  # (the older ones play)


def test_the_standings_kept_are_computed_again_when_a_game_finishes_or_a_version_changes(class_store) -> None:  # type: ignore[no-untyped-def]
    settings, store = a_class(class_store, seed=9)
    first = standings(settings, store)
    assert standings(settings, store) is first  # nothing changed: the same, not computed again
    play_week(settings, store, random.Random(3), 1)
    second = standings(settings, store)
    assert second is not first and plain(second) == plain(standings_before(settings, store))
    store.rename_student("cat", "Catherine", {})
    third = standings(settings, store)
    assert third is not second and [line.name for line in third[0] if line.id == "cat"] == ["Catherine"]
    version = store.current_versions()[0]
    store.decide(Card(version.student, version.id, version.fingerprint, VersionStatus.REJECTED, "by hand"))
    assert plain(standings(settings, store)) == plain(standings_before(settings, store))


def test_the_ratings_from_the_rows_are_the_ones_from_the_records(class_store) -> None:  # type: ignore[no-untyped-def]
    settings, store = a_class(class_store, seed=11)
    assert ratings(store) == ratings_before(store)


def test_the_fits_games_are_made_once_each_and_are_the_ones_made_from_the_rows_after_more_games(class_store) -> None:  # type: ignore[no-untyped-def]
    from othello_arena.classroom.ladder import finished_for_ratings

    settings, store = a_class(class_store, seed=12)
    first = finished_for_ratings(store)
    assert ratings(store) == ratings_before(store)
    play_week(settings, store, random.Random(5), 1)  # more games finished (and some voided, queued again)
    again = finished_for_ratings(store)
    kept = {game.key: game for game in first}
    assert all(kept[game.key] is game for game in again if game.key in kept)  # made once, kept
    assert len(again) > len(first)
    assert [(game.key, game.white, game.black, game.plies) for game in again] == [
        (str(r.id), rating_key(r.white, r.white_version), rating_key(r.black, r.black_version), r.plies)
        for r in store.finished_results()]  # every finished game, from the rows now
    # a finished row removed by another program: gone from the fit's games too (none kept for it)
    gone = again[0].key
    with sqlite3.connect(settings.database) as db:
        db.execute("DELETE FROM games WHERE id = ?", (int(gone),))
    after = finished_for_ratings(store)
    assert gone not in {game.key for game in after} and len(after) == len(again) - 1
    assert ratings(store) == ratings_before(store)


def test_the_finished_results_read_bit_by_bit_are_the_rows_read_whole(class_store) -> None:  # type: ignore[no-untyped-def]
    settings, store = class_store(["ann", "bob"], ["random", "greedy"])
    admit_version(store, "ann", "a1")
    admit_version(store, "bob", "b1")
    ladder = Ladder(settings, store)
    assert store.finished_results() == ()
    while ladder.plan() is not None:
        pass
    first, second = store.games(GameStatus.QUEUED)[:2]
    store.start_game(first.id)
    finish(store, second.id, record(second.white, second.black, 1.0, Termination.NORMAL, (40, 24)))
    assert [result.id for result in store.finished_results()] == [second.id]  # the older one still plays
    assert store.finish_game(first.id, _outcome(first.white, first.black))
    assert [result.id for result in store.finished_results()] == [first.id, second.id]  # found, below the newer
    assert [result.id for result in store.finished_results()] == finished_ids(store)
    again = ClassStore(settings.database)  # another reader, from nothing
    try:
        assert again.finished_results() == store.finished_results()
    finally:
        again.close()


def _outcome(white: str, black: str):  # type: ignore[no-untyped-def]
    from othello_arena.classroom.ladder import outcome_of

    played = record(white, black, 0.5, Termination.NORMAL, (32, 32))
    return outcome_of(played, played.to_json())


def test_the_pairs_tallies_counted_bit_by_bit_are_the_ones_counted_whole(class_store) -> None:  # type: ignore[no-untyped-def]
    settings, store = class_store(STUDENTS[:4], ["random", "greedy"], pairs_per_opponent=1)
    for student in STUDENTS[:4]:
        admit_version(store, student, f"{student}-1")
    chance = random.Random(2)
    ladder = Ladder(settings, store)
    for _ in range(6):
        while ladder.plan() is not None:
            assert store.pair_tallies() == pair_tallies_before(store)
        games = store.games(GameStatus.QUEUED)
        chance.shuffle(games)
        for game in games[:len(games) // 2 + 1]:  # some pairs left half played, to be read again next time
            finish(store, game.id, record(game.white, game.black, chance.choice([0.0, 0.5, 1.0]), Termination.NORMAL,
                                          (32, 32)))
            assert store.pair_tallies() == pair_tallies_before(store)
        if games[-1:]:
            store.void_game(games[-1].id, "dropped")
        assert store.pair_tallies() == pair_tallies_before(store)


def test_the_ladder_pairs_as_the_slow_pairing_did() -> None:
    chance = random.Random(4)
    suite = tuple(read_openings(suite_path("balanced")))
    references = (Rung("random", "builtin:random"), Rung("greedy", "builtin:greedy"))
    compared = idle = 0
    for _ in range(300):
        students = [f"s{number}" for number in range(chance.randint(1, 9))]
        current = tuple(Entrant(number + 1, student, f"fp{number}", chance.random() < 0.8,
                                chance.uniform(1200, 1800), chance.choice([math.inf, chance.uniform(5, 300)]))
                        for number, student in enumerate(students))
        labels = [(entrant.student, entrant.version) for entrant in current] + [("random", None), ("greedy", None),
                                                                                ("old", 99)]
        pairs = []
        for _ in range(chance.randint(0, 40)):
            (a, a_version), (b, b_version) = chance.sample(labels, 2)
            pairs.append(PastPair(a, a_version, b, b_version, chance.choice([0.0, 0.5, 1.0, 2.0]),
                                  chance.choice([0, 0, 0, 1, 2])))
        shot = Snapshot(current, tuple(pairs), references,
                        Policy("Class", chance.choice([0.0, 0.5]), chance.randint(1, 3), 2, chance.choice([20.0, 80.0])),
                        suite, chance.choice([None, 0, 5]))
        fast, slow = decide(shot), decide_before(shot)
        assert fast == slow
        compared += 1
        idle += isinstance(fast, Idle)
    assert compared == 300 and 0 < idle < 300


def test_a_students_games_are_found_by_index_and_an_older_class_gains_it(class_store) -> None:  # type: ignore[no-untyped-def]
    settings, store = class_store(["ann"], ["random"])
    plan = " ".join(row[3] for row in store.db.execute(
        "EXPLAIN QUERY PLAN SELECT * FROM games WHERE (white = ? AND white_version IS NOT NULL) OR "
        "(black = ? AND black_version IS NOT NULL) ORDER BY id DESC LIMIT ?", ("ann", "ann", 5)))
    assert "games_white" in plan and "games_black" in plan, plan
    store.db.execute("DROP INDEX games_white")
    store.db.execute("DROP INDEX games_black")
    store.db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(MIGRATIONS.index(GAMES_BY_PLAYER) + 1),))
    older = ClassStore(settings.database)  # opened by this code: the migration adds them
    try:
        names = {row[0] for row in older.db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"games_white", "games_black"} <= names and older.schema_version() == len(MIGRATIONS) + 1
    finally:
        older.close()



# -- the instructor's class view (the dashboard, /api/class) ----------------------------------------------------


def class_json_before(settings: ClassSettings, store: ClassStore, latest: int, ranked) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """The class view as JSON as it was made at every view: every version and card read, the games read, the ladder
    asked, every version encoded (the copies as the waiting read gives them)."""
    lines, references = ranked
    by_id = {line.id: line for line in lines}
    versions: dict[str, list[Version]] = {}
    for version in store.versions():
        versions.setdefault(version.student, []).append(version)
    verdicts = verdicts_by_version(store)
    students = [{**(by_id.get(student.id) or StudentLine(student.id, student.name)).to_dict(), "extra": student.extra,
                 "versions": [public_version(version, verdicts=verdicts.get(version.id, ()))
                              for version in versions.get(student.id, [])]}
                for student in store.students()]
    return {"class": settings.name, **TimeRule.of(settings).to_dict(),
            "deadline": settings.deadline.isoformat() if settings.deadline else None, "students": students,
            "references": [reference.to_dict() for reference in references],
            "games": [game_summary(game) for game in store.games(latest=latest, records=False)],
            "duplicates": [{"id": line.id, "duplicate_of": line.duplicate_of, "same_moves_as": line.same_moves_as}
                           for line in lines if line.duplicate_of or line.same_moves_as],
            "ladder": Ladder(settings, store).state(), "copies": [pair.to_dict() for pair in copy_pairs(settings, store)]}


def class_view_now(settings: ClassSettings, store: ClassStore, latest: int) -> dict[str, object]:
    """What /api/class sends now (the kept parts), parsed; the copies compared first, so that none is pending, and an
    idle ladder's state worked out first (its thread waited for)."""
    copy_pairs(settings, store)
    ranked = standings(settings, store)
    ladder_state(settings, store)
    for thread in threading.enumerate():
        if thread.name == "ladder-state":
            thread.join()
    data = json.loads(class_text(class_view(settings, store, latest, ranked=ranked, fresh=False)))
    assert (data.pop("copies_pending"), data.pop("copies_compared"), data.pop("copies_error"),
            data.pop("standings_pending")) == (False, True, "", False)
    as_dict = class_json(class_view(settings, store, latest, ranked=ranked, fresh=False))  # (the instructor's stream)
    assert {key: value for key, value in as_dict.items() if not key.endswith("_pending") and
            not key.startswith("copies_")} == data
    assert data == class_json_before(settings, store, latest, ranked)
    return data


def test_the_class_view_from_kept_parts_is_the_one_read_whole_at_every_change(class_store) -> None:  # type: ignore[no-untyped-def]
    settings, store = a_class(class_store, seed=13)
    for latest in (1, 7, 2000):
        class_view_now(settings, store, latest)
    kept = roster(store)
    assert roster(store) is kept  # nothing changed: the roster, its versions' JSON and HTML, not read again
    play_week(settings, store, random.Random(4), 1)  # games finished, voided, queued again
    assert roster(store) is kept
    class_view_now(settings, store, 7)
    class_view_now(settings, store, 2000)

    pages = ClassPages(ClassApi(settings, store, lambda: None))
    html = pages.versions_html(class_view(settings, store, fresh=False))
    previous = [roster(store)]
    changes = [
        lambda: store.rename_student("cat", "Catherine", {"group": "B"}),
        lambda: store.add_version(NewVersion("fay", "fay-2", "python3 b.py", "", True, False, ()),
                                  check_again=lambda _: False),
        lambda: store.decide(Card("fay", store.versions("fay")[-1].id, "fay-2", VersionStatus.REJECTED,
                                  "the check failed: a move took too long")),
        lambda: store.give_verdict(store.versions("fay")[-1].id, VerdictAction.ADMIT, "it was the machine", "me",
                                   VersionStatus.ADMITTED, "admitted by the instructor: it was the machine"),
    ]
    for change in changes:
        change()
        fresh = roster(store)
        assert fresh is not kept, "the roster is read again after a change"
        kept = fresh
        class_view_now(settings, store, 50)
        parts_before = dict(previous[-1].made.get("versions_html", {}))
        again = pages.versions_html(class_view(settings, store, fresh=False))
        whole = Roster(None, tuple(store.students()), {s.id: tuple(store.versions(s.id)) for s in store.students()},
                       verdicts_by_version(store))  # read whole, nothing kept from an earlier one
        assert again is not html and again == pages.versions_html(SimpleNamespace(roster=whole))  # type: ignore[arg-type]
        # the kept HTML is the one made from the rows now; of the students whose rows did not change, the part
        # drawn before is kept as it was (not drawn again), the changed student's is drawn again
        parts_now = fresh.made["versions_html"]
        changed = {"cat"} if "Catherine" in again and "Catherine" not in html else {"fay"}
        assert all(parts_now[name] is part for name, part in parts_before.items() if name not in changed)
        assert all(parts_now[name] is not parts_before[name] for name in changed if name in parts_before)
        previous.append(fresh)
        html = again
    assert "Catherine" in html and "it was the machine" in html


def test_the_latest_games_kept_are_the_rows_read_whole(class_store) -> None:  # type: ignore[no-untyped-def]
    settings, store = class_store(STUDENTS[:4], ["random", "greedy"], pairs_per_opponent=1)
    for student in STUDENTS[:4]:
        admit_version(store, student, f"{student}-1")
    assert store.latest_games(10) == []
    chance = random.Random(8)
    for _ in range(3):
        play_week(settings, store, chance, 1)
        for latest in (1, 5, 40, 1000):
            assert store.latest_games(latest) == store.games(latest=latest, records=False)
    ladder = Ladder(settings, store)
    ladder.plan()
    queued = store.games(GameStatus.QUEUED)
    assert queued, "(not vacuous: games still to play in the window)"
    assert store.latest_games(40) == store.games(latest=40, records=False)
    store.start_game(queued[0].id)  # a queued row kept as it was would be wrong now
    assert store.latest_games(40) == store.games(latest=40, records=False)
    store.requeue_game(queued[0].id, "lost", 3)
    assert store.latest_games(40) == store.games(latest=40, records=False)


def test_the_dashboard_never_waits_for_the_first_standings_and_says_so(class_store) -> None:  # type: ignore[no-untyped-def]
    """The first standings of a class take seconds (20,000 games: 2-8 s) and the server's worker works them out:
    until it has kept them, the dashboard shows the roster at once and says the standings are being computed;
    then it shows the ones kept, which are those of the class as it is."""
    from othello_arena.classroom import grades

    settings, store = a_class(class_store, seed=17)
    assert store.worked_out_mark(grades.STANDINGS) is None  # (not vacuous: nothing kept yet)
    first = class_view(settings, store, fresh=False)
    assert first.standings_pending and [entry.line.rank for entry in first.students] == [None] * len(STUDENTS)
    statuses = {entry.student.id: entry.line.status for entry in first.students}
    assert statuses["hal"] == "admitted" and statuses["ann"] == "admitted"  # (the roster's, not "none")
    assert store.worked_out_mark(grades.STANDINGS) is None  # the page computed nothing
    assert grades.keep_standings(settings, store)  # what the worker does
    assert not grades.keep_standings(settings, store)  # ... once per change of the class
    done = class_view(settings, store, fresh=False)
    assert not done.standings_pending
    by_id = {line.id: line for line in compute_standings(settings, store)[0]}
    assert [entry.line for entry in done.students] == [by_id[entry.student.id] for entry in done.students]
    assert any(entry.line.rank for entry in done.students)


def test_the_standings_kept_are_those_computed_and_worked_out_again_when_the_class_changes(class_store) -> None:  # type: ignore[no-untyped-def]
    """What the pages read (the row the worker keeps, its JSON) is what a computation gives, line for line; a game
    finished since makes the kept ones stale: the pages keep showing them, ``fresh`` ones are those of the class now."""
    from othello_arena.classroom import grades

    settings, store = a_class(class_store, seed=23)
    assert grades.keep_standings(settings, store)
    computed = compute_standings(settings, store)
    assert grades.kept_standings(settings, store) == computed
    assert any(line.tallies for line in computed[0]) and any(line.rating for line in computed[0])  # (not vacuous)
    before = grades.standings_key(settings, store)
    play_week(settings, store, random.Random(3), 1)
    assert grades.standings_key(settings, store) != before
    assert grades.standings(settings, store, fresh=False) == computed  # the pages: the last kept, never computed
    now_computed = compute_standings(settings, store)
    assert now_computed != computed  # (not vacuous: the week changed them)
    assert grades.standings(settings, store) == now_computed  # fresh: computed and kept
    assert grades.kept_standings(settings, store) == now_computed
    assert not grades.keep_standings(settings, store)


def test_an_idle_ladders_state_is_never_waited_for(class_store) -> None:  # type: ignore[no-untyped-def]
    """An idle ladder's state is a whole plan (seconds after a start): the dashboard says it is being worked out,
    then gives the one the plan gives; a playing ladder's comes from the games' counts at once."""
    from othello_arena.classroom import service

    settings, store = a_class(class_store, seed=19)
    for game in store.games(GameStatus.QUEUED):  # (queued again by the week's voids: the ladder is made idle)
        store.void_game(game.id, "for the test")
    service._ladder_states.clear()  # what a restart forgets
    assert ladder_state(settings, store) == LADDER_STATE_READ
    for thread in threading.enumerate():
        if thread.name == "ladder-state":
            thread.join()
    idle = Ladder(settings, store).state()
    assert ladder_state(settings, store) == idle  # (idle with a pair to plan: "the next pair is being planned")
    first, second = store.current_versions()[:2]
    sides = [Side(version.student, version.id, version.fingerprint) for version in (first, second)]
    store.add_pair(sides[0], sides[1], PairKind.LADDER, [], [(sides[0], sides[1], 1), (sides[1], sides[0], 2)])
    assert ladder_state(settings, store) == Ladder(settings, store).state() == "playing: 0 games running, 2 queued"


def test_a_request_is_placed_while_the_shared_connection_is_held_and_while_another_process_writes(class_store) -> None:  # type: ignore[no-untyped-def]
    """Whose token it is, and the version or game a request names, are read on a connection of their own: the event
    loop asks them before the request's work, and on the shared one it waited behind any thread's long query, or
    its write waiting for the other process's, holding every answer and stream meanwhile."""
    settings, store = class_store(["ann"], ["random"])
    with open(settings.folder / "tokens.csv", encoding="utf-8") as handle:
        token = {row["id"]: row["token"] for row in csv.DictReader(handle)}["ann"]
    version = admit_version(store, "ann", "ann-1")
    other = sqlite3.connect(settings.database, isolation_level=None)  # the worker's process, writing
    other.execute("BEGIN IMMEDIATE")
    other.execute("UPDATE students SET name = 'Ann B' WHERE id = 'ann'")
    store.lock.acquire()  # a thread's long query on the shared connection
    found: dict[str, object] = {}
    try:
        reader = threading.Thread(target=lambda: found.update(
            who=store.who(token), version=store.version(version), verdicts=store.verdicts(version),
            student=store.student("ann")), daemon=True)
        reader.start()
        reader.join(10)
        assert not reader.is_alive(), "the point reads waited for the shared connection"
    finally:
        store.lock.release()
        other.execute("COMMIT")
        other.close()
    assert found["who"] == "ann" and found["verdicts"] == []
    assert getattr(found["version"], "id") == version
    assert getattr(found["student"], "name") != "Ann B"  # (read before the other's commit: WAL's snapshot)
    again = store.student("ann")
    assert again is not None and again.name == "Ann B"  # ... and after it, the new row


def test_a_students_answer_shows_their_new_card_while_the_class_marks_are_a_computation_behind(class_store) -> None:  # type: ignore[no-untyped-def]
    # Seen under load: /api/versions/ID said "admitted" and /api/me, polled right after, still "checking" (its
    # answer was kept under the class's marks, and those are taken as they were while one computation runs).
    settings, store = class_store(["ann"], ["random"])
    api = ClassApi(settings, store, on_submitted=lambda: None)
    version, _ = store.add_version(NewVersion("ann", "ann-1", "python3 a.py", "", True, False, ()),
                                   check_again=lambda _: False)
    assert json.loads(api.me_json("ann"))["versions"][0]["status"] == "checking"
    api.views.current()  # the marks of the class as it is now...
    assert api.views.lock.acquire(blocking=False)  # ...and a computation of the next ones running meanwhile
    try:
        store.decide(Card("ann", version.id, "ann-1", VersionStatus.ADMITTED, ""))
        assert api.views.current() is api.views.marks  # the marks are the last ones: a computation behind
        answer = json.loads(api.me_json("ann"))
        assert answer["versions"][0]["status"] == "admitted" and answer["versions"][0]["card"]["status"] == "admitted"
        store.give_verdict(version.id, VerdictAction.REJECT, "a copy", INSTRUCTOR, VersionStatus.REJECTED, "a copy")
        assert json.loads(api.me_json("ann"))["versions"][0]["status"] == "rejected"
    finally:
        api.views.lock.release()
