"""Board sizes of seed 002 (8, 10, 12, 14) in the rules core and its formats.

The bitboard move generator of every size is checked against a slow one that
walks the board square by square (Edax's ``flip_slow`` bargain), on random
games; the formats (move lines, drawings, game.json, GGF, transcripts, the
size line) by round trips.
"""

from __future__ import annotations

import random

import pytest

from othello_arena.protocol import (
    BLACK,
    BOARD_SIZES,
    WHITE,
    Board,
    GameRecord,
    Move,
    MoveRecord,
    ParseError,
    draw_board,
    format_size,
    format_transcript,
    parse_board,
    parse_line,
    parse_size,
    parse_square,
    parse_transcript,
    perft,
    square,
    square_name,
)
from othello_arena.protocol.rules import flips, geometry, legal_squares

STEPS = [(dc, dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1) if (dc, dr) != (0, 0)]


def slow_flips(board: Board, sq: int) -> int:
    """The discs a move on ``sq`` flips, walking column and row numbers: no bitboard shift involved."""
    n = board.size
    own, opp = board.own, board.opp
    if (own | opp) >> sq & 1:
        return 0
    flipped = 0
    for dc, dr in STEPS:
        col, row, run = sq % n + dc, sq // n + dr, 0
        while 0 <= col < n and 0 <= row < n and opp >> (row * n + col) & 1:
            run |= 1 << (row * n + col)
            col, row = col + dc, row + dr
        if 0 <= col < n and 0 <= row < n and own >> (row * n + col) & 1:
            flipped |= run
    return flipped


def slow_legal(board: Board) -> int:
    return sum(1 << sq for sq in range(board.size ** 2) if slow_flips(board, sq))


@pytest.mark.parametrize("size", BOARD_SIZES)
def test_move_generation_matches_the_slow_walk_on_random_games(size: int) -> None:
    rnd = random.Random(size)
    shape = geometry(size)
    for _ in range(3):
        board = Board.start(size)
        while not board.is_game_over():
            assert board.legal_squares() == slow_legal(board), draw_board(board)
            moves = board.legal_moves()
            move = rnd.choice(moves)
            if move.square is not None:
                assert shape.flips(board.own, board.opp, move.square) == slow_flips(board, move.square)
            board = board.play(move)
        # a finished game: every square is counted once
        assert board.count(WHITE) + board.count(BLACK) <= size * size


def test_the_8x8_geometry_is_the_hand_written_generator_and_the_generic_one_agrees() -> None:
    shape = geometry(8)
    assert shape.legal_squares is legal_squares and shape.flips is flips
    rnd = random.Random(8)
    board = Board()
    while not board.is_game_over():
        assert shape._legal_squares(board.own, board.opp) == legal_squares(board.own, board.opp)
        move = rnd.choice(board.legal_moves())
        if move.square is not None:
            assert shape._flips(board.own, board.opp, move.square) == flips(board.own, board.opp, move.square)
        board = board.play(move)


@pytest.mark.parametrize("size", BOARD_SIZES)
def test_start_position_is_the_middle_four_with_white_to_move(size: int) -> None:
    board = Board(size=size)
    assert board == Board.start(size)
    m = size // 2
    assert board.at(square(m - 1, m + 1, size)) is WHITE and board.at(square(m, m, size)) is WHITE
    assert board.at(square(m - 1, m, size)) is BLACK and board.at(square(m, m + 1, size)) is BLACK
    assert board.to_move is WHITE and board.count(WHITE) == board.count(BLACK) == 2
    assert perft(board, 4) == 244  # the edges are out of reach: every size begins alike


def test_a_wide_board_reaches_its_far_corner() -> None:
    # White on A1..M1 save one black run: a move on N1 flips along the bottom row, across the wrap point of 8x8
    size = 14
    black = sum(1 << square(col, 1, size) for col in range(1, 13))
    white = 1 << square(0, 1, size)
    board = Board(white, black, WHITE, size)
    move = Move.parse("(W N 1)", size=14)
    after = board.play(move)
    assert after.count(WHITE) == 14 and after.count(BLACK) == 0
    # nothing wraps round the edge: a disc on N1 is not beside A2
    wrap = Board(1 << square(0, 3, size), 1 << square(0, 2, size), WHITE, size)
    assert wrap.legal_squares() == 1 << square(0, 1, size)


def test_board_sizes_other_than_seed_002s_are_refused_with_the_size_named() -> None:
    with pytest.raises(ValueError, match="board size 9 is not one of 8, 10, 12, 14"):
        Board(size=9)
    with pytest.raises(ValueError, match="bits on a 10x10 board"):
        Board(1 << 100, 0, WHITE, 10)


