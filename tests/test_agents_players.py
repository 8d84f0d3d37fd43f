"""The seed players, proved on positions drawn in ASCII (rows 8 at the top, as the referee draws them)."""

from __future__ import annotations

import random

import pytest

from othello_arena.agents import players as P
from othello_arena.agents.registry import get_strategy, names
from othello_arena.protocol import BLACK, WHITE, Board, Move, parse_board, parse_square


# The players of the seeds (the champion, another package, has its own tests).
SEED_PLAYERS = [name for name in names() if name != "champion"]


def sq(name: str) -> int:
    return parse_square(name)


def squares(bitboard: int) -> set[str]:
    from othello_arena.protocol import square_name
    return {square_name(s) for s in range(64) if bitboard >> s & 1}


def random_positions(count: int, seed: int = 1) -> list[Board]:
    """Positions from random play, some early, some late."""
    rng = random.Random(seed)
    boards = []
    while len(boards) < count:
        board = Board()
        for _ in range(rng.randrange(4, 50)):
            moves = board.legal_moves()
            if not moves:
                break
            board = board.play(rng.choice(moves))
        if not board.is_game_over():
            boards.append(board)
    return boards


# -- one-move players -----------------------------------------------------------

# White to move: F4 flips three discs, E3 one.
GREEDY_POSITION = """
    A B C D E F G H
  8 . . . . . . . . 8
  7 . . . . . . . . 7
  6 . . . . . . . . 6
  5 . . . . . . . . 5
  4 . W B B B . . . 4
  3 . . . . . . . . 3
  2 . . . . . B . . 2
  1 . . . . . . W . 1
    A B C D E F G H
  W to move
"""


def test_greedy_takes_the_move_that_maximises_discs():
    board = parse_board(GREEDY_POSITION)
    assert squares(board.legal_squares()) == {"F4", "E3"}
    # F4 flips C4 D4 E4 (three discs); E3 flips F2 (one).
    move = P.greedy()(board, WHITE, 60.0)
    assert move == Move(WHITE, sq("F4"))
    after = {m: board.play(m).count(WHITE) for m in board.legal_moves()}
    assert after[move] == max(after.values())


CORNER_POSITION = """
  8 . . . . . . . . 8
  7 . . . . . . . . 7
  6 . . . . . . . . 6
  5 . . . . . . . . 5
  4 . . . . . . . . 4
  3 . . W B B B . . 3
  2 . B . . . . . . 2
  1 . . . . . . . . 1
  W to move
"""


def test_weighted_prefers_the_corner_where_greedy_takes_discs():
    board = parse_board(CORNER_POSITION)
    assert squares(board.legal_squares()) == {"A1", "G3"}
    assert P.greedy()(board, WHITE, 60.0) == Move(WHITE, sq("G3"))  # three discs
    assert P.weighted()(board, WHITE, 60.0) == Move(WHITE, sq("A1"))  # the corner (+120)


def test_beginner_scans_columns_before_rows():
    # Column B comes before column C.
    board = parse_board("""
      8 . . . . . . . . 8
      7 . . . . . . . . 7
      6 . . . . . . . . 6
      5 . B . . . . . . 5
      4 . W . . . . . . 4
      3 . . W . . . . . 3
      2 . . B . . . . . 2
      1 . . . . . . . . 1
      W to move
    """)
    assert squares(board.legal_squares()) == {"B6", "C1"}
    assert P.beginner_strategy()(board, WHITE, 60.0) == Move(WHITE, sq("B6"))
    # the lowest square number (row-major scan) would be C1
    assert board.legal_moves()[0] == Move(WHITE, sq("C1"))


def test_random_plays_legal_moves_and_its_seed_repeats_them():
    board = Board()
    picks = [P.random_strategy(seed)(board, WHITE, 60.0) for seed in range(20)]
    assert set(picks) == set(board.legal_moves())  # all four openings turn up
    assert picks == [P.random_strategy(seed)(board, WHITE, 60.0) for seed in range(20)]


