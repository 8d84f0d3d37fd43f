"""The rules core, tested on positions drawn in ASCII and on perft counts."""

import pytest

from othello_arena.protocol import (
    BLACK,
    WHITE,
    Board,
    IllegalMoveError,
    Move,
    ParseError,
    parse_board,
    parse_move,
    parse_square,
    perft,
    square_name,
)

PERFT = [1, 4, 12, 56, 244, 1396, 8200, 55092, 390216]


@pytest.mark.parametrize("depth", range(len(PERFT)))
def test_perft_from_the_start_matches_the_published_counts(depth):
    assert perft(Board(), depth) == PERFT[depth]


def test_start_position_is_seed_003s():
    board = Board()
    assert board.at(parse_square("D5")) is WHITE
    assert board.at(parse_square("E4")) is WHITE
    assert board.at(parse_square("D4")) is BLACK
    assert board.at(parse_square("E5")) is BLACK
    assert board.to_move is WHITE
    assert sorted(square_name(m.square) for m in board.legal_moves()) == ["C4", "D3", "E6", "F5"]


def test_seed_003_example_moves():
    # (W D 3) flips D4; then (B C 3) flips D4 back (the diagonal C3-D4-E5).
    board = Board().play(parse_move("(W D 3)"))
    assert board.at(parse_square("D4")) is WHITE
    board = board.play(parse_move("(B C 3)"))
    assert board.at(parse_square("D4")) is BLACK
    assert (board.count(WHITE), board.count(BLACK)) == (3, 3)


def test_flips_in_all_eight_directions_and_no_wrap_round():
    board = parse_board(
        """
        8 W . . W . . W .
        7 . B . B . B . .
        6 . . B B B . . .
        5 W B B . B B W .
        4 . . B B B . . .
        3 . B . B . B . .
        2 W . . W . . W .
        1 . . . . . . . B
        W to move
        """
    )
    after = board.play(Move(WHITE, parse_square("D5")))
    assert after.count(BLACK) == 1  # only H1 is left: every line was bracketed
    assert after.count(WHITE) == board.count(WHITE) + board.count(BLACK) - 1 + 1


def test_a_run_reaching_the_edge_is_not_bracketed_across_it():
    # White on H4 and a black run A5..B5: playing C5 must not "bracket" via the wrap from H4 to A5.
    board = parse_board(
        """
        8 . . . . . . . .
        7 . . . . . . . .
        6 . . . . . . . .
        5 B B . . . . . .
        4 . . . . . . . W
        3 . . . . . . . .
        2 . . . . . . . .
        1 . . . . . . . .
        W to move
        """
    )
    assert board.legal_squares() == 0


def test_forced_pass():
    # Black has no disc move, White does: Black's only legal move is a pass.
    board = parse_board(
        """
        8 . . . . . . . .
        7 . . . . . . . .
        6 . . . . . . . .
        5 . . . . . . . .
        4 . . . . . . . .
        3 . . . . . . . .
        2 W B . . . . . .
        1 W W . . . . . .
        B to move
        """
    )
    assert board.legal_moves() == [Move.pass_(BLACK)]
    assert not board.is_game_over()
    after = board.play(Move.pass_(BLACK))
    assert after.to_move is WHITE and after.white == board.white and after.black == board.black
    assert [square_name(m.square) for m in after.legal_moves()] == ["C2", "B3", "C3"]


def test_a_pass_is_illegal_while_a_move_exists():
    with pytest.raises(IllegalMoveError, match="pass is legal only"):
        Board().play(Move.pass_(WHITE))


def test_illegal_moves_say_why():
    board = Board()
    with pytest.raises(IllegalMoveError, match="D5 is occupied"):
        board.play(Move(WHITE, parse_square("D5")))
    with pytest.raises(IllegalMoveError, match="A1 flips no disc"):
        board.play(Move(WHITE, parse_square("A1")))
    with pytest.raises(IllegalMoveError, match="White's turn"):
        board.play(Move(BLACK, parse_square("C5")))


def test_illegal_move_and_parse_error_are_kept_apart():
    assert issubclass(IllegalMoveError, ValueError) and issubclass(ParseError, ValueError)
    assert not issubclass(IllegalMoveError, ParseError) and not issubclass(ParseError, IllegalMoveError)


def test_game_that_ends_before_the_board_is_full():
    # The shortest Othello game: nine moves wipe out one colour (here after the 9th, Black has none).
    board = Board()
    moves = ["(W E 6)", "(B F 4)", "(W E 3)", "(B F 6)", "(W G 5)", "(B D 6)", "(W E 7)", "(B F 5)", "(W C 5)"]
    for line in moves:
        assert board.outcome() is None
        board = board.play(parse_move(line))
    assert board.is_game_over()
    assert board.empty != 0
    outcome = board.outcome()
    assert outcome is not None
    assert outcome.winner is WHITE and outcome.black_discs == 0 and outcome.white_discs == 13
    assert board.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="game is over"):
        board.play(Move.pass_(BLACK))


def test_full_board_draw_is_a_draw():
    text = "\n".join(["W W W W W W W W"] * 4 + ["B B B B B B B B"] * 4)
    board = parse_board(text)
    outcome = board.outcome()
    assert outcome is not None and outcome.winner is None and outcome.is_draw
    assert (outcome.white_discs, outcome.black_discs) == (32, 32)


def test_a_pass_is_falsy_and_reprs_paste_back():
    assert not Move.pass_(WHITE)
    assert Move(WHITE, 19)
    move = Move(BLACK, parse_square("C3"))
    assert eval(repr(move), {"Move": Move}) == move
    assert repr(WHITE) == "Colour.WHITE"
