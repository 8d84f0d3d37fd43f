"""Every format has a parser, a printer and a round-trip test."""

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from othello_arena.protocol import (
    BLACK,
    WHITE,
    Board,
    Comment,
    FaultyMove,
    GameRecord,
    Move,
    MoveRecord,
    ParseError,
    Result,
    draw_board,
    format_colour,
    format_comment,
    format_end,
    format_move,
    format_obf,
    format_transcript,
    parse_board,
    parse_colour,
    parse_end,
    parse_line,
    parse_message,
    parse_move,
    parse_obf,
    parse_square,
    parse_transcript,
)
from othello_arena.protocol.record import result_from_dict
from othello_arena.protocol.rules import Termination

moves_st = st.builds(Move, st.sampled_from([WHITE, BLACK]), st.one_of(st.none(), st.integers(0, 63)))


def random_game(seed: int, plies: int = 200) -> tuple[Board, list[Move]]:
    """A random legal game from the start, cut after ``plies`` moves."""
    rng = random.Random(seed)
    board, moves = Board(), []
    for _ in range(plies):
        legal = board.legal_moves()
        if not legal:
            break
        move = rng.choice(legal)
        moves.append(move)
        board = board.play(move)
    return board, moves


# -- move lines ---------------------------------------------------------------


@given(moves_st)
def test_move_line_round_trip(move):
    line = format_move(move)
    assert line.endswith(")\n") and line.count("\n") == 1
    assert parse_move(line) == move


def test_printer_writes_exactly_one_form():
    assert format_move(Move(WHITE, parse_square("D3"))) == "(W D 3)\n"
    assert format_move(Move.pass_(BLACK)) == "(B P)\n"


@pytest.mark.parametrize(
    "text",
    ["(W D 3)", "(w d 3)", "( W  D 3 )", "(W\tD\t3)", "(WD3)", "(W D 3)\r\n", "  (W D 3)\n", "(w D3)"],
)
def test_parser_is_liberal(text):
    assert parse_move(text) == Move(WHITE, parse_square("D3"))


@pytest.mark.parametrize("text", ["(B)", "(B P)", "(b p)", "(B P 0)", "(B P0)\r\n", "( B )"])
def test_all_pass_spellings(text):
    assert parse_move(text) == Move.pass_(BLACK)


def test_comment_lines_are_not_moves():
    assert parse_line("(C depth 9 score +4)") == Comment("depth 9 score +4")
    assert parse_line("(c thinking)\r\n") == Comment("thinking")
    assert parse_line("(C depth 9 (23 empties) score +4)") == Comment("depth 9 (23 empties) score +4")
    with pytest.raises(ParseError, match="comment"):
        parse_move("(C hello)")


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("W D 3", "start with"),
        ("(W D 3", "end with"),
        ("(X D 3)", "not W or B"),
        ("(W Z 3)", "not A-H"),
        ("(W D 9)", "not 1-8"),
        ("(W D 33)", "not 1-8"),
        ("(W D)", "no row"),
        ("(W D 3)(B C 3)", "one move per line"),
        ("()", "no colour"),
    ],
)
def test_bad_lines_say_what_was_wrong_and_quote_the_text(text, reason):
    with pytest.raises(ParseError) as info:
        parse_line(text)
    assert reason in str(info.value)
    assert repr(text) in str(info.value)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40))
def test_comment_round_trip(text):
    line = format_comment(text)
    assert line.endswith(")\n") and line.count("\n") == 1
    assert parse_line(line) == Comment(" ".join(text.split()))


def test_message_with_comments_and_one_move():
    comments, moves = parse_message("(C depth 9)\r\n(C score +4)\n\n(W C 4)")
    assert [c.text for c in comments] == ["depth 9", "score +4"]
    assert moves == [Move(WHITE, parse_square("C4"))]


# -- colour and end lines ---------------------------------------------------------


@pytest.mark.parametrize("colour", [WHITE, BLACK])
def test_colour_line_round_trip(colour):
    assert format_colour(colour) == colour.value + "\n"
    assert parse_colour(format_colour(colour)) is colour
    assert parse_colour(colour.full_name.lower()) is colour


@given(st.sampled_from([WHITE, BLACK, None]), st.integers(0, 64), st.integers(0, 64),
       st.sampled_from(list(Termination)))
