"""The champion's search is right: the fast searches equal plain minimax, the
solver equals brute force, and a search stops when told."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

from champion_helpers import position_with_empties, random_position
from othello_arena.agents.champion import evaluation
from othello_arena.agents.champion import search as S
from othello_arena.agents.champion.engine import Engine
from othello_arena.protocol import BLACK, WHITE, Board, parse_board


@pytest.fixture(scope="module")
def engines():
    """One engine per evaluation (small tables: they are cleared per search anyway)."""
    return {
        "patterns": Engine(tt_bits=14, eval_kind=evaluation.EVAL_PATTERNS),
        "paper-simplified": Engine(tt_bits=14, eval_kind=evaluation.EVAL_PAPER_SIMPLIFIED),
    }


@pytest.mark.parametrize("kind", ["patterns", "paper-simplified"])
def test_negascout_and_alphabeta_equal_minimax(engines, kind):
    engine = engines[kind]
    rng = random.Random(11)
    for _ in range(25):
        board = random_position(rng, rng.randint(0, 56))
        P, O = np.uint64(board.own), np.uint64(board.opp)
        for depth in (1, 2, 3, 4):
            engine.clear()
            value, square = engine.search_depth(board, depth)
            reference = S.minimax(P, O, depth, engine.ev)
            assert value == reference, (board.draw(), depth)
            assert S.alphabeta(P, O, depth, -S.INF, S.INF, engine.ev) == reference
            if board.legal_squares():
                # the move it names is worth what it says
                child = board.play(board.legal_moves()[[m.square for m in board.legal_moves()].index(square)])
                assert -S.minimax(np.uint64(child.own), np.uint64(child.opp), depth - 1, engine.ev) == value


def test_search_reuses_its_table_between_depths_without_changing_values(engines):
    # Iterative deepening keeps the table: each depth's value must still be minimax's.
    engine = engines["patterns"]
    rng = random.Random(3)
    board = random_position(rng, 20)
    P, O = np.uint64(board.own), np.uint64(board.opp)
    engine.clear()
    for depth in range(1, 6):
        value, _ = engine.search_depth(board, depth)
        assert value == S.minimax(P, O, depth, engine.ev)


def test_solver_equals_brute_force_up_to_ten_empties(engines):
    engine = engines["patterns"]
    rng = random.Random(7)
    for empties in (1, 2, 3, 5, 7, 8, 9, 10, 10, 10):
        board = position_with_empties(rng, empties)
        exact = S.brute_force_score(np.uint64(board.own), np.uint64(board.opp))
        engine.clear()
        score, square = engine.solve_window(board, -65, 65)
        assert score == exact, board.draw()
        # window searches bound the same value from the right side
        low, _ = engine.solve_window(board, exact - 1, exact + 1)
        assert low == exact
        above, _ = engine.solve_window(board, exact, exact + 2)
        assert above <= exact
        below, _ = engine.solve_window(board, exact - 2, exact)
        assert below >= exact
        if board.legal_squares():
            child = board.play(next(m for m in board.legal_moves() if m.square == square))
            assert -S.brute_force_score(np.uint64(child.own), np.uint64(child.opp)) == exact


def test_think_solves_the_endgame_exactly(engines):
    engine = engines["patterns"]
    rng = random.Random(9)
    for _ in range(4):
        board = position_with_empties(rng, 10)
        exact = S.brute_force_score(np.uint64(board.own), np.uint64(board.opp))
        result = engine.think(board)
        assert result.exact and not result.outcome_only
        assert result.score == exact
        assert result.move(board.to_move) in board.legal_moves()


def test_a_side_without_moves_passes_and_the_search_sees_past_the_pass(engines):
    # White to move has no legal move; Black has.  The engine must answer a pass.
    board = parse_board(
        """
        8 B B B B B B B B 8
        7 B B B B B B B B 7
        6 B B B B B B B B 6
        5 B B B B B B B B 5
        4 B B B B B B B B 4
        3 B B B B B B B B 3
        2 B B B B B B W . 2
        1 B B B B B B . . 1
        """,
        to_move=WHITE,
    )
    assert board.legal_moves()[0].is_pass
    result = engines["patterns"].think(board)
    assert result.square is None
    # and Black, to move, wins by the whole board
    after = board.play(board.legal_moves()[0])
    assert after.to_move is BLACK
    solved = engines["patterns"].think(after)
    assert solved.exact and solved.score == S.brute_force_score(np.uint64(after.own), np.uint64(after.opp))


def test_a_search_stops_when_told(engines):
    engine = Engine(tt_bits=14)
    board = random_position(random.Random(1), 10)
    # No clock and no depth limit to speak of: only the stop request ends it.
    timer = threading.Timer(0.3, engine.stop)
    timer.start()
    try:
        engine._reset(0)
        engine.ctl[S.STOP] = 0
        S.negascout(np.uint64(board.own), np.uint64(board.opp), 40, -S.INF, S.INF, 0, engine.tt, engine.ev, engine.ctl, engine.mbuf, engine.kbuf, engine.mpc)
    finally:
        timer.cancel()
    assert engine.aborted


def test_think_with_a_clock_returns_a_legal_move_from_the_last_finished_depth(engines):
    board = random_position(random.Random(2), 12)
    result = Engine(tt_bits=14).think(board, seconds=0.3)
    assert result.move(board.to_move) in board.legal_moves()
    assert result.depth >= 1
    assert result.iterations and result.iterations[-1][0] == result.depth


def test_node_limit_stops_deterministically(engines):
    board = random_position(random.Random(4), 14)
    result = Engine(tt_bits=14).think(board, node_limit=20_000)
    assert result.move(board.to_move) in board.legal_moves()
    assert result.nodes <= 20_000 + S.CHECK_EVERY + 64


def test_a_search_stopped_at_once_still_names_a_legal_move():
    board = random_position(random.Random(12), 16)
    result = Engine(tt_bits=14).think(board, node_limit=1, exact=False)
    assert result.depth == 0
    assert result.move(board.to_move) in board.legal_moves()


def board_with_one_move(rng: random.Random) -> Board:
    # more than 14 empties: with fewer, the exact solve runs at once even for a single move (its score)
    while True:
        board = random_position(rng, rng.randint(20, 45))
        if len(board.legal_moves()) == 1 and not board.legal_moves()[0].is_pass and bin(board.empty).count("1") > 14:
            return board


def test_a_single_legal_move_is_answered_at_once_under_a_clock():
    board = board_with_one_move(random.Random(6))
    result = Engine(tt_bits=14).think(board, seconds=30)
    assert result.settled == "single move" and result.depth == 1
    assert result.move(board.to_move) == board.legal_moves()[0]
    # without a clock, or asked for the exact score, it searches as before
    assert Engine(tt_bits=14).think(board, max_depth=3).depth >= 3
    assert Engine(tt_bits=14, settle=False).think(board, seconds=0.5).settled == ""


def test_a_settled_move_is_clearly_the_best_at_its_depth():
    from othello_arena.agents.champion.engine import SETTLE_ITERATIONS, SETTLE_MARGIN, SETTLE_MIN_DEPTH

    board = random_position(random.Random(3), 24)
    # exact searches (no prob-cut): the margin is then a fact the reference searches can check
    result = Engine(probcut=0).think(board, seconds=120)
    # it stops on the search's own findings, not on the clock (120 s is far away)
    assert result.settled.startswith("same move")
    assert result.depth >= SETTLE_MIN_DEPTH
    assert [square for _, _, square in result.iterations[-SETTLE_ITERATIONS:]] == [result.square] * SETTLE_ITERATIONS
    # at that depth every other move is worth at least the margin less than the chosen one
    reference = Engine(tt_bits=16, settle=False)
    best, square = reference.search_depth(board, result.depth)
    assert square == result.square
    for move in board.legal_moves():
        if move.square != result.square:
            reference.clear()
            value, _ = reference.search_depth(board.play(move), result.depth - 1)
            assert -value <= best - SETTLE_MARGIN


@pytest.mark.parametrize("weights_kind", ["shipped", "random"])
def test_the_training_features_are_the_features_the_evaluation_reads(weights_kind):
    """Training fits weights to pattern_indices; play sums them in evaluate_patterns: the two must agree."""
    from othello_arena.agents.champion.patterns import N_STAGES, STAGE_WIDTH, TABLES, load_weights

    rng = random.Random(5)
    if weights_kind == "shipped":
        weights = load_weights()
    else:
        weights = np.random.default_rng(5).integers(-3000, 3000, (N_STAGES, TABLES.n_features), dtype=np.int32)
    assert weights.any()
    out = np.zeros(TABLES.n_indices, dtype=np.int64)
    for plies in rng.choices(range(0, 61), k=120):
        board = random_position(rng, plies)
        P, O = np.uint64(board.own), np.uint64(board.opp)
        n_empty = evaluation.pattern_indices(P, O, TABLES.squares, TABLES.lengths, TABLES.offsets, out)
        stage = min(n_empty // STAGE_WIDTH, N_STAGES - 1)
        from_features = int(weights[stage][out].sum())
        played = evaluation.evaluate_patterns(P, O, weights, TABLES.squares, TABLES.lengths, TABLES.offsets)
        assert played == from_features, board.draw()


def test_the_evaluation_turns_the_board_as_the_patterns_turn_their_instances():
    """The evaluation reads a pattern's other instances on the board turned a quarter (patterns.rotate's way)."""
    from othello_arena.agents.champion.patterns import rotate

    rng = random.Random(7)
    for bits in [0, 1, 1 << 63, 0xFF, 0x0101010101010101] + [rng.getrandbits(64) for _ in range(200)]:
        turned = int(evaluation.quarter_turn_py(np.uint64(bits)))
        assert turned == sum(1 << sq for sq in range(64) if bits >> rotate(sq) & 1), hex(bits)


def test_the_evaluation_refuses_patterns_it_does_not_gather():
    """A pattern changed in patterns.PATTERNS but not in evaluation.GATHERED is an error, not a wrong evaluation."""
    from othello_arena.agents.champion import patterns

    saved = patterns.PATTERNS["diag5"]
    patterns.PATTERNS["diag5"] = saved[:-1] + [patterns.square_number("H8")]
    try:
        with pytest.raises(ValueError, match="diag5"):
            evaluation._digit_table("diag5")
    finally:
        patterns.PATTERNS["diag5"] = saved


def test_an_iteration_cut_short_keeps_a_move_that_beat_the_last_best():
    # Exact searches (no prob-cut), so that each value can be checked on its own; the node limit
    # cuts the deepening at a node count, deterministically.
    rng = random.Random(21)
    engine = Engine(tt_bits=16, probcut=0)
    seen = 0
    for _ in range(12):
        board = random_position(rng, rng.randint(12, 30))
        if len(board.legal_moves()) < 3:
            continue
        for limit in (3_000, 6_000, 12_000, 25_000, 50_000):
            engine.clear()
            result = engine.think(board, node_limit=limit, exact=False)
            if not result.unfinished_move:
                continue
            seen += 1
            last_best = result.iterations[-1][2]
            assert result.square != last_best and "beaten by" in result.comments()[0]

            def value_at_next_depth(square: int) -> int:
                engine_ref = Engine(tt_bits=16, probcut=0)
                child = board.play(next(m for m in board.legal_moves() if m.square == square))
                return -engine_ref.search_depth(child, result.depth)[0]

            assert value_at_next_depth(result.square) > value_at_next_depth(last_best)
    assert seen >= 1
