"""The starter agents (agents/examples/starter.*, Starter.java): built, checked and played for real.

Each language's starter is built with the very ``build`` line of
agents/starters.toml, in the tournament's sandbox, from a copy of
agents/examples (the repository is never written); then it must pass
``othello check`` (its openings too: every starter declares them), play
through the referee against ``greedy`` from an opening at 1 s a move and
against ``random``, and, searched to a fixed depth, choose the same move as
every other language on the same positions, also in whole games from
openings: they are translations of one program.  A language whose toolchain
is missing is skipped, saying which Debian package to install (``.ci/run``
installs them all).
"""

from __future__ import annotations

import importlib.util
import os
import random
import shlex
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Sequence

import pytest
from agents_helpers import HandDriver
from opening_helpers import play_from_opening

from othello_arena.protocol import BLACK, WHITE, Board, Colour, Move
from othello_arena.protocol.openings import BALANCED, opening_board, parse_opening, read_openings, suite_path
from othello_arena.referee import AgentSpec, GameConfig

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "agents" / "examples"
TOURNAMENT = ROOT / "agents" / "starters.toml"


@dataclass(frozen=True)
class Language:
    agent: str  # its name in agents/starters.toml
    tools: tuple[str, ...]  # programs its build and its command need
    package: str  # the Debian package(s) that provide them


LANGUAGES = [
    Language("python", ("python3",), "python3"),
    Language("c", ("gcc",), "gcc"),
    Language("cpp", ("g++",), "g++"),
    Language("java", ("javac", "java"), "default-jdk-headless"),
    Language("javascript", ("node",), "nodejs"),
    Language("rust", ("rustc",), "rustc"),
    Language("go", ("go",), "golang-go"),
    Language("awk", ("awk",), "mawk"),  # Debian's awk: in every installation (priority required)
]
IDS = [language.agent for language in LANGUAGES]