@pytest.mark.parametrize("line, size, name", [
    ("(B N 14)", 14, "N14"), ("(W J 10)", 10, "J10"), ("(W A 1)", 12, "A1"), ("(B L 12)", 12, "L12"),
    ("(W D 3)", 8, "D3"),
])
def test_move_lines_of_bigger_boards_round_trip(line: str, size: int, name: str) -> None:
    move = Move.parse(line, size)
    assert move.line() == line and square_name(move.square or 0, size) == name
    assert parse_square(name.lower(), size) == move.square
    assert Move.parse(line.lower().replace(" ", ""), size) == move
    assert eval(repr(move)) == move


def test_move_lines_outside_the_board_name_the_input_and_the_range() -> None:
    with pytest.raises(ParseError, match=r"'\(W K 3\)': column 'K' is not A-J"):
        parse_line("(W K 3)", 10)
    with pytest.raises(ParseError, match=r"'\(W D 11\)': row '11' is not 1-10"):
        parse_line("(W D 11)", 10)
    with pytest.raises(ParseError, match=r"row '10' is not 1-8"):
        parse_line("(W D 10)")  # the 8x8 protocol is unchanged
    with pytest.raises(ParseError, match="not a square: 'O1'"):
        parse_square("O1", 14)


def test_a_move_of_one_size_is_refused_on_a_board_of_another() -> None:
    with pytest.raises(ValueError, match="for a board of size 8, and this board is 10x10"):
        Board.start(10).play(Move.parse("(W D 3)"))


def test_drawing_of_a_10x10_board_reads_back() -> None:
    board = Board.start(10).play(Move.parse("(W E 4)", 10))
    text = draw_board(board)
    assert text.splitlines()[0] == "    A B C D E F G H I J"
    assert text.splitlines()[1] == " 10 . . . . . . . . . . 10"
    assert parse_board(text) == board


def test_size_line_round_trips_and_refuses_8_and_odd_sizes() -> None:
    assert format_size(12) == "(SIZE 12)\n" and parse_size(format_size(12)) == 12
    assert parse_size(" ( size  10 ) ") == 10
    for bad in ("(SIZE 8)", "(SIZE 9)", "(SIZE)", "SIZE 10"):
        with pytest.raises(ParseError, match="not a size line"):
            parse_size(bad)


def _random_game(size: int, seed: int) -> list[Move]:
    rnd = random.Random(seed)
    board, moves = Board.start(size), []
    while not board.is_game_over():
        move = rnd.choice(board.legal_moves())
        moves.append(move)
        board = board.play(move)
    return moves


@pytest.mark.parametrize("size", [10, 14])
def test_game_record_json_ggf_and_transcript_keep_the_size(size: int) -> None:
    moves = _random_game(size, 3)
    record = GameRecord("alice", "bob", seed=1, moves=[MoveRecord(m, 0.5) for m in moves],
                        start=Board.start(size))
    board = record.final_board()
    record.result = board.outcome()
    data = record.to_dict()
    assert data["size"] == size and "start" not in data
    back = GameRecord.from_json(record.to_json())
    assert back.size == size and back.final_board() == board and back.result == record.result
    ggf = record.to_ggf()
    assert f"TY[{size}]" in ggf and f"BO[{size} " in ggf
    from_ggf = GameRecord.from_ggf(ggf)
    assert from_ggf.size == size and from_ggf.final_board() == board
    assert [entry.move for entry in from_ggf.moves] == moves
    assert parse_transcript(format_transcript(moves), Board.start(size)) == moves


def test_an_8x8_record_has_no_size_field() -> None:
    record = GameRecord("a", "b", moves=[MoveRecord(Move.parse("(W D 3)"))])
    assert "size" not in record.to_dict() and "TY[8]" in record.to_ggf() and "BO[8 " in record.to_ggf()


def test_a_record_with_a_bad_size_names_it() -> None:
    with pytest.raises(ParseError, match="board size 9 is not one of"):
        GameRecord.from_dict({"white": "a", "black": "b", "size": 9})


def test_the_10x10_drawing_of_protocol_md_is_the_start_position() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8")
    section = text.split("## 9. Bigger boards")[1]
    drawing = section.split("```")[1]
    assert parse_board(drawing) == Board.start(10)
    assert drawing.strip("\n") == draw_board(Board.start(10)).rsplit("\n", 2)[0]
