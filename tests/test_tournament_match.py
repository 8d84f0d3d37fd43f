"""othello match: game pairs through the real referee, the figures printed live, the SPRT's stop."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import GameRecord
from othello_arena.protocol.openings import format_opening, parse_openings
from othello_arena.referee import draw_openings
from othello_arena.tournaments.match.match import MatchState, PairResult
from othello_arena.tournaments.stats import SPRT
from othello_arena.tournaments.schedule.pairing import derive_seed
from tournament_helpers import AGENT as TINY_AGENT, query

BOOK = "d3 c5 f6\nd3 c3 c4\nf5 f6 e6\n"


def test_a_fixed_match_plays_pairs_through_the_referee_and_prints_the_figures(tmp_path: Path) -> None:
    book = tmp_path / "book.txt"
    book.write_text(BOOK)
    out = tmp_path / "m"
    result = CliRunner().invoke(cli, ["match", "random", "greedy", "--games", "4", "--openings", str(book),
                                      "--seed", "3", "--time", "3", "-j", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    drawn = [format_opening(o) for o in draw_openings(parse_openings(BOOK), 2, derive_seed(3, "openings"))]
    assert sorted(line.split(":")[0] for line in lines if line.startswith("pair ")) == [
        f"pair 1 ({drawn[0]})", f"pair 2 ({drawn[1]})"]  # (with -j 2 the second pair may finish first)
    final = next(line for line in lines if line.startswith("final: "))
    assert final.startswith("final: random vs greedy: 4 games, W-D-L ") and "pairs [LL LD DD/WL WD WW] " in final
    assert "Elo " in final and "(95%" in final and "LLR" not in final
    # Each pair's line is short; the verdict, last, is in words (two pairs cannot tell these two apart).
    assert all(len(line) < 120 for line in lines if line.startswith("pair "))
    for label in ("random", "greedy"):  # each agent's time use over the match's games
        assert any(line.startswith(f"time: {label}: ") and " s a move on average" in line for line in lines)
    # random plays unseeded moves: four games may go either way, once in a while far enough to be a verdict
    assert re.match(r"(no difference found in 4 games \(Elo|(greedy|random) is better than (random|greedy)"
                    r"( by about|: it won every game, at least))", lines[-1]), lines[-1]
    data = json.loads((out / "match.json").read_text())
    assert data["games"] == 4 and sum(data["pentanomial"]) == 2 and data["stopped"] == "games"
    assert data["wins"] + data["draws"] + data["losses"] == 4
    for pair in data["pairs"]:
        one, two = (GameRecord.load(str(out / game / "game.json")) for game in pair["games"])
        assert {one.white, one.black} == {"random", "greedy"} and (one.white, one.black) == (two.black, two.white)
        assert format_opening(one.opening) == format_opening(two.opening) == pair["opening"]
        points = [1.0 if r.result.winner and r.name(r.result.winner) == "random" else 0.5 if not r.result.winner else 0.0
                  for r in (one, two)]
        assert points == pair["points"]
    # The match is a tournament file of one pairing, on the runner's database: status reads it.
    status = CliRunner().invoke(cli, ["tournament", "status", str(out / "match.toml"), "--json"])
    assert status.exit_code == 0, status.output
    standings = {line["agent"]: line for line in json.loads(status.output)["standings"]}
    assert standings["random"]["points"] == sum(sum(pair["points"]) for pair in data["pairs"])
    # Its status says the match's own verdict, as the terminal did.
    plain = CliRunner().invoke(cli, ["tournament", "status", str(out / "match.toml")])
    assert plain.exit_code == 0 and lines[-1] in plain.output.splitlines(), plain.output
    # ... but only othello match plays it (it stops at the SPRT's decision).
    run = CliRunner().invoke(cli, ["tournament", "run", str(out / "match.toml")])
    assert run.exit_code == 1 and f"othello match --resume {out}" in run.output


def test_an_sprt_match_prints_the_llr_and_its_bounds_and_stops_at_the_cap(tmp_path: Path) -> None:
    book = tmp_path / "book.txt"
    book.write_text(BOOK)
    result = CliRunner().invoke(cli, ["match", "greedy", "random", "--sprt", "elo0=0", "elo1=10", "alpha=0.05",
                                      "beta=0.05", "--max-games", "4", "--openings", str(book), "--seed", "1",
                                      "--time", "3", "--out", str(tmp_path / "m"), "-q"])
    assert result.exit_code == 0, result.output
    assert "LLR " in result.output and "[-2.94, 2.94] (elo0=0 elo1=10 alpha=0.05 beta=0.05, normalized)" in result.output
    verdict = result.output.splitlines()[-1]  # fewer than 10 pairs: the test could not decide, and what to do
    assert re.fullmatch(r"no decision after 4 games \(Elo .*, 95 %\): the SPRT decides, not the Elo interval, and it "
                        r"decides only from 10 pairs \(20 games\) on: the cap came first \(its LLR ended at -?\d+\.\d\d"
                        r"(, past its (upper|lower) bound)?\)\. Start a new match with --max-games 20 or more", verdict), verdict
    data = json.loads((tmp_path / "m" / "match.json").read_text())
    assert data["stopped"] == "max-games" and data["sprt"]["decision"] is None


def test_the_sprt_stops_the_match_when_it_decides(tmp_path: Path) -> None:
    # B crashes at its first move: A wins every game, so the SPRT accepts H1 at the tenth pair (min_pairs),
    # and the runner starts no new game: far fewer than the cap of 200 are played.
    # 30 s a move: a slow start under a heavy load must not turn a win into a forfeit.
    loser = f"loser={sys.executable} {TINY_AGENT} --name {{name}} --crash-at 1"
    result = CliRunner().invoke(cli, ["match", "greedy", loser, "--sprt", "elo0=0", "elo1=10", "--max-games", "200",
                                      "--seed", "2", "--time", "30", "-j", "2", "--out", str(tmp_path / "m"), "-q"])
    assert result.exit_code == 0, result.output
    # Without openings every pair is the same two games: one distinct pair, and the verdict says so.
    assert result.output.splitlines()[-1] == (
        "greedy scored more than loser (Elo at least -636, 95 %), not enough to be sure it is better; "
        f"{len(json.loads((tmp_path / 'm' / 'match.json').read_text())['pairs']) - 1} of "
        f"{len(json.loads((tmp_path / 'm' / 'match.json').read_text())['pairs'])} pairs repeat an earlier pair move "
        "for move and count once in the Elo (deterministic agents: --openings gives each pair its own opening)")
    data = json.loads((tmp_path / "m" / "match.json").read_text())
    assert data["stopped"] == "sprt" and data["sprt"]["decision"] == "H1"
    finished = _count(tmp_path / "m" / "tournament.sqlite", "finished")
    decided = next(line for line in result.output.splitlines() if line.startswith("decided by the SPRT after"))
    assert decided.endswith(f"the remaining {200 - finished} of at most 200 games were not needed"), decided
    # The pairs in flight when it decided are counted too: at most one more with two games at once.
    assert 10 <= len(data["pairs"]) <= 11 and data["wins"] == data["games"] == 2 * len(data["pairs"])
    played = [row for row in query(tmp_path / "m" / "tournament.sqlite", "SELECT * FROM games WHERE status = 'finished'")]
    assert len(played) <= 2 * 11 + 1  # (a lone game of a pair started before the decision is stored, not counted)
    # The game marked to start with the deciding result (one commit) was taken back, not voided: no trace.
    rows = query(tmp_path / "m" / "tournament.sqlite", "SELECT status, attempts FROM games WHERE status != 'finished'")
    assert rows and all(tuple(row) == ("scheduled", 0) for row in rows)
    attempts = query(tmp_path / "m" / "tournament.sqlite", "SELECT outcome, COUNT(*) FROM attempts GROUP BY outcome")
    assert [tuple(row) for row in attempts] == [("finished", len(played))]


def test_a_stopped_match_resumes_where_it_stopped(tmp_path: Path) -> None:
    """Ctrl-C in the middle of a match: the games in flight are voided; --resume plays the rest, keeps the others."""
    out = tmp_path / "m"
    slow = f"{sys.executable} {TINY_AGENT} --name {{name}} --delay 0.02"
    command = [sys.executable, "-m", "othello_arena", "match", f"first={slow} --style first",
               f"last={slow} --style last", "--games", "12", "--seed", "5", "--time", "5", "-j", "2", "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=_as_at_a_terminal)
    database = out / "tournament.sqlite"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            finished = _count(database, "finished")
            if finished >= 3 and _count(database, "running"):
                break
            assert process.poll() is None, process.stdout.read() if process.stdout else ""
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, output
    assert f"othello match --resume {out}" in output
    before = {row["key"]: dict(row) for row in query(database, "SELECT * FROM games WHERE status = 'finished'")}
    assert 3 <= len(before) < 12

    result = CliRunner().invoke(cli, ["match", "--resume", str(out), "-q"])
    assert result.exit_code == 0, result.output
    rows = {row["key"]: dict(row) for row in query(database, "SELECT * FROM games")}
    assert len(rows) == 12 and all(row["status"] == "finished" for row in rows.values())
    for key, row in before.items():  # kept, not played again
        assert rows[key]["record"] == row["record"] and rows[key]["attempts"] == 1
    assert any(row["attempts"] == 2 for row in rows.values())  # the games in flight were played again
    data = json.loads((out / "match.json").read_text())
    assert data["games"] == 12 and sorted(pair["pair"] for pair in data["pairs"]) == list(range(1, 7))
    # Two deterministic agents from the start position: six pairs, one distinct.
    assert data["distinct_pairs"] == 1 and "5 of 6 pairs repeat an earlier pair move for move" in result.output


def test_repeated_pairs_are_said_and_the_interval_uses_the_distinct_ones() -> None:
    state = MatchState("a", "b")
    for number in range(1, 5):
        state.add(PairResult(number, [], (1.0, 0.5), ("g1", "g2"), ("same-1", "same-2")))
    assert (state.counts.pairs, state.distinct.pairs) == (4, 1)
    text = " | ".join(state.lines())
    assert "3 of 4 pairs repeat an earlier pair move for move; over the 1 distinct pairs: Elo" in text
    assert state.to_dict()["distinct_pentanomial"] == [0, 0, 0, 1, 0]


def _state(pairs: list[tuple[float, float]], sprt: Optional[SPRT] = SPRT(0, 10), stopped: str = "",
           limit: int = 1000) -> MatchState:
    """A match of v3 against v2 that saw these pairs (each distinct), as the runner would have counted them."""
    state = MatchState("v3", "v2", sprt=sprt, limit=limit)
    for number, points in enumerate(pairs, 1):
        state.add(PairResult(number, [], points, ("g1", "g2"), (f"k{number}", "k")))
    state.stopped = stopped
    return state


def test_the_verdict_says_who_is_better_by_how_much_with_a_lower_bound() -> None:
    # 30 pairs [LL LD DD WD WW] = [0 0 6 12 12] (elo1=50, logistic): LLR 16.2 >= 2.94, H1 taken at the 10th pair.
    state = _state([(1, 0.5), (1, 1), (0.5, 0.5)] * 6 + [(1, 0.5), (1, 1)] * 6, SPRT(0, 50, model="logistic"))
    assert state.decision == "H1"
    estimate = state.estimate()
    assert state.verdict() == (f"v3 is better than v2 by about {estimate.elo:.0f} Elo "
                               f"(at least {estimate.low:.0f}, 95 %)") == "v3 is better than v2 by about 241 Elo (at least 175, 95 %)"
    # A sweep has no finite estimate: its lower bound is said instead of "+inf".
    sweep = _state([(1, 1)] * 10)
    assert sweep.decision == "H1" and sweep.verdict() == "v3 is better than v2: it won every game, at least +140 Elo (95 %)"
    assert sweep.progress_line() == "20 games, W-D-L 20-0-0 | Elo at least +140 | LLR 14.86 (-2.94, +2.94)"
    assert _state([(0, 0)] * 10).verdict() == "v2 is better than v3: it won every game, at least +140 Elo (95 %)"


WHY = "the SPRT decides, not the Elo interval"
ROUGH = "(a rough guess: one match may need far fewer or far more)"


def test_an_undecided_match_says_what_decides_where_the_llr_is_and_about_how_many_more_games() -> None:
    # 20 pairs [LL LD DD WD WW] = [2 1 2 4 11]: Elo +203 [+83, +396], the interval far above 0, yet the LLR
    # (0.63) is far from +2.94: a test of elo1=10 nElo gathers evidence slowly whatever the gap.
    state = _state([(0, 0)] * 2 + [(0, 0.5)] + [(0.5, 0.5)] * 2 + [(1, 0.5)] * 4 + [(1, 1)] * 11)
    assert state.decision is None and state.sprt is not None
    pairs = state.sprt.expected_pairs(state.counts)
    more = state.expected_games()
    assert pairs is not None and more is not None and abs(more - 2 * pairs) <= 0.05 * 2 * pairs + 2
    assert state.verdict() == (
        f"not decided yet after 40 games (Elo +203 [+83, +396], 95 %): {WHY}: it stops when its LLR (now 0.63) "
        "reaches +2.94 (H1: v3 better than v2 by elo1=10 nElo) or -2.94 (H0: better by no more than elo0=0 nElo); "
        f"at its drift so far that takes about {more} more games on average {ROUGH}")
    assert more == 170
    assert state.to_dict()["expected_games"] == more and state.to_dict()["verdict"] == state.verdict()
    # Before 20 pairs the guess says too little to be a number: the words say so instead.
    early = _state([(1, 1), (1, 0.5), (0.5, 0.5), (0, 0.5)] * 3, SPRT(0, 30, model="logistic"))
    assert early.expected_games() is None and early.verdict().endswith(
        "it stops when its LLR (now 0.68) reaches +2.94 (H1: v3 better than v2 by elo1=30 Elo) or -2.94 (H0: better "
        "by no more than elo0=0 Elo); after only 12 pairs, how many more games it needs cannot be told yet "
        "(a guess comes from 20 pairs on)")
    # The cap is said when the wait is longer than the games left.
    pattern = [(1, 1), (1, 0.5), (0.5, 0.5), (0, 0.5)] * 6
    capped = _state(pattern, SPRT(0, 30), limit=60)
    assert capped.verdict().endswith(f"{ROUGH}, more than the 12 left before the cap (--max-games 60)")
    # Stopped at the cap undecided: where the LLR ended, between which bounds, and what to do.
    stopped = _state(pattern, SPRT(0, 30), stopped="max-games", limit=48)
    assert stopped.verdict() == (
        f"no decision after 48 games (Elo +89 [+9, +179], 95 %): {WHY}, and its LLR ended at 1.13, between its "
        "bounds -2.94 (H0: better by no more than elo0=0 nElo) and +2.94 (H1: v3 better than v2 by elo1=30 nElo); "
        f"at its drift so far it needs about 130 more games on average {ROUGH}. Start a new match with a larger "
        "--max-games (about 178 games), or ask a coarser question: elo1=90 decides sooner (the games needed grow "
        "as 1/(elo1 - elo0) squared)")


def test_an_llr_past_its_bound_before_min_pairs_says_the_test_plays_on_to_the_minimum() -> None:
    sweep = _state([(1, 1)] * 6)
    assert sweep.decision is None and sweep.sprt is not None and sweep.sprt.llr(sweep.counts) > sweep.sprt.upper
    assert sweep.progress_line() == ("12 games, W-D-L 12-0-0 | Elo at least +28 | LLR 6.91 (-2.94, +2.94), past the "
                                     "upper bound already; playing on to the minimum of 10 pairs before deciding "
                                     "(4 more to play)")
    assert sweep.verdict().endswith("its LLR is past the upper bound already; playing on to the minimum of 10 pairs "
                                    "before deciding (4 more to play)")
    assert "past the lower bound already" in _state([(0, 0)] * 6).progress_line()
    # Within its bounds, or decided, the line says nothing more.
    assert _state([(1, 1)] * 2).progress_line().endswith("| LLR 1.33 (-2.94, +2.94)")
    assert _state([(1, 1)] * 10).progress_line().endswith("| LLR 14.86 (-2.94, +2.94)")
    # A cap below the minimum: no test could decide, and the advice is a larger cap, not a coarser question.
    capped = _state([(1, 1)] * 4, stopped="max-games", limit=8)
    assert capped.verdict() == (
        f"no decision after 8 games (Elo at least -72, 95 %): {WHY}, and it decides only from 10 pairs (20 games) on: "
        "the cap came first (its LLR ended at 3.76, past its upper bound). Start a new match with --max-games 20 or more")


def test_the_count_line_says_a_decided_match_needed_no_more_games() -> None:
    decided = _state([(1, 1)] * 11)  # decided at the tenth pair; the eleventh was running then
    assert decided.decided_after == 20
    assert decided.games_line(finished=20) == ("decided by the SPRT after 20 games; the remaining 980 of at most "
                                               "1000 games were not needed")
    assert decided.games_line(finished=22) == ("decided by the SPRT after 20 games; 2 more game(s) already running "
                                               "then finished and count too; the remaining 978 of at most 1000 games "
                                               "were not needed")
    assert decided.games_line(finished=23, running=1) == (
        "decided by the SPRT after 20 games; 3 more game(s) already running then finished, 2 of them in complete "
        "pairs, which count (1 still running); the remaining 976 of at most 1000 games were not needed")
    going = _state([(1, 0)] * 4)
    assert going.games_line(finished=9, running=2) == ("9 games played, 2 in progress; not decided yet: the SPRT plays "
                                                       "on until it decides, at most 1000 games")
    assert _state([(1, 0)] * 4, stopped="max-games", limit=8).games_line(finished=8) == (
        "8 of 8 games played, the most --max-games allows: the SPRT did not decide")
    assert _state([(1, 0)] * 4, sprt=None, limit=10).games_line(finished=8, running=2) == (
        "8 of 10 games played, 2 in progress")
    # The Elo of each side, for the standings' column: A's estimate, and B's the same mirrored.
    assert going.elo_of("v3").parts() == ("+0", "[-242, +242]")
    lead = _state([(1, 0.5)] * 6 + [(0.5, 0.5)] * 4)
    a, b = lead.elo_of("v3").parts(), lead.elo_of("v2").parts()
    assert a[0].startswith("+") and b[0] == "-" + a[0][1:] and b[1] == "[-" + a[1].split(", +")[1][:-1] + ", -" \
        + a[1][2:].split(",")[0] + "]"


def test_no_difference_found_when_the_test_accepts_h0_or_the_interval_holds_zero() -> None:
    # Equal agents, 144 pairs [LL LD DD WD WW] = [24 24 48 24 24] (elo1=50): LLR -2.98 <= -2.94, H0 accepted.
    state = _state([(0, 0), (0, 0.5), (0.5, 0.5), (0.5, 0.5), (1, 0.5), (1, 1)] * 24, SPRT(0, 50))
    assert state.decision == "H0" and state.sprt is not None and state.sprt.llr(state.counts) < state.sprt.lower
    assert state.verdict() == ("no difference found: v3 is not better than v2 by 50 nElo (elo1) or more "
                               f"({state.estimate().short()}, 95 %)")
    assert state.estimate().short() == "Elo +0 [-37, +37]"
    fixed = _state([(1, 0), (0.5, 0.5), (0, 1), (1, 0.5), (0, 0.5)], sprt=None, stopped="games")
    assert fixed.verdict() == "no difference found in 10 games (Elo +0 [-99, +99], 95 %): play more games to tell them apart"


def _count(database: Path, status: str) -> int:
    if not database.exists():
        return 0
    try:
        return query(database, f"SELECT COUNT(*) AS n FROM games WHERE status = '{status}'")[0]["n"]
    except Exception:  # the schema may not exist yet
        return 0


def _as_at_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # (see test_tournament_run: a shell's background job ignores it)


@pytest.mark.parametrize("args, message", [
    (["random", "greedy", "--games", "3"], "must be even"),
    (["random", "greedy"], "give --games N or --sprt"),
    (["random", "greedy", "--games", "4", "--sprt"], "give --games N or --sprt"),
    (["random", "greedy", "--games", "4", "elo1=5"], "need --sprt"),
    (["random", "greedy", "--sprt", "elo0=5", "elo1=0"], "elo1 must be above elo0"),
    (["random"], "expected two agents"),
    (["random", f"bob={sys.executable} -c pass", "--games", "2", "--openings", "BOOK"], "bob does not declare"),
    (["random", "manual:me", "--games", "2"], "a match is played by programs"),
    (["random", "greedy", "--games", "2", "--time-for", "nobody=2"], "'nobody' is not an agent of this game"),
    (["random", "greedy", "--games", "2", "--time-for", "greedy=0"], "the seconds must be a positive number"),
])
def test_a_bad_match_command_line_says_what_is_wrong(tmp_path: Path, args: list[str], message: str) -> None:
    book = tmp_path / "book.txt"
    book.write_text(BOOK)
    args = [str(book) if arg == "BOOK" else arg for arg in args]
    result = CliRunner().invoke(cli, ["match", *args, "--out", str(tmp_path / "m")])
    assert result.exit_code == 2 and message in result.output, result.output


def test_resume_says_what_is_wrong(tmp_path: Path) -> None:
    nowhere = CliRunner().invoke(cli, ["match", "--resume", str(tmp_path / "none")])
    assert nowhere.exit_code == 2 and "no match here (match.toml is missing)" in nowhere.output
    first = CliRunner().invoke(cli, ["match", "random", "greedy", "--games", "2", "--time", "3", "--out", str(tmp_path / "m"), "-q"])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(cli, ["match", "random", "greedy", "--games", "2", "--out", str(tmp_path / "m")])
    assert again.exit_code == 2 and f"holds a match already: go on with it with --resume {tmp_path / 'm'}" in again.output
    mixed = CliRunner().invoke(cli, ["match", "random", "greedy", "--resume", str(tmp_path / "m")])
    assert mixed.exit_code == 2 and "--resume DIR goes on with the match as it was started" in mixed.output
    done = CliRunner().invoke(cli, ["match", "--resume", str(tmp_path / "m")])
    assert done.exit_code == 0 and "1 pair(s) already played" in done.output
    assert any(line.startswith("final: random vs greedy: 2 games") for line in done.output.splitlines())


@pytest.mark.parametrize("table, message", [
    ('[match]\nsprt = "elo0=5 elo1=1"', "[match] sprt: elo1 must be above elo0"),
    ('[match]\nsprt = 3', '[match] sprt = 3: expected a string such as "elo0=0 elo1=10"'),
    ('[match]\nstop = "now"', "unknown key(s) in [match]: stop"),
])
def test_a_broken_match_file_names_the_key(tmp_path: Path, table: str, message: str) -> None:
    from othello_arena.tournaments.schedule.config import TournamentFileError, load

    path = tmp_path / "match.toml"
    path.write_text(f'agents = ["random", "greedy"]\n[tournament]\ngames_per_pairing = 2\n{table}\n')
    with pytest.raises(TournamentFileError, match=re.escape(message)):
        load(path)


def test_time_odds_go_into_the_match_file_and_every_game(tmp_path: Path) -> None:
    out = tmp_path / "m"
    result = CliRunner().invoke(cli, ["match", "random", "greedy", "--games", "2", "--time", "2",
                                      "--time-for", "greedy=5", "--seed", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 s per move (greedy 5 s)" in result.output
    assert 'name = "greedy"\nbuiltin = "greedy"\ntime_per_move = 5.0' in (out / "match.toml").read_text()
    records = [GameRecord.load(str(path)) for path in sorted(out.glob("games/*/game.json"))]
    assert len(records) == 2 and all(r.extra["referee"]["agent_times"] == {"greedy": 5.0} for r in records)



def test_a_match_says_above_its_verdict_which_timeouts_may_be_the_machines(tmp_path: Path) -> None:
    # The sleeper never answers its 3rd move, asleep (no CPU): the runner flags each such timeout as maybe the
    # machine's load, and the match's closing lines say so, with where, above the verdict that counts them.
    first = f"first={sys.executable} {TINY_AGENT} --name {{name}} --style first"
    sleeper = f"sleeper={sys.executable} {TINY_AGENT} --name {{name}} --style last --sleep-at 3"
    result = CliRunner().invoke(cli, ["match", first, sleeper, "--games", "2", "--seed", "3", "--time", "2", "-j", "1",
                                      "--out", str(tmp_path / "m"), "-q"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    flagged = next(line for line in lines if "ended by a timeout that may be the machine's load" in line)
    assert flagged.startswith("2 game(s) of 2 ended") and "they count in the figures above" in flagged, flagged
    for line in lines[lines.index(flagged) + 1:lines.index(flagged) + 3]:
        assert "timeout under load? CPU" in line and re.search(r"sleeper ran out of time at move \d+;", line), line
    assert lines[-1] == json.loads((tmp_path / "m" / "match.json").read_text())["verdict"]  # the verdict stays last