def test_end_line_round_trip(winner, w, b, termination):
    result = Result(winner, termination, w, b)
    assert parse_end(format_end(result)) == result


# -- board drawings and OBF ---------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 60))
def test_board_drawing_round_trip(seed, plies):
    board, moves = random_game(seed, plies)
    drawing = draw_board(board, moves[-1] if moves else None)
    assert parse_board(drawing) == board


def test_drawing_has_row_8_at_the_top_and_marks_the_last_move():
    board = Board().play(parse_move("(W D 3)"))
    lines = draw_board(board, parse_move("(W D 3)")).splitlines()
    assert lines[1].startswith("  8 ") and lines[8].startswith("  1 ")
    assert lines[6] == "  3 . . . w . . . . 3"
    assert "B to move" in lines[-1]


def test_a_drawing_with_wrong_rows_is_refused():
    with pytest.raises(ParseError, match="8 rows"):
        parse_board(". . . .\n")
    upside_down = "\n".join(f"{row} . . . . . . . ." for row in range(1, 9))
    with pytest.raises(ParseError, match="from 8 at the top"):
        parse_board(upside_down)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 60))
def test_obf_round_trip(seed, plies):
    board, _ = random_game(seed, plies)
    assert parse_obf(format_obf(board)) == board


def test_start_position_is_the_standard_obf_start():
    # The standard start (Edax, FFO suites): d4 and e5 O, d5 and e4 X, X to move.
    standard = "---------------------------OX------XO--------------------------- X;"
    assert format_obf(Board()) == standard
    assert parse_obf(standard) == Board()


def test_obf_errors_name_the_problem():
    with pytest.raises(ParseError, match="64 cells"):
        parse_obf("XO-")
    with pytest.raises(ParseError, match="bad OBF cell"):
        parse_obf("Z" * 64 + " X")
    with pytest.raises(ParseError, match="side to move"):
        parse_obf("-" * 64)


# -- transcripts ---------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_transcript_round_trip_restores_passes(seed):
    _, moves = random_game(seed)
    while moves and not moves[-1]:
        moves.pop()  # a pass after the last disc move is not written in a transcript
    assert parse_transcript(format_transcript(moves)) == moves


def test_transcript_errors():
    with pytest.raises(ParseError, match="bad square"):
        parse_transcript("d3z9")
    with pytest.raises(ValueError, match="flips no disc"):
        parse_transcript("a1")


# -- game records --------------------------------------------------------------------


def finished_record(seed: int) -> GameRecord:
    board, moves = random_game(seed)
    outcome = board.outcome()
    assert outcome is not None
    return GameRecord(
        white="alice",
        black="bob",
        seed=seed,
        moves=[MoveRecord(m, round(0.5 + i / 100, 2), [f"note {i}"] if i % 7 == 0 else []) for i, m in enumerate(moves)],
        result=outcome,
        time_per_move=60.0,
    )


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_game_json_round_trip(seed):
    record = finished_record(seed)
    again = GameRecord.from_json(record.to_json())
    assert again == record
    data = json.loads(record.to_json())
    assert set(data) >= {"white", "black", "seed", "moves", "result"}
    assert data["moves"][0]["move"] == record.moves[0].move.line()
    assert set(data["result"]) == {"winner", "reason", "discs"}


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_game_json_round_trip_with_a_game_clock(seed):
    record = finished_record(seed)
    record.clock = "3+0.1"
    for i, entry in enumerate(record.moves):
        entry.clock = round(3.0 - i * 0.05, 4)
    data = json.loads(record.to_json())
    assert data["clock"] == "3+0.1" and data["moves"][1]["clock"] == 2.95
    assert GameRecord.from_json(record.to_json()) == record


def test_a_record_from_before_the_game_clock_reads_as_having_none():
    data = json.loads(finished_record(7).to_json())
    assert "clock" not in data and all("clock" not in move for move in data["moves"])
    old = GameRecord.from_dict(data)
    assert old.clock is None and all(entry.clock is None for entry in old.moves)


def test_game_json_errors_name_the_field():
    with pytest.raises(ParseError, match="'white'"):
        GameRecord.from_json('{"black": "b"}')
    with pytest.raises(ParseError, match="not valid JSON"):
        GameRecord.from_json("{")
    with pytest.raises(ValueError, match="unknown result reason"):
        result_from_dict({"winner": "W", "reason": "bored", "discs": {"W": 1, "B": 0}})


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_ggf_round_trip(seed):
    record = finished_record(seed)
    again = GameRecord.from_ggf(record.to_ggf())
    assert [m.move for m in again.moves] == [m.move for m in record.moves]
    assert again.white == "alice" and again.black == "bob"
    assert again.result is not None and again.result == record.result


