"""Copies found by token fingerprints: a renamed copy with new comments is named, independent work is not.

Real source: every program starts from the Python starter, as students do; its
code is boilerplate and never counts as copied.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from othello_arena.classroom.similarity import Comparer, Program, SourceFile, read_sources

EXAMPLES = Path(__file__).resolve().parent.parent / "agents" / "examples"
STARTER = (EXAMPLES / "starter.py").read_text(encoding="utf-8")
STARTERS = [SourceFile(path.name, path.read_text(encoding="utf-8")) for path in sorted(EXAMPLES.iterdir())
            if path.is_file() and path.suffix != ".md"]

MOBILITY = '''
def evaluate(board, colour):
    """Mobility and corners: my moves minus theirs, corners weigh ten."""
    mine = len(legal_moves(board, colour))
    theirs = len(legal_moves(board, -colour))
    corners = 0
    for square in (0, 7, 56, 63):
        if board[square] == colour:
            corners += 10
        elif board[square] == -colour:
            corners -= 10
    frontier = 0
    for index, value in enumerate(board):
        if value == colour and any(board[n] == 0 for n in neighbours(index)):
            frontier -= 1
    return 3 * (mine - theirs) + corners + frontier


def neighbours(index):
    row, column = divmod(index, 8)
    found = []
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            if (dr or dc) and 0 <= row + dr < 8 and 0 <= column + dc < 8:
                found.append((row + dr) * 8 + column + dc)
    return found
'''

# The same code, every name changed, comments rewritten, blank lines moved: what a copier does.
MOBILITY_RENAMED = '''
def evaluate(b, who):
    # my own idea: count options
    a_count = len(legal_moves(b, who))

    b_count = len(legal_moves(b, -who))
    bonus = 0
    for sq in (0, 7, 56, 63):
        if b[sq] == who:
            bonus += 10
        elif b[sq] == -who:
            bonus -= 10
    edge = 0
    for i, v in enumerate(b):
        if v == who and any(b[k] == 0 for k in around(i)):
            edge -= 1
    return 3 * (a_count - b_count) + bonus + edge


def around(i):
    # squares next to i
    r, c = divmod(i, 8)
    out = []
    for x in (-1, 0, 1):
        for y in (-1, 0, 1):
            if (x or y) and 0 <= r + x < 8 and 0 <= c + y < 8:
                out.append((r + x) * 8 + c + y)
    return out
'''

PARITY = '''
WEIGHTS = [4, -3, 2, 2, 2, 2, -3, 4]


def evaluate(board, colour):
    """Disc parity late, edges early."""
    empty = board.count(0)
    score = 0
    if empty < 14:
        return sum(board) * colour
    for index in range(64):
        row, column = index // 8, index % 8
        if row in (0, 7) or column in (0, 7):
            score += WEIGHTS[min(row, column, 7 - row, 7 - column) * 0 + column] * board[index] * colour
    stable = sum(1 for corner in (0, 7, 56, 63) if board[corner] == colour)
    return score + 25 * stable - empty // 3
'''


def program(key: str, owner: str, extra: str, name: str = "agent.py") -> Program:
    return Program(key, owner, (SourceFile(name, STARTER + extra),))


def test_a_renamed_copy_with_new_comments_is_found_and_independent_work_is_not():
    comparer = Comparer(STARTERS)
    alice = program("1", "alice", MOBILITY)
    bob = program("2", "bob", MOBILITY_RENAMED, name="my_player.py")
    carol = program("3", "carol", PARITY)
    dave = program("4", "dave", "")  # the starter as it is
    pairs = comparer.similar_pairs([alice, bob, carol, dave])
    assert [(p.a, p.b) for p in pairs] == [("1", "2")], pairs
    assert pairs[0].similarity > 0.8
    assert "of 1's code is in 2's" in pairs[0].words()


def test_the_starter_alone_is_never_a_copy_and_one_student_is_never_compared_with_themselves():
    comparer = Comparer(STARTERS)
    two_starters = [program("1", "alice", ""), program("2", "bob", "")]
    assert comparer.similar_pairs(two_starters) == []
    own_versions = [program("1", "alice", MOBILITY), program("2", "alice", MOBILITY_RENAMED)]
    assert comparer.similar_pairs(own_versions) == []


def test_without_the_starters_as_boilerplate_everybody_would_be_flagged():
    """Why the boilerplate matters: the same class compared without it flags the independent pair."""
    pairs = Comparer(()).similar_pairs([program("1", "alice", MOBILITY), program("3", "carol", PARITY)])
    assert pairs and pairs[0].similarity > 0.6


def test_side_by_side_marks_the_shared_code_and_escapes_what_students_wrote():
    comparer = Comparer(STARTERS)
    hostile = MOBILITY + '\nBANNER = "<script>alert(1)</script>"\n'
    views = comparer.side_by_side(program("1", "alice", hostile), program("2", "bob", MOBILITY_RENAMED, "p.py"))
    assert len(views) == 1
    view = views[0]
    assert (view.a_name, view.b_name) == ("agent.py", "p.py")
    assert "<mark>" in view.a_html and "<mark>" in view.b_html
    assert "<script>" not in view.a_html and "&lt;script&gt;" in view.a_html


def test_read_sources_takes_text_files_and_never_a_link_or_a_binary(tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.c").write_text("int main(void) { return 0; }\n", encoding="utf-8")
    (tmp_path / "agent.bin").write_bytes(b"\x7fELF\0\0\0")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    secret = tmp_path.parent / "secret.py"
    secret.write_text("TOKEN = 'x'\n", encoding="utf-8")
    os.symlink(secret, tmp_path / "link.py")
    found = read_sources(tmp_path)
    assert [f.name for f in found] == ["src/main.c"]
