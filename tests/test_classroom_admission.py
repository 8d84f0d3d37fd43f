"""Admission without the server: a real sandboxed build, and what a hostile or broken build gets on its card."""

from __future__ import annotations

import threading

import pytest
from test_agents_check_passes import MOBILITY

from othello_arena.classroom.admission import BUSY_WAIT, admit, submit
from othello_arena.classroom.uploads import UploadRefused
from othello_arena.classroom.store import VersionStatus


def test_a_build_that_links_out_of_its_folder_is_rejected_and_a_failed_build_shows_the_compiler(class_store) -> None:
    settings, store = class_store(["mallory", "bob"], ["greedy"])
    folder = settings.folder
    # mallory's build plants a link to bob's submissions, which the referee would show her program
    version, _ = submit(settings, store, "mallory", [("agent.py", b"print()\n")], "python3 peek/agent.py",
                        f"ln -s {folder / 'submissions' / 'bob'} peek")
    card = admit(settings, version)
    assert card.status is VersionStatus.REJECTED and "a link out of the submission's folder: peek ->" in card.reason
    assert card.check == ()  # never run
    version, _ = submit(settings, store, "bob", [("agent.c", b"int main(void) { return nope; }\n")],
                        "./agent {name}", "gcc -o agent agent.c")
    card = admit(settings, version)
    assert card.status is VersionStatus.REJECTED and card.reason.startswith("the build failed")
    assert "nope" in card.build_log and "error" in card.build_log and card.build_status == "failed"
    assert (folder / "submissions" / "bob" / version.fingerprint / "agent.c").exists()
    assert not (folder / "submissions" / "bob" / version.fingerprint / "agent").exists()  # built elsewhere


@pytest.mark.slow
def test_a_strong_program_the_check_cannot_steer_into_a_pass_is_admitted_with_the_item_untested(class_store) -> None:
    """Issue 35: a correct agent that keeps its mobility (never left without a move by the check's steering) was
    rejected because "passes when it must" stayed UNTESTED.  What the check could not test is no evidence against it."""
    settings, store = class_store(["alice"], ["greedy"], time=0.5)
    version, _ = submit(settings, store, "alice", [("agent.py", MOBILITY.encode())], "python3 agent.py {name}", "")
    card = admit(settings, version)
    assert card.status is VersionStatus.ADMITTED, (card.reason, card.check)
    untested = [item for item in card.items if item.status is None]
    assert untested and "not counted against it" in card.reason
    assert all(item.title in card.reason for item in untested)
    # A program that does not pass when it must is still refused when a game shows it (from the forced openings).
    version, _ = submit(settings, store, "alice", [("agent.py", MOBILITY.encode())],
                        "openings:python3 agent.py {name} nopass", "")
    card = admit(settings, version)
    assert card.status is VersionStatus.REJECTED and card.reason.startswith("the check failed"), card.reason


def test_students_take_turns_at_the_admission_check(class_store) -> None:
    """One student's burst of versions does not hold the others' cards: the student whose last card is oldest goes first."""
    from othello_arena.classroom.admission import AdmissionWorker
    from othello_arena.classroom.store import Card

    settings, store = class_store(["alice", "bob", "carol"], ["greedy"])
    sent = {}
    for student, text in (("alice", "1"), ("alice", "2"), ("alice", "3"), ("bob", "1"), ("carol", "1")):
        version, _ = submit(settings, store, student, [("agent.py", f"# {text}\n".encode())], "python3 agent.py {name}", "")
        sent[(student, text)] = version
    worker = AdmissionWorker(settings, store)
    order = []
    while (waiting := worker.next_to_check()) is not None:
        order.append(waiting.student)
        store.decide(Card(waiting.student, waiting.id, waiting.fingerprint, VersionStatus.REJECTED, "for the test"))
    # alice sent three first; bob and carol each get their turn after her first, not after her third
    assert order == ["alice", "bob", "carol", "alice", "alice"]


def test_checks_run_on_the_cores_the_ladders_games_leave_free() -> None:
    from othello_arena.classroom.arena import LocalPool, usable_cores
    from othello_arena.classroom.worker import admission_cores

    cores = usable_cores()
    if len(cores) < 2:
        pytest.skip("one core: the ladder's game takes it, and a check pauses the ladder")
    fewer, every = LocalPool(len(cores) - 1), LocalPool(len(cores))
    try:
        assert admission_cores(fewer) == (cores[0],)  # the core the games leave to the referees
        assert admission_cores(every) is None  # no core free: a check pauses the ladder
    finally:
        fewer.close(abandon=True)
        every.close(abandon=True)