@dataclass(frozen=True)
class Built:
    """A starter built in its (copied) submission folder, with its tournament command."""

    name: str
    command: str  # as in the tournament file: "./starter_c {name}", "java -cp {home} Starter {name}"
    home: Path
    openings: bool = True  # declared in the tournament file (PROTOCOL.md section 8)
    reads_clock: bool = True  # declared in the tournament file too (PROTOCOL.md section 10)

    def spec(self, *options: str) -> AgentSpec:
        """The referee's agent, as the tournament makes it, with ``options`` before its name."""
        from othello_arena.tournaments.schedule.config import AgentEntry
        from othello_arena.tournaments.run.jobs import agent_spec

        command = self.command.replace("{name}", " ".join([*options, "{name}"]))
        return agent_spec(AgentEntry(name=self.name, command=command, cwd=str(self.home), openings=self.openings,
                                     reads_clock=self.reads_clock))

    def argv(self, *arguments: str) -> list[str]:
        """Its command line, run by hand in its home folder, with ``arguments`` in place of its name."""
        return shlex.split(self.command.replace("{name}", " ".join(arguments)).replace("{home}", str(self.home)))

    def analyze(self, positions: list[str], depth: int) -> list[str]:
        """The move lines it chooses for ``positions`` at a fixed ``depth`` (its --analyze mode)."""
        done = subprocess.run(self.argv("--depth", str(depth), "--analyze"), cwd=self.home,
                              input="".join(p + "\n" for p in positions), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()


@pytest.fixture(scope="session")
def starters_tournament(tmp_path_factory):
    """agents/starters.toml loaded against a copy of agents/examples (builds write there, not in the repo)."""
    from othello_arena.tournaments.schedule import config

    root = tmp_path_factory.mktemp("starters")
    shutil.copytree(EXAMPLES, root / "agents" / "examples",
                    ignore=shutil.ignore_patterns("starter_*", "*.class", "greedy"))
    shutil.copy(TOURNAMENT, root / "agents" / "starters.toml")
    return config.load(root / "agents" / "starters.toml")


def missing_toolchain(language: Language, path: Optional[str] = None) -> Optional[str]:
    """Why ``language``'s starter cannot be built here (naming the Debian package), or ``None``."""
    missing = [tool for tool in language.tools if shutil.which(tool, path=path) is None]
    if not missing:
        return None
    return f"the {language.agent} starter needs {' and '.join(missing)}: apt-get install {language.package} (.ci/run does)"


def test_a_missing_toolchain_is_named_with_its_debian_package(tmp_path):
    java = language_of("java")
    assert missing_toolchain(java, path=str(tmp_path)) == (
        "the java starter needs javac and java: apt-get install default-jdk-headless (.ci/run does)")


def test_ci_installs_every_toolchain():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    packages = ci.split("packages=(", 1)[1].split(")", 1)[0].split()
    # python3 runs the tests themselves; mawk is Debian's awk, installed everywhere
    assert {language.package for language in LANGUAGES if language.agent not in ("python", "awk")} <= set(packages)


# pytest may set a parametrized session fixture up again for the same language
# (when tests interleave its parameters): each starter is still built only once.
_BUILDS: dict[str, Built] = {}


def build_starter(language: Language, tournament, tmp_path_factory) -> Built:
    """``language``'s starter, built once per session with its tournament build line, sandboxed."""
    from othello_arena.tournaments.run.build import run_build

    missing = missing_toolchain(language)
    if missing:
        pytest.skip(missing)
    if language.agent not in _BUILDS:
        entry = next(e for e in tournament.agents if e.name == language.agent)
        if entry.build:
            log = tmp_path_factory.mktemp("build") / f"{entry.name}.log"
            result = run_build(entry.name, entry.build, entry.cwd, log, timeout=600, config=GameConfig())
            assert result.ok, f"{entry.build!r} failed ({result.detail}):\n{log.read_text(errors='replace')}"
        assert entry.command and entry.cwd
        _BUILDS[language.agent] = Built(entry.name, entry.command, Path(entry.cwd), entry.openings, entry.reads_clock)
    return _BUILDS[language.agent]


@pytest.fixture(scope="session", params=LANGUAGES, ids=IDS)
def starter(request, starters_tournament, tmp_path_factory) -> Built:
    """One language's starter, built once per session with its tournament build line, sandboxed."""
    return build_starter(request.param, starters_tournament, tmp_path_factory)


def language_of(agent: str) -> Language:
    return next(language for language in LANGUAGES if language.agent == agent)


def test_the_tournament_file_has_every_starter_and_the_builtin_opponents():
    from othello_arena.tournaments.schedule import config

    tournament = config.load(TOURNAMENT)
    names = {entry.name for entry in tournament.agents}
    assert set(IDS) | {"random", "greedy"} <= names
    for entry in tournament.agents:
        if entry.name in IDS:
            assert Path(entry.cwd or "") == EXAMPLES and "{name}" in (entry.command or "")
            assert entry.openings, f"{entry.name} reads openings: its table says openings = true"
            assert entry.reads_clock, f"{entry.name} reads the clock line: its table says reads_clock = true"


def test_students_guide_gives_each_build_and_run_line():
    """The students' guide's "The starter agents" part and the tournament file say the same thing."""
    from othello_arena.tournaments.schedule import config

    guide = (ROOT / "docs" / "STUDENTS.md").read_text(encoding="utf-8")
    for entry in config.load(TOURNAMENT).agents:
        if entry.name in IDS:
            assert entry.command in guide, entry.command
            if entry.build:
                assert entry.build in guide, entry.build


# -- othello check and real games ------------------------------------------------------


@pytest.mark.slow
def test_starter_passes_othello_check(starter, tmp_path):
    """Every item of the report card, the advisory ones too (it reads lower case, it notices an illegal move),
    and openings: declared, so the checker plays it on from one as both colours.

    At a fixed depth the starter is deterministic, so the checker's games (and
    the passes it steers towards) are the same in every language.
    """
    from othello_arena.agents.check import PASS, check_agent

    card = check_agent(starter.spec("--depth", "3"), time_per_move=1.0, workdir=tmp_path)
    assert "openings" in card.items
    assert all(item.status == PASS for item in card.items.values()), "\n".join(card.lines())
    # It reads as good: no advice or hint line, and one slowest-move figure, named.
    text = "\n".join(card.lines())
    assert card.lines()[-1] == "all checks passed" and "advi" not in text.lower() and "hint" not in text
    assert text.count("slowest move") == 1 and "answers in time: slowest move " in text


def assert_clean_game(record, starter_label: str) -> list[str]:
    """A game that ended normally, every move legal from the opening (or the start); returns the starter's comments.

    A loss on time on a machine that others keep busy says nothing of the starter (its core was not its own: at a
    load of 10 on 2 cores the awk starter lost at 1 s a move): that run skips, saying why, as the CPU tests do.
    """
    load, cores = os.getloadavg()[0], len(os.sched_getaffinity(0))
    if record.result.termination == "timeout" and load > cores + 1:
        pytest.skip(f"{record.result.detail}: at a load average of {load:.1f} on {cores} cores this run cannot tell "
                    "a slow starter from a busy machine")
    assert record.result.termination == "normal", record.result
    board = opening_board(record.opening) if record.opening else Board()
    comments = []
    for entry in record.moves:
        if record.white == starter_label and entry.move.colour is WHITE or \
                record.black == starter_label and entry.move.colour is BLACK:
            comments += entry.comments
        board = board.play(entry.move)
    assert board.is_game_over()
    assert (board.count(WHITE), board.count(BLACK)) == (record.result.white_discs, record.result.black_discs)
    return comments


def balanced_openings(count: int) -> list[list[Move]]:
    """The first ``count`` openings of the suite shipped with the arena (8 plies: White to move after them)."""
    return read_openings(suite_path(BALANCED))[:count]


@pytest.mark.slow
def test_starter_plays_greedy_from_an_opening_at_one_second_a_move_and_random(starter, tmp_path):
    """Through the referee, sandboxed: on its own clock at 1 s a move against greedy, with no fault,
    from a balanced opening (so the referee sends it the opening's moves, and the game is shorter).

    Against random it plays from the start position at a fixed depth (a fast
    game, the other colour): the clock is what the timed game is for.
    """
    from othello_arena.referee import play_game

    spec = starter.spec()
    index = IDS.index(starter.name)
    opening = balanced_openings(len(IDS))[index]
    white, black = (spec, AgentSpec.builtin("greedy")) if index % 2 == 0 else (AgentSpec.builtin("greedy"), spec)
    record = play_game(white, black, GameConfig(time_per_move=1.0), tmp_path / "timed", opening=opening)
    assert record.opening == opening
    comments = assert_clean_game(record, spec.label)
    # each move says how deep it searched: iterative deepening finished at least one depth
    assert any(c.startswith("depth ") and int(c.split()[1]) >= 1 for c in comments), comments

    fixed = starter.spec("--depth", "2")
    white, black = (AgentSpec.builtin("random"), fixed) if index % 2 == 0 else (fixed, AgentSpec.builtin("random"))
    assert_clean_game(play_game(white, black, GameConfig(time_per_move=1.0), tmp_path / "fixed"), fixed.label)


@pytest.mark.slow
def test_c_and_python_starters_play_a_game_pair_from_an_opening(starters_tournament, tmp_path_factory, tmp_path):
    """Two programs that declare openings, through the referee: the same opening, colours swapped.

    Both search 3 plies: translations of one program play the very same moves
    whichever language holds which colour.
    """
    from othello_arena.referee import play_game

    c = build_starter(language_of("c"), starters_tournament, tmp_path_factory).spec("--depth", "3")
    python = build_starter(language_of("python"), starters_tournament, tmp_path_factory).spec("--depth", "3")
    opening = parse_opening("d3 c5 f6")  # Black to move after it: the side that waits is White
    one = play_game(c, python, GameConfig(time_per_move=5.0), tmp_path / "1", opening=opening)
    two = play_game(python, c, GameConfig(time_per_move=5.0), tmp_path / "2", opening=opening)
    for record in (one, two):
        assert record.opening == opening and record.moves[0].move.colour is BLACK
        assert_clean_game(record, c.label)
    assert [entry.move for entry in one.moves] == [entry.move for entry in two.moves]


# -- the same search in every language ---------------------------------------------------


def cells(board: Board) -> str:
    """The --analyze line of a position: 64 squares A1..H8, then the side to move."""
    letter = {WHITE: "W", BLACK: "B", None: "."}
    return "".join(letter[board.at(sq)] for sq in range(64)) + " " + board.to_move.value


def sample_positions(plies: tuple[int, int] = (1, 61), count: int = 40, seed: int = 17) -> list[Board]:
    """Positions after a seeded random number of random moves (within ``plies``), game not over.

    The whole game by default, with at least one side that must pass and one
    single legal move among them; ``(54, 59)`` gives endgames the starters solve.
    """
    rng = random.Random(seed)
    found: list[Board] = []
    must_pass = single = 0
    while len(found) < count or (plies == (1, 61) and not (must_pass and single)):
        board = Board()
        for _ in range(rng.randint(*plies)):
            if board.is_game_over():
                break
            board = board.play(rng.choice(board.legal_moves()))
        if board.is_game_over():
            continue
        moves = board.legal_moves()
        must_pass += moves[0].is_pass
        single += len(moves) == 1 and not moves[0].is_pass
        found.append(board)
    return found


ENDGAMES = (54, 59)
# (positions, depth) compared across languages: the middle game at two depths, endgames to the end
COMPARISONS = {"depth-3": ((1, 61), 3), "depth-5": ((1, 61), 5), "endgame-exact": (ENDGAMES, 64)}


def starter_weights() -> list[int]:
    """WEIGHTS of starter.py (the reference translation), read without running it as an agent."""
    spec = importlib.util.spec_from_file_location("starter_reference", EXAMPLES / "starter.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.WEIGHTS)


def minimax(board: Board, depth: int, weights: list[int]) -> int:
    """The starters' search without alpha-beta, on the project's own rules: the value for the side to move.

    Same conventions: a pass is a ply; at depth 0 the weight table; a finished
    game is the disc difference times 1000.
    """
    me: Colour = board.to_move
    if depth == 0:
        sign = {me: 1, me.opponent: -1}
        return sum(weights[sq] * sign.get(board.at(sq), 0) for sq in range(64))  # type: ignore[arg-type]
    if board.is_game_over():
        return (board.count(me) - board.count(me.opponent)) * 1000
    return max(-minimax(board.play(move), depth - 1, weights) for move in board.legal_moves())


@pytest.fixture(scope="module")
def reference_answers() -> dict[str, list[str]]:
    """starter.py's choices (python3 is always there) for each comparison."""
    built = Built("python", "python3 starter.py {name}", EXAMPLES)
    return {key: built.analyze([cells(board) for board in sample_positions(plies)], depth)
            for key, (plies, depth) in COMPARISONS.items()}


@pytest.mark.parametrize("key", ["depth-3", "endgame-exact"])
def test_reference_starter_plays_a_best_move_of_plain_minimax(reference_answers, key):
    """Alpha-beta, move ordering and iterative deepening change how fast, never the value of the move."""
    weights = starter_weights()
    plies, search_depth = COMPARISONS[key]
    for board, answer in zip(sample_positions(plies), reference_answers[key]):
        move = Move.parse(answer)
        assert move.colour is board.to_move and board.is_legal(move), (cells(board), answer)
        moves = board.legal_moves()
        if len(moves) == 1:
            assert move == moves[0]
            continue
        depth = min(search_depth, 64 - board.count(WHITE) - board.count(BLACK))  # as the starters' limit
        values = {m: -minimax(board.play(m), depth - 1, weights) for m in moves}
        assert values[move] == max(values.values()), (cells(board), answer, values)


def test_the_positions_tell_moves_apart(reference_answers):
    """The comparison means something: the answers vary, and include a pass."""
    answers = reference_answers["depth-5"]
    assert len(set(answers)) > 20
    assert any(answer.endswith(" P)") for answer in answers)


@pytest.mark.parametrize("key", list(COMPARISONS))
def test_starter_chooses_the_same_moves_as_starter_py(starter, reference_answers, key):
    plies, depth = COMPARISONS[key]
    positions = [cells(board) for board in sample_positions(plies)]
    answers = starter.analyze(positions, depth)
    differences = [(p, ours, theirs) for p, ours, theirs in zip(positions, answers, reference_answers[key])
                   if ours != theirs]
    assert len(answers) == len(positions)
    assert not differences, f"{starter.name} differs from starter.py ({key}): {differences[:3]}"


@pytest.mark.parametrize("colour", [WHITE, BLACK], ids=["moves-first", "waits"])
def test_starter_plays_on_from_an_opening_as_starter_py_would(starter, colour):
    """A whole game by hand from a balanced opening (White to move after it), searched 3 plies.

    The starter takes its colour and the opening's moves from its first
    NAME.in, replays them, and then each move it makes is the one starter.py
    chooses in that position (each language plays the same game: the test's
    replies are seeded).  As Black it must wait after the opening.
    """
    assert_plays_as_starter_py(starter, colour, f"hand-{colour.value}")


@pytest.mark.skipif(shutil.which("strace") is None,
                    reason="needs strace to refuse inotify: apt-get install strace (.ci/run does)")
def test_starter_plays_on_when_it_cannot_watch_its_directory(starter, tmp_path):
    """With inotify refused (every inotify_init fails with EMFILE, as when a user has no
    instance left), the starter falls back to looking again after short pauses and plays
    the same whole game by hand, waiting as Black after the opening.  (awk never watches:
    it cannot, so it always looks after pauses.)
    """
    if starter.name == "awk":
        pytest.skip("awk cannot watch a file: it always looks again after pauses")
    log = tmp_path / "strace.log"
    refuse = ["strace", "-f", "-qq", "-o", str(log), "-e", "trace=inotify_init,inotify_init1",
              "-e", "inject=inotify_init:error=EMFILE", "-e", "inject=inotify_init1:error=EMFILE"]
    assert_plays_as_starter_py(starter, BLACK, "unwatched", prefix=refuse)
    assert "EMFILE" in log.read_text(), "the starter never asked for inotify, so nothing was refused"


def assert_plays_as_starter_py(starter: Built, colour: Colour, name: str, prefix: Sequence[str] = ()) -> None:
    """``starter`` (its command after ``prefix``) plays a whole game by hand from a balanced
    opening as ``colour``, at 3 plies, choosing each move as starter.py does, and exits."""
    opening = balanced_openings(2)[colour is BLACK]
    driver = HandDriver([*prefix, *starter.argv("--depth", "3", name)], name, starter.home)
    try:
        chosen = play_from_opening(driver, colour, opening, seed=13)
        code, _, err = driver.wait_exit()
    finally:
        driver.close()
    assert code == 0, err  # it saw the end of the game by itself
    reference = Built("python", "python3 starter.py {name}", EXAMPLES).analyze([cells(b) for b, _ in chosen], 3)
    ours = [move.line() for _, move in chosen]
    differences = [(cells(board), a, b) for (board, _), a, b in zip(chosen, ours, reference) if a != b]
    assert len(chosen) >= 20 and not differences, f"{starter.name} differs from starter.py: {differences[:3]}"


# -- under a game clock (PROTOCOL.md section 10) -----------------------------------------


def test_starter_thinks_from_its_bank_not_from_othello_time(starter):
    """A whole game by hand with a (CLOCK 0.500) line in every file that asks for a move, and
    $OTHELLO_TIME at 1000 s: a starter that manages its bank thinks a share of 0.5 s a move
    and finishes the game; one that skipped the line would think 400 s before its first move
    (far past the driver's wait).  Every move must be legal, and the starter sees the end itself."""
    rng = random.Random(5)
    driver = HandDriver(starter.argv("clocked"), "clocked", starter.home,
                        env={"OTHELLO_TIME": "1000", "OTHELLO_CLOCK": "3+0.1"})
    bank = "(CLOCK 0.500)\n"
    try:
        board = Board()
        driver.send("W\n" + bank)
        moves = 0
        while not board.is_game_over():
            if board.to_move is WHITE:
                _, move = driver.receive()
                board = board.play(move)  # raises on an illegal move
                moves += 1
            else:
                move = rng.choice(board.legal_moves())
                board = board.play(move)
                driver.send(move.line() + "\n" + ("" if board.is_game_over() else bank))
        code, _, err = driver.wait_exit()
    finally:
        driver.close()
    assert code == 0, err
    assert moves >= 20


@pytest.mark.slow
@pytest.mark.parametrize("agent", IDS)
def test_starter_manages_a_short_game_clock_without_losing_on_time(agent, starters_tournament, tmp_path_factory,
                                                                  tmp_path):
    """Under --clock 3+0.1, declared as reading its bank (reads_clock = true in agents/starters.toml), the
    starter spreads the bank over the game: two games against greedy, one with each colour, end on the board,
    every move of the record with its bank."""
    from othello_arena.referee import play_game

    built = build_starter(language_of(agent), starters_tournament, tmp_path_factory)
    spec = built.spec()
    assert spec.reads_clock
    config = GameConfig(time_per_move=None, clock=(3.0, 0.1))
    for number, (white, black) in enumerate([(spec, AgentSpec.builtin("greedy")), (AgentSpec.builtin("greedy"), spec)]):
        record = play_game(white, black, config, tmp_path / f"game{number}")
        assert_clean_game(record, spec.label)  # no loss on time
        assert record.clock == "3+0.1" and all(entry.clock is not None for entry in record.moves)
