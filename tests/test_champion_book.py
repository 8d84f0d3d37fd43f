"""The champion's opening book: found under every mirror image, played only by the champion agent, never a crash."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from champion_helpers import random_position
from othello_arena.agents.champion import book as B
from othello_arena.agents.champion import book_building
from othello_arena.agents.champion.agent import ChampionStrategy
from othello_arena.protocol import Board, Move
from othello_arena.protocol.openings import opening_board, read_openings, suite_path, symmetric_boards


def least_legal_move(board: Board) -> Move:
    """A move the book may hold that is rarely the search's (the first legal square): a book move is then visible."""
    return min(board.legal_moves(), key=lambda move: -1 if move.square is None else move.square)


def write_test_book(path: Path, moves: dict[Board, Move]) -> None:
    """A book holding ``moves`` (each board with the move to play there), stored canonical as the builder does."""
    entries = {}
    for board, move in moves.items():
        key, symmetry = B.canonical(board)
        assert move.square is not None
        entries[key] = B.Entry(B.SQUARE_MAPS[symmetry][move.square], 1.5, 7)
    B.write_book(path, entries, {"how": "a test's"})


def book_move(book: B.OpeningBook, board: Board) -> B.BookMove:
    found = book.lookup(board)
    assert found is not None, f"not in the book: {board}"
    return found


def positions(count: int, seed: int) -> list[Board]:
    rng = random.Random(seed)
    found = [b for b in (random_position(rng, rng.randint(4, 40)) for _ in range(3 * count)) if b.legal_squares()]
    return found[:count]


def test_every_mirror_image_and_colour_finds_the_same_move_turned_with_it(tmp_path):
    boards = positions(30, 1)
    path = tmp_path / "book.npz"
    write_test_book(path, {board: least_legal_move(board) for board in boards})
    book = B.load_book(path)
    assert len(book) == len({B.canonical(board)[0] for board in boards})
    for board in boards:
        move = least_legal_move(board)
        after = symmetric_boards(board.play(move))
        for k, image in enumerate(symmetric_boards(board)):
            # the same position with the colours swapped is the same position for the side to move
            for seen in (image, Board(image.black, image.white, image.to_move.opponent)):
                found = book_move(book, seen)
                assert found.move in seen.legal_moves()
                # the move is the image of the stored one: playing it gives the image of the stored line
                played = seen.play(found.move)
                assert (played.own, played.opp) == (after[k].own, after[k].opp)
                assert (found.score, found.depth) == (1.5, 7)


def test_a_position_not_in_the_book_is_none_and_a_book_move_never_illegal(tmp_path):
    boards = positions(10, 2)
    path = tmp_path / "book.npz"
    write_test_book(path, {board: least_legal_move(board) for board in boards[:5]})
    book = B.load_book(path)
    for board in boards[5:]:
        if B.canonical(board)[0] not in {B.canonical(b)[0] for b in boards[:5]}:
            assert book.lookup(board) is None
    # an entry whose move is illegal on the position (a damaged or foreign book) is no move
    board = boards[0]
    key, symmetry = B.canonical(board)
    illegal = next(sq for sq in range(64) if not board.legal_squares() >> sq & 1 and not (board.own | board.opp) >> sq & 1)
    B.write_book(path, {key: B.Entry(B.SQUARE_MAPS[symmetry][illegal], 0.0, 5)}, {})
    assert B.load_book(path).lookup(board) is None
    assert B.load_book(path).lookup(Board(size=10)) is None  # the book is of 8x8 games


def test_bad_book_files_raise_a_book_error_naming_the_file(tmp_path):
    missing = tmp_path / "none.npz"
    with pytest.raises(B.BookError, match=f"{missing}: no such file"):
        B.load_book(missing)
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file at all")
    with pytest.raises(B.BookError, match=f"{garbage}: unreadable"):
        B.load_book(garbage)
    other = tmp_path / "other.npz"
    np.savez(other, table=np.zeros(3))
    with pytest.raises(B.BookError, match=f"{other}: not a book file"):
        B.load_book(other)
    newer = tmp_path / "newer.npz"
    np.savez(newer, format=np.int64(B.BOOK_FORMAT + 1))
    with pytest.raises(B.BookError, match="this version reads format"):
        B.load_book(newer)
    ragged = tmp_path / "ragged.npz"
    np.savez(ragged, format=np.int64(B.BOOK_FORMAT), own=np.zeros(2, np.uint64), opp=np.zeros(2, np.uint64),
             square=np.zeros(1, np.int8), score=np.zeros(2, np.float32), depth=np.zeros(2, np.int8))
    with pytest.raises(B.BookError, match="different lengths"):
        B.load_book(ragged)