# A real game from the Generic Game Server (GGS), as published in NBoard's
# test suite: Saio1200 (Black) vs Saio3000 (White), a 32-32 draw with a pass.
REAL_GGF = (
    "(;GM[Othello]PC[GGS/os]DT[2003.12.15_13:24:03.MST]PB[Saio1200]PW[Saio3000]"
    "RB[2197.01]RW[2199.72]TI[05:00//02:00]TY[8]RE[+0.000]"
    "BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]"
    "B[d3//0.01]W[c5//0.01]B[e6//0.01]W[d2//0.01]B[c6//0.01]W[d6//0.01]B[b5//0.01]W[f5//0.01]"
    "B[e7//0.01]W[f6//0.01]B[f4//0.01]W[f3//0.01]B[g4//0.01]W[d7//0.01]B[g3//0.01]W[g5//0.01]"
    "B[h6//0.01]W[h5//0.01]B[h4//0.01]W[e8//0.01]B[c7//0.01]W[h3//0.01]B[c3//0.01]W[h7//0.01]"
    "B[e3//0.01]W[b6//0.01]B[g6//5.42]W[f7//0.01]B[d8//0.01]W[c2//0.01]B[d1//0.01]W[c4//0.01]"
    "B[b4//0.01]W[a5//0.01]B[f8//0.01]W[f2//0.01]B[e2//0.01]W[a4//17.38]B[a3//19.10]W[b3//0.01]"
    "B[f1//4.90]W[g7//0.01]B[b7//0.01]W[c8//0.01]B[a6//0.01]W[a7//0.01]B[c1//0.01]W[b2//0.01]"
    "B[a8//0.01]W[b8//0.01]B[a2//0.01]W[e1//0.01]B[h8//0.01]W[g8//0.01]B[h2//0.01]W[g1//0.01]"
    "B[h1//3.80]W[g2//0.01]B[pass]W[a1//0.01]B[b1//0.01];)"
)


def test_a_real_standard_game_maps_onto_ours_by_keeping_labels_and_swapping_colours():
    record = GameRecord.from_ggf(REAL_GGF)
    # GGF's Black moved first: it is our White, and its d3 is our (W D 3).
    assert record.white == "Saio1200" and record.black == "Saio3000"
    assert record.moves[0].move == parse_move("(W D 3)")
    assert record.moves[1].move == parse_move("(B C 5)")
    # Every one of the 61 moves (with the pass) was legal under our rules, and the
    # game ends as GGS scored it: RE[+0.000], a draw.
    assert len(record.moves) == 61
    assert record.moves[-3].move == Move.pass_(WHITE)
    final = record.final_board()
    assert final.is_game_over()
    assert record.result is not None and record.result.winner is None
    assert (record.result.white_discs, record.result.black_discs) == (32, 32)
    # And back out: the same moves, the same result field.
    exported = record.to_ggf()
    assert "PB[Saio1200]PW[Saio3000]" in exported and "RE[+0.000]" in exported
    assert exported.count("B[") + exported.count("W[") - exported.count("PB[") - exported.count("PW[") == 61
    assert "B[d3//0.01]W[c5//0.01]" in exported
    assert [m.move for m in GameRecord.from_ggf(exported).moves] == [m.move for m in record.moves]
    # The transcript is the same string in both orientations.
    assert record.transcript().startswith("d3c5e6d2c6d6b5f5")


def test_ggf_result_gives_the_empty_squares_to_the_winner_as_the_standard_does():
    # The shortest game: White (GGF's Black) wipes Black out after 9 moves, 13-0
    # on the board with 51 empty squares; GGF (like every Othello program) scores it +64.
    board = Board()
    record = GameRecord("alice", "bob")
    for text in ("(W D 3)", "(B C 3)", "(W B 3)", "(B D 2)", "(W E 1)", "(B D 6)", "(W D 7)", "(B E 3)", "(W F 4)"):
        move = parse_move(text)
        board = board.play(move)
        record.moves.append(MoveRecord(move, 0.1))
    outcome = board.outcome()
    assert outcome is not None
    record.result = outcome
    assert (record.result.white_discs, record.result.black_discs) == (13, 0)  # the referee's counts stay
    assert "RE[+64.000]" in record.to_ggf()
    assert GameRecord.from_ggf(record.to_ggf()).result == record.result