@pytest.mark.slow
def test_a_check_the_server_was_too_busy_to_time_neither_admits_nor_rejects_and_is_tried_again(class_store) -> None:
    """A class of 300 at its peak had every upload of the correct starter rejected for a move late for want of a
    core.  Here the load is real: the check's games on one core, two spinners on it, the program (starved from its
    second move: tests/cpu_agent.py --starve) waiting for a core.  No verdict; checked again later; bounded."""
    import datetime as dt
    import os
    import subprocess
    import sys
    from dataclasses import replace
    from pathlib import Path

    from othello_arena.classroom.admission import (BUSY_CHECKS, BUSY_GAVE_UP, BUSY_RECHECK_SECONDS, BUSY_WAIT,
                                                   AdmissionWorker, due_for_check, instructor_verdict, record_card)
    from othello_arena.classroom.store import VerdictAction

    settings, store = class_store(["alice"], ["greedy"], time=0.1)
    program = (Path(__file__).resolve().parent / "cpu_agent.py").read_bytes()
    version, _ = submit(settings, store, "alice", [("agent.py", program)],
                        "python3 agent.py {name} --work 0.05 --at 2 --starve", "")
    core = sorted(os.sched_getaffinity(0))[-1]
    spin = f"import os; os.sched_setaffinity(0, {{{core}}})\nwhile True: pass"
    spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
    try:
        card = admit(settings, version, cpus=(core,))
        assert card.status is VersionStatus.CHECKING, (card.reason, card.check)
        assert card.reason.startswith(f"{BUSY_WAIT} (check 1 of at most {BUSY_CHECKS}, the next in 5 min): "
                                      "could not tell: the machine was busy (load "), card.reason
        assert " s of clock and " in card.reason and " s waiting for a core)" in card.reason
        assert [item.key for item in card.items if item.status == "UNSURE"] == ["in-time"] and card.busy_checks == 1
        assert not [item for item in card.items if item.status == "FAIL"]
        record_card(settings, store, card)
        waiting = store.version(version.id)
        assert waiting is not None and waiting.status is VersionStatus.CHECKING and waiting.reason == card.reason
        # checked again later, not at once: the admission worker passes it by until then
        now = dt.datetime.now(dt.timezone.utc)
        assert not due_for_check(waiting, now) and AdmissionWorker(settings, store).next_to_check() is None
        assert due_for_check(waiting, now + dt.timedelta(seconds=BUSY_RECHECK_SECONDS + 1))
        # the last check allowed: no more tries by itself (this check stopped before its end: its games not played)
        store.decide(replace(card, busy_checks=BUSY_CHECKS - 1))
        last = store.version(version.id)
        assert last is not None
        card = admit(settings, last, cpus=(core,))
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    assert card.busy_checks == BUSY_CHECKS
    if card.status is VersionStatus.ADMITTED:  # every game got through, only the timing unsure
        assert card.reason.startswith(f"admitted; the server was too busy to time it in {BUSY_CHECKS} checks: its "
                                      "speed was not checked, and is not counted against it"), card.reason
        return
    assert card.status is VersionStatus.CHECKING and card.reason.startswith(f"{BUSY_GAVE_UP} in {BUSY_CHECKS} checks")
    record_card(settings, store, card)
    gave_up = store.version(version.id)
    assert gave_up is not None
    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    assert not due_for_check(gave_up, later) and AdmissionWorker(settings, store).next_to_check() is None
    # what the reason tells the student the instructor may do, the instructor may do
    instructor_verdict(settings, store, "alice", version.id, VerdictAction.ADMIT, "it is the starter", "instructor")
    admitted = store.version(version.id)
    assert admitted is not None and admitted.status is VersionStatus.ADMITTED


def test_a_script_the_command_starts_by_its_path_runs_though_an_upload_keeps_no_modes(class_store) -> None:
    """An upload keeps no file modes (a browser sends none): `./agent.py {name}` with a '#!' line was written
    without its execute bit and rejected at the check ("permission denied") though the student's copy runs.
    The program the command starts is made executable when it is one; a file that is none is refused at upload."""
    from pathlib import Path

    import othello_arena

    settings, store = class_store(["alice"], ["greedy"], time=1.0)
    starter = (Path(othello_arena.__file__).parent / "agents" / "examples" / "starter.py").read_bytes()
    assert starter.startswith(b"#!/usr/bin/env python3\n")
    version, _ = submit(settings, store, "alice", [("agent.py", starter), ("notes.txt", b"mine\n")],
                        "./agent.py {name}", "")
    card = admit(settings, version)
    # It started and played: admitted, or (a server too busy to time it) waiting to be checked again.
    assert card.status is VersionStatus.ADMITTED or card.reason.startswith(BUSY_WAIT), (card.reason, card.check)
    folder = settings.folder / "submissions" / "alice" / version.fingerprint
    assert (folder / "agent.py").stat().st_mode & 0o111 and not (folder / "notes.txt").stat().st_mode & 0o111
    with pytest.raises(UploadRefused, match=r"starts agent\.py itself, which is neither a script with a '#!' first "
                                             r"line .* or start it with its interpreter \(e\.g\. sh agent\.py \{name\}\)"):
        submit(settings, store, "alice", [("agent.py", starter.split(b"\n", 1)[1])], "./agent.py {name}", "")


