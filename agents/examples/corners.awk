#!/usr/bin/awk -f
# corners.awk: a complete Othello Arena agent in awk (the file protocol, see PROTOCOL.md).
#
# Strategy: take a corner if it can, else the first legal move in A1..H8 order.
#
# Run:    othello play "openings:corners=awk -f corners.awk {name}" random
#     or  chmod +x corners.awk && ./corners.awk NAME
#
# The name of its files comes from the first argument, else $OTHELLO_NAME,
# else "corners".  Plain POSIX awk (tested with mawk): it looks for
# NAME.in after pauses growing from 1 ms to 10 ms, deletes it after
# reading, checks the opponent's move, writes NAME.out.tmp and renames it
# to NAME.out.  It reads openings (PROTOCOL.md section 8): the moves after
# the colour in its first NAME.in.
# The search of the starters, in awk: starter.awk.

function other(c) { return c == "W" ? "B" : "W" }

# Discs a disc of colour c on square sq would flip; with apply, play it.
function flips(sq, c, apply,    d, col, row, run, total, k) {
    if (b[sq] != "") return 0
    total = 0
    for (d = 0; d < 8; d++) {
        col = sq % 8 + DC[d]; row = int(sq / 8) + DR[d]; run = 0
        while (col >= 0 && col < 8 && row >= 0 && row < 8 && b[row * 8 + col] == other(c)) {
            col += DC[d]; row += DR[d]; run++
        }
        if (run > 0 && col >= 0 && col < 8 && row >= 0 && row < 8 && b[row * 8 + col] == c) {
            total += run
            if (apply)
                for (k = 1; k <= run; k++) b[(int(sq / 8) + k * DR[d]) * 8 + sq % 8 + k * DC[d]] = c
        }
    }
    if (apply && total > 0) b[sq] = c
    return total
}

function has_move(c,    sq) {
    for (sq = 0; sq < 64; sq++) if (flips(sq, c, 0)) return 1
    return 0
}

function game_over() { return !has_move("W") && !has_move("B") }

# Corners first (A1 H1 A8 H8), then the first legal square; -1 to pass.
function choose(c,    i, sq) {
    for (i = 0; i < 4; i++) if (flips(CORNER[i], c, 0)) return CORNER[i]
    for (sq = 0; sq < 64; sq++) if (flips(sq, c, 0)) return sq
    return -1
}

# Sleep `p` seconds; returns the next pause, twice as long, at most 10 ms.  awk can neither
# watch a directory nor sleep by itself: each pause starts a shell and `sleep` (about 1 ms),
# so pauses start at 1 ms (while an answer may come at once) and grow to 10 ms (cheap when
# it comes late).
function pause_for(p) {
    system("sleep " p)
    return p * 2 < 0.01 ? p * 2 : 0.01
}

# Wait for NAME.in, read its lines into LINES[1..n], delete it; return n.
function take(    n, line, status, p) {
    for (p = 0.001; (status = (getline line < INBOX)) < 0; ) p = pause_for(p)
    n = 0
    if (status > 0) LINES[++n] = line
    while ((getline line < INBOX) > 0) LINES[++n] = line
    close(INBOX)
    system("rm -f '" INBOX "'")
    return n
}

function put(c, sq,    text) {
    text = sq < 0 ? "(" c " P)" : "(" c " " substr("ABCDEFGH", sq % 8 + 1, 1) " " int(sq / 8) + 1 ")"
    print text > TMP
    close(TMP)
    system("mv -f '" TMP "' '" OUTBOX "'")
}

# After our last move, let the referee take NAME.out before we exit (at most 2 s).
function wait_collected(    p, waited) {
    for (p = 0.001; waited < 2; p = pause_for(p)) {
        if (system("test -e '" OUTBOX "' && test ! -e '" INBOX "'") != 0) return
        waited += p
    }
}

BEGIN {
    name = ARGC > 1 ? ARGV[1] : ENVIRON["OTHELLO_NAME"]
    if (name == "") name = "corners"
    ARGC = 1  # do not read the name as an input file
    INBOX = name ".in"; OUTBOX = name ".out"; TMP = name ".out.tmp"
    split("1 1 0 -1 -1 -1 0 1", t); for (i = 0; i < 8; i++) DC[i] = t[i + 1]
    split("0 1 1 1 0 -1 -1 -1", t); for (i = 0; i < 8; i++) DR[i] = t[i + 1]
    CORNER[0] = 0; CORNER[1] = 7; CORNER[2] = 56; CORNER[3] = 63
    for (i = 0; i < 64; i++) b[i] = ""
    b[27] = "B"; b[28] = "W"; b[35] = "W"; b[36] = "B"   # D4 E4 D5 E5

    n = take()
    me = toupper(substr(LINES[1], match(LINES[1], /[A-Za-z]/), 1))
    to_move = "W"
    first = 2  # in an opening game (PROTOCOL.md section 8), the moves already played follow the colour
    while (1) {
        for (i = first; i <= n; i++) {
            s = toupper(LINES[i]); gsub(/[ \t\r()]/, "", s)
            if (s == "" || substr(s, 1, 1) == "C") continue
            if (substr(s, 1, 3) == "END") exit 0
            # Every move is checked, the opponent's and the opening's.
            c = substr(s, 1, 1)
            if (substr(s, 2, 1) == "" || substr(s, 2, 1) == "P") {
                sq = -1; legal = (c == to_move)   # also a lost turn (--illegal lose-turn)
            } else {
                col = index("ABCDEFGH", substr(s, 2, 1)); row = substr(s, 3, 1) + 0
                sq = (row - 1) * 8 + col - 1
                legal = (c == to_move && col > 0 && row >= 1 && row <= 8 && flips(sq, c, 0) > 0)
            }
            if (!legal) {
                msg = "illegal move received: " LINES[i] "; " (me == "W" ? "White" : "Black") " wins"
                print msg
                print msg > "/dev/stderr"
                exit 0
            }
            if (sq >= 0) flips(sq, c, 1)
            to_move = other(c)
        }
        if (game_over()) exit 0
        if (to_move == me) {
            sq = choose(me)
            put(me, sq)
            if (sq >= 0) flips(sq, me, 1)
            to_move = other(me)
            if (game_over()) { wait_collected(); exit 0 }
        }
        n = take()
        first = 1
    }
}