@pytest.mark.parametrize("reason", [t.value for t in Termination if t.is_forfeit])
def test_every_forfeit_exports_to_ggf_as_a_loss_of_the_faulty_side(reason: str) -> None:
    record = GameRecord("alice", "bob")
    record.moves.append(MoveRecord(parse_move("(W D 3)"), 0.1))
    record.result = Result(BLACK, reason, 4, 1, "White's fault")
    exported = record.to_ggf()
    assert "RE[-64.000:t]" in exported if reason == "timeout" else "RE[-64.000:r]" in exported


# game.json and GGF as the code before Result carried a Termination (commit 14b2ff3) wrote them: files
# already on disk must still load, and be written back byte for byte.
OLD_GAME_JSON = (
    '{\n  "version": 1,\n  "white": "alice",\n  "black": "bob",\n  "seed": 7,\n  "time_per_move": 2.5,\n'
    '  "moves": [\n    {\n      "move": "(B C 3)",\n      "seconds": 0.1235,\n      "comments": [\n'
    '        "depth 3"\n      ]\n    },\n    {\n      "move": "(W P)",\n      "seconds": 0.5,\n'
    '      "comments": [\n        "lost turn"\n      ],\n      "forfeit": true\n    }\n  ],\n'
    '  "result": {\n    "winner": "W",\n    "reason": "timeout",\n    "discs": {\n      "W": 4,\n'
    '      "B": 3\n    },\n    "detail": "bob did not move within 2.5 s"\n  },\n  "opening": [\n'
    '    "(W D 3)"\n  ],\n  "agents": {\n    "alice": {\n      "colour": "W"\n    }\n  }\n}\n'
)
OLD_GGF = (
    "(;GM[Othello]PC[Othello Arena]PB[alice]PW[bob]TI[2.5]TY[8]RE[+64.000:t]"
    "BO[8 ---------------------------O*------*O--------------------------- *]B[d3//0.00]W[c3//0.12]B[PA//0.50];)"
)


def test_a_game_json_written_before_the_termination_enum_loads_and_writes_back_unchanged() -> None:
    record = GameRecord.from_json(OLD_GAME_JSON)
    assert record.result == Result(WHITE, Termination.TIMEOUT, 4, 3, "bob did not move within 2.5 s")
    assert record.result.termination is Termination.TIMEOUT  # the word read from the file became its member
    assert record.to_json() == OLD_GAME_JSON
    assert record.to_ggf() == OLD_GGF


def test_a_faulty_move_is_kept_apart_from_the_moves_and_round_trips() -> None:
    record = GameRecord("alice", "bob", time_per_move=1.0)
    record.moves.append(MoveRecord(parse_move("(W D 3)"), 0.1))
    record.result = Result(WHITE, Termination.ILLEGAL, 4, 1, "bob played (B D 3): occupied", move_number=2)
    record.fault = FaultyMove(BLACK, "(B D 3)", 0.25, ["depth 3 picks D3"])
    data = json.loads(record.to_json())
    assert data["result"]["move_number"] == 2
    assert data["fault"] == {"colour": "B", "line": "(B D 3)", "seconds": 0.25, "comments": ["depth 3 picks D3"]}
    assert [m["move"] for m in data["moves"]] == ["(W D 3)"]  # every reader of moves replays legal moves only
    back = GameRecord.from_json(record.to_json())
    assert back.fault == record.fault and back.result == record.result
    assert back.to_json() == record.to_json()
    assert back.to_ggf() == record.to_ggf() and back.transcript() == "d3"
    timeout = GameRecord.from_json(record.to_json().replace('"line": "(B D 3)"', '"line": null'))
    assert timeout.fault is not None and timeout.fault.line is None


def test_a_fault_with_a_bad_colour_is_refused_naming_it() -> None:
    text = GameRecord("alice", "bob").to_json().replace('"moves"', '"fault": {"colour": "X"}, "moves"')
    with pytest.raises(ParseError, match="'X'"):
        GameRecord.from_json(text)