def test_checks_start_one_a_lane_own_lanes_first_then_the_ladders() -> None:
    """The plan of which checks start now: the admission's own free lanes first, then the ladder's idle ones; a
    backlog while versions still wait (the ladder then starts no game)."""
    from othello_arena.classroom.admission import plan_checks
    from othello_arena.classroom.store import Version

    def version(number: int) -> Version:
        return Version(number, f"s{number}", f"fp{number}", "python3 a.py", "", False, False, (), 0, "",
                       VersionStatus.CHECKING, "", None, None)

    waiting = [version(1), version(2), version(3)]
    plan = plan_checks(waiting, [(0,)], [])
    assert [(v.id, lane) for v, lane in plan.starts] == [(1, (0,))] and plan.backlog
    plan = plan_checks(waiting, [(0,)], [(1,)])
    assert [(v.id, lane) for v, lane in plan.starts] == [(1, (0,)), (2, (1,))] and plan.backlog
    plan = plan_checks(waiting[:2], [(0,), (2,)], [(1,)])
    assert [(v.id, lane) for v, lane in plan.starts] == [(1, (0,)), (2, (2,))] and not plan.backlog  # own lanes first
    assert plan_checks([], [(0,)], [(1,)]) == plan_checks([], [], [])  # nothing waits: no start, no backlog


def test_admission_checks_on_every_free_lane_and_borrows_the_ladders_cores_when_versions_wait(class_store) -> None:
    """Real checks in the sandbox, in threads of their own: a student at a time, one check a lane; with versions
    waiting and no lane free, the ladder is asked to start no game, and once it is idle its core checks too."""
    from othello_arena.classroom.admission import AdmissionWorker
    from othello_arena.classroom.arena import usable_cores

    cores = usable_cores()
    if len(cores) < 2:
        pytest.skip("one core: no core of its own for the admission beside the ladder's")
    settings, store = class_store(["alice", "bob", "carol"], ["greedy"])
    sent = {}
    for student, text in (("alice", "1"), ("alice", "2"), ("bob", "1"), ("carol", "1")):
        version, _ = submit(settings, store, student, [("agent.py", f"import sys  # {text}\nsys.exit(3)\n".encode())],
                            "python3 agent.py {name}", "")
        sent[(student, text)] = version.id
    ladder_idle = [False]
    worker = AdmissionWorker(settings, store, cpus=(cores[0],), ladder_lanes=((cores[-1],),),
                             ladder_idle=lambda: ladder_idle[0])
    assert AdmissionWorker(settings, store).own_lanes == ((),)  # (no core given: one lane, on any core)
    assert not worker.wants_ladder_cores()
    first = worker.plan()
    assert [version.student for version, _ in first.starts] == ["alice"]  # one lane: alice's first, the others wait
    assert first.backlog and worker.wants_ladder_cores()  # the ladder is asked to start no game
    assert worker.plan().starts == ()  # its games are still in flight: not yet its core
    ladder_idle[0] = True
    second = worker.plan()
    assert [version.student for version, _ in second.starts] == ["bob"] and second.backlog  # the ladder's core
    assert worker.wants_ladder_cores()
    checks = [threading.Thread(target=worker.check, args=(version, lane))
              for version, lane in (*first.starts, *second.starts)]
    for thread in checks:
        thread.start()
    for thread in checks:
        thread.join()
    assert not worker.in_flight
    for key in (("alice", "1"), ("bob", "1")):
        row = store.version(sent[key])
        assert row is not None and row.status is VersionStatus.REJECTED and row.card is not None  # a real card
    third = worker.plan()  # carol (no card yet) before alice's second; both lanes free again
    assert [version.student for version, _ in third.starts] == ["carol", "alice"] and not third.backlog
    assert worker.wants_ladder_cores()  # a check runs on the ladder's core: it still starts no game