def test_a_player_who_must_pass_passes():
    board = parse_board("""
      8 . . . . . . . . 8
      7 . . . . . . . . 7
      6 . . . . . . . . 6
      5 . . . . . . . . 5
      4 . . . . . . . . 4
      3 . . . . . . . . 3
      2 W . . . . . . . 2
      1 W B . . . . . . 1
      B to move
    """)
    assert board.legal_moves() == [Move.pass_(BLACK)]
    for name in SEED_PLAYERS:
        assert get_strategy(name)(board, BLACK, 60.0) == Move.pass_(BLACK), name


# -- minimax and alpha-beta -----------------------------------------------------------


def test_minimax_at_depth_one_is_the_maximizer():
    for board in random_positions(8):
        value, move = P.minimax(board, 1, P.weighted_score)
        assert move == P.weighted()(board, board.to_move, 60.0)
        assert value == P.weighted_score(board.play(move), board.to_move)


def test_minimax_at_depth_two_is_max_of_min():
    """Spelled out without negamax: we maximise, the opponent minimises our evaluation."""
    for board in random_positions(6, seed=2):
        me = board.to_move

        def reply_value(after: Board) -> float:
            replies = after.legal_moves()
            if not replies:
                return P.final_value(after, me)
            return min(P.weighted_score(after.play(r), me) for r in replies)

        expected = max(reply_value(board.play(m)) for m in board.legal_moves())
        assert P.minimax(board, 2, P.weighted_score)[0] == expected


def test_a_won_game_is_worth_the_maximum():
    board = parse_board("""
      8 . . . . . . . . 8
      7 . . . . . . . . 7
      6 . . . . . . . . 6
      5 . . . . . . . . 5
      4 . . . . . . . . 4
      3 . . . . . . . . 3
      2 . . . . . . . . 2
      1 W B . . . . . . 1
      W to move
    """)
    for search in (P.minimax(board, 3, P.weighted_score), P.alphabeta(board, P.MIN_VALUE, P.MAX_VALUE, 3, P.weighted_score)):
        assert search == (P.MAX_VALUE, Move(WHITE, sq("C1")))


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_alphabeta_returns_the_minimax_value_and_move(depth):
    for board in random_positions(6, seed=depth):
        assert P.alphabeta(board, P.MIN_VALUE, P.MAX_VALUE, depth, P.weighted_score) == \
            P.minimax(board, depth, P.weighted_score)


def test_alphabeta_prunes_leaves_that_minimax_evaluates():
    """Instrument the evaluation, as PAIP does, to see what alpha-beta never looked at."""
    board = random_positions(1, seed=5)[0]
    seen: dict[str, list[Board]] = {"minimax": [], "alphabeta": []}

    def counting(key):
        def evaluate(leaf: Board, colour):
            seen[key].append(leaf)
            return P.weighted_score(leaf, colour)
        return evaluate

    P.minimax(board, 3, counting("minimax"))
    P.alphabeta(board, P.MIN_VALUE, P.MAX_VALUE, 3, counting("alphabeta"))
    assert set(seen["alphabeta"]) < set(seen["minimax"])
    assert len(seen["alphabeta"]) < len(seen["minimax"]) / 2


def test_searchers_answer_even_with_no_time_left():
    for name in ("minimax", "alphabeta", "paper-hard"):
        strategy = get_strategy(name)
        for board in random_positions(3, seed=9):
            assert board.is_legal(strategy(board, board.to_move, 0.0))


def test_with_time_to_spare_the_searcher_plays_the_fixed_depth_move():
    strategy = P.alphabeta_searcher(3, P.weighted_score)
    for board in random_positions(5, seed=11):
        assert strategy(board, board.to_move, 60.0) == P.alphabeta(board, P.MIN_VALUE, P.MAX_VALUE, 3, P.weighted_score)[1]


# -- the heuristics paper ------------------------------------------------------------