@pytest.mark.slow
def test_the_champion_plays_the_book_move_in_the_book_and_searches_elsewhere(tmp_path):
    boards = positions(6, 3)
    path = tmp_path / "book.npz"
    in_book, elsewhere = boards[:3], boards[3:]
    write_test_book(path, {board: least_legal_move(board) for board in in_book})
    strategy = ChampionStrategy(tt_bits=14, background=False, book=path)
    assert strategy.book is not None
    for board in in_book:
        for image in symmetric_boards(board):
            move, comments = strategy(image, image.to_move, 0.3)
            assert move in image.legal_moves()
            assert comments[0].startswith("champion book move ")
    for board in elsewhere:
        if B.canonical(board)[0] in {B.canonical(b)[0] for b in in_book}:
            continue
        move, comments = strategy(board, board.to_move, 0.3)
        assert move in board.legal_moves()
        assert not comments[0].startswith("champion book move") and comments[0].startswith("champion ")


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["missing", "garbage"])
def test_a_broken_or_missing_book_leaves_the_search_to_play_and_says_why(tmp_path, capsys, damage):
    path = tmp_path / "book.npz"
    if damage == "garbage":
        path.write_bytes(b"\x00" * 100)
    strategy = ChampionStrategy(tt_bits=14, background=False, book=path)
    assert strategy.book is None
    assert f"champion plays without its opening book: opening book {path}" in capsys.readouterr().err
    board = Board()
    move, comments = strategy(board, board.to_move, 0.3)
    assert move in board.legal_moves()
    assert comments[0].startswith("champion depth")
    assert any(f"without its opening book: opening book {path}" in text for text in comments[1:])
    board = board.play(move)
    _, later = strategy(board, board.to_move, 0.3)
    assert not any("opening book" in text for text in later)  # said once


@pytest.mark.slow
def test_only_the_champion_agent_consults_the_book(tmp_path, monkeypatch):
    # The opening suite's generator (the ladder's openings), `othello analyze` and a strategy without a book
    # search; the champion agent with its book plays from it.
    from othello_arena.agents.champion.cli import LazyEngine, analysis
    from othello_arena.tournaments.schedule.suite import champion_evaluator

    asked: list[Board] = []
    looked_up = B.OpeningBook.lookup

    def counting(self: B.OpeningBook, board: Board) -> B.BookMove | None:
        asked.append(board)
        return looked_up(self, board)

    monkeypatch.setattr(B.OpeningBook, "lookup", counting)
    board = positions(1, 4)[0]
    path = tmp_path / "book.npz"
    write_test_book(path, {board: least_legal_move(board)})
    monkeypatch.setattr(B, "book_path", lambda: path)  # the shipped book is this one now

    champion_evaluator(3)(board)
    analysis(board, LazyEngine(), None, 3, False)
    _, comments = ChampionStrategy(tt_bits=14, background=False, book=False)(board, board.to_move, 0.3)
    assert not comments[0].startswith("champion book move")
    assert asked == []
    move, comments = ChampionStrategy(tt_bits=14, background=False)(board, board.to_move, 0.3)
    assert asked == [board] and move == least_legal_move(board)
    assert comments[0].startswith("champion book move")


def test_the_start_positions_are_one_per_mirror_image():
    found = book_building.start_positions(3)
    # 1 start, 1 first move (all four are mirror images), 3 replies (perpendicular, diagonal, parallel), 14
    assert [len([b for b in found if (b.own | b.opp).bit_count() - 4 == plies]) for plies in range(4)] == [1, 1, 3, 14]


def test_the_shipped_book_is_small_readable_and_legal():
    path = B.book_path()
    assert path.stat().st_size < 1_000_000
    book = B.load_book()
    assert len(book) >= 500
    for name in ("command", "depth", "line", "roots", "cpu_seconds", "how"):
        assert name in book.info
    with np.load(path) as data:
        own, opp, squares = data["own"].tolist(), data["opp"].tolist(), data["square"].tolist()
    for p, o, square in zip(own, opp, squares):
        assert Board(p, o).legal_squares() >> square & 1  # the stored move is legal on the canonical board
    assert book_move(book, Board()).move in Board().legal_moves()
    first = opening_board(read_openings(suite_path("balanced"))[0])
    assert book_move(book, first).move in first.legal_moves()


@pytest.mark.slow
def test_the_builder_stores_the_engines_moves_along_each_line_and_says_how(tmp_path):
    out = tmp_path / "book.npz"
    assert book_building.main(["build", "--depth", "4", "--line", "2", "--start-plies", "1", "--minutes", "0.01",
                               "--openings", "balanced", "--out", str(out)]) == 0
    book = B.load_book(out)
    assert book.info["depth"] == "4" and book.info["line"] == "2" and int(book.info["roots"]) >= 1
    assert book.info["command"].startswith("python -m othello_arena.agents.champion.book_building build --depth 4")
    # the first root's line: the start, then along the moves found, each searched 4 plies deep
    board = Board()
    for _ in range(3):
        found = book_move(book, board)
        assert found.depth == 4 and found.move in board.legal_moves()
        board = board.play(found.move)
    assert len(book) >= 3