def test_stable_discs_grow_from_the_corner():
    board = parse_board("""
      8 . . . . . . . . 8
      7 . . . . . . . . 7
      6 . . . . . . . . 6
      5 . . . . . . . . 5
      4 . . . W B . . . 4
      3 W . . . . . . . 3
      2 W W . . . . . . 2
      1 W W W B . . . . 1
    """)
    # D1 (black) has an empty square beyond it on row 1 but leans on nothing; D4/E4 float.
    assert squares(P.stable_discs(board, WHITE)) == {"A1", "B1", "C1", "A2", "B2", "A3"}
    assert squares(P.stable_discs(board, BLACK)) == set()


def test_a_full_line_protects_along_it_but_not_across():
    board = parse_board("""
      8 . . . . . . . . 8
      7 . . . . . . . . 7
      6 . . . . . . . . 6
      5 . . . . . . . . 5
      4 B B B W W B B B 4
      3 . . . . . . . . 3
      2 . . . . . . . . 2
      1 . . . . . . . . 1
    """)
    assert P.stable_discs(board, WHITE) == 0  # D4 could still flip vertically
    full = P.filled_lines(board.white | board.black)
    assert squares(full[1]) == {f"{c}4" for c in "ABCDEFGH"}  # horizontal axis


def test_potential_mobility_at_the_start():
    # Empty squares next to a black disc: C3 D3 E3 C4 C5 F4 F5 F6 E6 D6; minus White's moves D3 C4 F5 E6.
    assert P.potential_mobility(Board(), WHITE) == 6
    assert P.potential_mobility_heuristic(Board(), WHITE) == 0


def test_corners_count_against_us_when_both_sides_can_take_them():
    only_white = parse_board(CORNER_POSITION)  # White can take A1, Black no corner
    assert P.corners_heuristic(only_white, WHITE) == 100
    assert P.corners_heuristic(only_white, BLACK) == -100
    both = parse_board("""
      8 . . . . . . . . 8
      7 . . . . . . . . 7
      6 . . . . . . . . 6
      5 . . . . . . . . 5
      4 . . . . . . . . 4
      3 B . W . . . . . 3
      2 W B . . . . . . 2
      1 . . . . . . . . 1
    """)
    # A1 is open to both: White through B2 (to C3), Black through A2 (to A3).
    assert both.legal_squares(WHITE) >> sq("A1") & 1 and both.legal_squares(BLACK) >> sq("A1") & 1
    assert P.corners_heuristic(both, WHITE) == P.corners_heuristic(both, BLACK) == -100


def test_the_paper_heuristics_are_zero_on_the_symmetric_start():
    assert P.paper_evaluate(Board(), WHITE) == 0
    assert P.paper_evaluate(Board(), BLACK) == 0


def test_each_heuristic_is_scaled_to_plus_minus_100():
    for board in random_positions(10, seed=3):
        for _, heuristic in P.PAPER_HEURISTICS:
            assert -100 <= heuristic(board, WHITE) <= 100


def test_paper_easy_maximises_the_paper_evaluation():
    for board in random_positions(5, seed=4):
        me = board.to_move
        best = max(board.legal_moves(), key=lambda m: P.paper_evaluate(board.play(m), me))
        assert get_strategy("paper-easy")(board, me, 60.0) == best


def test_paper_hard_searches_three_plies_from_its_own_side():
    for board in random_positions(3, seed=6):
        me = board.to_move

        def evaluate(leaf, player):
            value = P.paper_evaluate(leaf, me)
            return value if player is me else -value

        assert get_strategy("paper-hard")(board, me, 60.0) == P.minimax(board, 3, evaluate)[1]


# -- all of them ---------------------------------------------------------------------


def test_every_builtin_plays_legal_moves_to_the_end():
    rng = random.Random(0)
    for name in SEED_PLAYERS:
        strategy = get_strategy(name)
        board = Board()
        while not board.is_game_over():
            if board.to_move is WHITE:
                board = board.play(strategy(board, WHITE, 60.0))
            else:
                board = board.play(rng.choice(board.legal_moves()))
