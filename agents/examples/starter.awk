#!/usr/bin/awk -f
# starter.awk: a starter Othello Arena agent in awk (the file protocol, see PROTOCOL.md).
#
# Strategy: iterative-deepening alpha-beta (negamax) over a square-weight table,
# under its own clock.  The same program exists in Python, C, C++, Java,
# JavaScript, Rust and Go (starter.*, Starter.java): same search, same
# evaluation, same move for the same position at the same depth.  Plain POSIX
# awk (tested with mawk, Debian's awk): no bit operations, no local arrays, so
# one board in an array, each move undone after it is searched.
#
# Run:    othello play "openings:starter=awk -f starter.awk -- {name}" random
#         othello check "openings:starter=awk -f starter.awk -- {name}"
#
# Usage:  awk -f starter.awk -- [NAME] [--depth N] [--analyze]
#   --          ends awk's own options: what follows is for this program
#   NAME        its files are NAME.in and NAME.out (default: $OTHELLO_NAME, else "starter")
#   --depth N   search exactly N plies, no clock (to debug, or to compare versions)
#   --analyze   no game: read positions from standard input, one a line,
#               64 characters A1 B1 .. H1 A2 .. H8 ('W', 'B', '.') then a space and
#               the side to move ('W' or 'B'); print the chosen move line for each
#
# The time per move is $OTHELLO_TIME seconds (default 60); see START_FRACTION.
# It reads openings (PROTOCOL.md section 8): the moves after the colour in its first NAME.in.
# Under a game clock (PROTOCOL.md section 10: $OTHELLO_CLOCK, declared with
# "clock:starter=...") it reads its bank, the (CLOCK seconds) line, and thinks
# a share of it: see move_seconds().
#
# Where to improve it: evaluate() (the evaluation), order_moves() (move ordering),
# START_FRACTION / ABORT_FRACTION (the time budget).  awk is some hundred times
# slower than C: expect a few plies a second, not ten.

# -- the board -------------------------------------------------------------------------
# b[0..63]: index = (row - 1) * 8 + column, A1 = 0, H1 = 7, H8 = 63;
# WHITE = 1, BLACK = -1, EMPTY = 0: a colour's opponent is -colour (negamax).

function setup(    i, sq, d, col, row, n, t) {
    WHITE = 1; BLACK = -1; EMPTY = 0; PASS = -1
    INF = 1000000  # above any score: a won game is at most 64 * 1000
    # The evaluation: a value per square (corners good, the squares next to them bad).
    # The table is symmetric, so it reads the same whichever way the rows are numbered.
    split("100 -20 10 5 5 10 -20 100 " \
          "-20 -50 -2 -2 -2 -2 -50 -20 " \
          "10 -2 1 1 1 1 -2 10 " \
          "5 -2 1 0 0 1 -2 5 " \
          "5 -2 1 0 0 1 -2 5 " \
          "10 -2 1 1 1 1 -2 10 " \
          "-20 -50 -2 -2 -2 -2 -50 -20 " \
          "100 -20 10 5 5 10 -20 100", t, " ")
    for (sq = 0; sq < 64; sq++) WEIGHTS[sq] = t[sq + 1] + 0
    # The time budget (TUNE HERE): of the OTHELLO_TIME seconds per move, start a new
    # depth only before START_FRACTION of them, and abandon a depth still running at
    # ABORT_FRACTION (then the best move of the last finished depth is played).
    # PROTOCOL.md section 4: answer by 0.9 * time, the referee allows time + 0.25 s.
    START_FRACTION = 0.40
    ABORT_FRACTION = 0.80
    CHECK_EVERY = 64  # look at the clock every 64 nodes: reading the time costs a file read
    # The 8 directions as (column, row) steps; STEP[d] is the same step as a change of index,
    # RAY[sq * 8 + d] how many squares lie from sq to the edge that way (no index past row 8).
    split("1 1 0 -1 -1 -1 0 1", t, " "); for (d = 0; d < 8; d++) DCOL[d] = t[d + 1] + 0
    split("0 1 1 1 0 -1 -1 -1", t, " "); for (d = 0; d < 8; d++) DROW[d] = t[d + 1] + 0
    for (d = 0; d < 8; d++) STEP[d] = DROW[d] * 8 + DCOL[d]
    for (sq = 0; sq < 64; sq++)
        for (d = 0; d < 8; d++) {
            col = sq % 8 + DCOL[d]; row = int(sq / 8) + DROW[d]
            for (n = 0; col >= 0 && col < 8 && row >= 0 && row < 8; n++) { col += DCOL[d]; row += DROW[d] }
            RAY[sq * 8 + d] = n
        }
}

function start_board(    sq) {
    for (sq = 0; sq < 64; sq++) b[sq] = EMPTY
    b[27] = BLACK; b[28] = WHITE; b[35] = WHITE; b[36] = BLACK  # D4 E4 D5 E5
}

# -- the rules -------------------------------------------------------------------------

# Number of discs a disc of `colour` on `sq` would flip (0: not a legal move).
# With `apply`, play it: the flipped squares go on the UNDO stack for unmake().
function flips(sq, colour, apply,    d, st, n, p, run, total, k) {
    if (b[sq] != EMPTY) return 0
    total = 0
    for (d = 0; d < 8; d++) {
        st = STEP[d]; n = RAY[sq * 8 + d]; p = sq + st; run = 0
        while (run < n && b[p] == -colour) { p += st; run++ }
        if (run > 0 && run < n && b[p] == colour) {
            total += run
            if (apply)
                for (k = 1; k <= run; k++) { b[sq + k * st] = colour; UNDO[TOP++] = sq + k * st }
        }
    }
    if (apply && total > 0) b[sq] = colour
    return total
}

# Play a legal move; returns how many discs it flipped (what unmake needs).
function make(sq, colour) { return flips(sq, colour, 1) }

# Take back the move `sq` of `colour` that flipped `n` discs.
function unmake(sq, colour, n) {
    while (n-- > 0) b[UNDO[--TOP]] = -colour
    b[sq] = EMPTY
}

# The legal squares of `colour` in A1..H8 order, into MOVES[ply * 64 ..]; returns how many.
# (awk has no local arrays: each ply of the search has its own slice of MOVES.)
function legal_moves(colour, ply,    sq, n) {
    n = 0
    for (sq = 0; sq < 64; sq++) if (b[sq] == EMPTY && flips(sq, colour, 0)) MOVES[ply * 64 + n++] = sq
    return n
}

function has_move(colour,    sq) {
    for (sq = 0; sq < 64; sq++) if (b[sq] == EMPTY && flips(sq, colour, 0)) return 1
    return 0
}

function game_over() { return !has_move(WHITE) && !has_move(BLACK) }

# -- the search ------------------------------------------------------------------------

# The position seen by `colour` (IMPROVE HERE: mobility, stable discs, parity...).
function evaluate(colour,    sq, sum) {
    sum = 0
    for (sq = 0; sq < 64; sq++) sum += WEIGHTS[sq] * b[sq]
    return sum * colour
}

# A finished game: the disc difference, scaled above any evaluation.
function final_score(colour,    sq, sum) {
    sum = 0
    for (sq = 0; sq < 64; sq++) sum += b[sq]
    return sum * colour * 1000
}

# Likely best first, so that alpha-beta cuts more (IMPROVE HERE): by square weight.
# An insertion sort, stable (ties keep A1..H8 order): every translation orders the same way.
function order_moves(ply, n,    base, i, j, m) {
    base = ply * 64
    for (i = 1; i < n; i++) {
        m = MOVES[base + i]
        for (j = i; j > 0 && WEIGHTS[MOVES[base + j - 1]] < WEIGHTS[m]; j--) MOVES[base + j] = MOVES[base + j - 1]
        MOVES[base + j] = m
    }
}

# Seconds from some fixed moment, to the hundredth: Linux's /proc/uptime is a
# file read, not a process; elsewhere `date` (to the second where it lacks %N).
function now(    line) {
    if ((getline line < "/proc/uptime") > 0) { close("/proc/uptime"); return line + 0 }
    "date +%s.%N" | getline line
    close("date +%s.%N")
    return line + 0
}

# Deadlines of one move; seconds == 0: no clock (fixed depth).
function start_clock(seconds,    t) {
    t = now()
    TIMED = seconds > 0
    START_BY = t + START_FRACTION * seconds
    ABORT_AT = t + ABORT_FRACTION * seconds
    TIME_UP = 0  # set when the clock ran out in the middle of a depth: every result is then void
}

# Seconds for this move: OTHELLO_TIME, or under a game clock (bank >= 0) the bank spread
# over our moves still to come (half the empty squares, at least 8) plus most of the
# increment, never more than 0.6 of the bank (the increment comes after the move) nor
# 0.9 of a cap (cap > 0).  (TUNE HERE)
function move_seconds(seconds, bank, increment, cap,    sq, empties, moves_left, budget) {
    if (seconds <= 0 || bank < 0) return seconds
    for (sq = 0; sq < 64; sq++) empties += b[sq] == EMPTY
    moves_left = int((empties + 1) / 2)
    if (moves_left < 8) moves_left = 8
    budget = bank / moves_left + 0.8 * increment
    if (budget > 0.6 * bank) budget = 0.6 * bank
    if (cap > 0 && budget > 0.9 * cap) budget = 0.9 * cap
    return budget
}

function out_of_time() {
    if (TIME_UP) return 1
    if (TIMED && ++NODES % CHECK_EVERY == 0 && now() >= ABORT_AT) TIME_UP = 1
    return TIME_UP
}

# The value of the board for `colour` to move, searched `depth` plies (a pass is a ply).
function negamax(colour, depth, alpha, beta, ply,    n, i, sq, flipped, score, best) {
    if (out_of_time()) return 0
    if (depth == 0) return evaluate(colour)
    n = legal_moves(colour, ply)
    if (n == 0) {
        if (!has_move(-colour)) return final_score(colour)
        return -negamax(-colour, depth - 1, -beta, -alpha, ply + 1)
    }
    order_moves(ply, n)
    best = -INF
    for (i = 0; i < n; i++) {
        sq = MOVES[ply * 64 + i]
        flipped = make(sq, colour)
        score = -negamax(-colour, depth - 1, -beta, -alpha, ply + 1)
        unmake(sq, colour, flipped)
        if (TIME_UP) return 0
        if (score > best) {
            best = score
            if (best > alpha) {
                alpha = best
                if (alpha >= beta) break  # the opponent will not allow this line
            }
        }
    }
    return best
}

# The best move at `depth` among TRIED[0..n-1] (the first of equal moves wins); its score in ROOT_SCORE.
function search_root(colour, n, depth,    i, sq, flipped, value, best_move, alpha) {
    best_move = TRIED[0]; alpha = -INF
    for (i = 0; i < n; i++) {
        sq = TRIED[i]
        flipped = make(sq, colour)
        value = -negamax(-colour, depth - 1, -INF, -alpha, 1)
        unmake(sq, colour, flipped)
        if (TIME_UP) return PASS
        if (value > alpha) { best_move = sq; alpha = value }
    }
    ROOT_SCORE = alpha
    return best_move
}

# Iterative deepening: the move (PASS to pass); the last finished depth and its score in DONE, SCORE.
function think(colour, max_depth,    n, i, k, best, empties, limit, depth, move) {
    n = legal_moves(colour, 0)
    order_moves(0, n)
    DONE = 0; SCORE = 0
    if (n <= 1) return n ? MOVES[0] : PASS
    best = MOVES[0]
    empties = 0
    for (i = 0; i < 64; i++) empties += b[i] == EMPTY
    limit = max_depth < empties ? max_depth : empties  # deeper than the empty squares is no deeper
    for (depth = 1; depth <= limit && (!TIMED || now() < START_BY); depth++) {
        # the previous depth's best move first: it is the likeliest best again
        TRIED[0] = best; k = 1
        for (i = 0; i < n; i++) if (MOVES[i] != best) TRIED[k++] = MOVES[i]
        move = search_root(colour, n, depth)
        if (TIME_UP) break  # keep the best move of the last finished depth
        best = move; DONE = depth; SCORE = ROOT_SCORE
    }
    return best
}

# -- the file protocol -----------------------------------------------------------------

function move_line(colour, sq,    c) {
    c = colour == WHITE ? "W" : "B"
    if (sq == PASS) return "(" c " P)"
    return "(" c " " substr("ABCDEFGH", sq % 8 + 1, 1) " " (int(sq / 8) + 1) ")"
}

# Read a line liberally ("(w d 3)", "(WD3)", "(B P)", "(B)"): returns "move" (setting
# LINE_COLOUR and LINE_SQ), "end", "clock" for "(CLOCK 12.345)" (setting LINE_BANK),
# "skip" for a comment or blank line, "bad" for anything else.
function parse_line(line,    text, col, row) {
    text = toupper(line)
    gsub(/[ \t\r\n()]/, "", text)
    if (substr(text, 1, 5) == "CLOCK") {
        if (text !~ /^CLOCK[0-9]*\.?[0-9]+$/) return "bad"
        LINE_BANK = substr(text, 6) + 0
        return "clock"
    }
    if (text == "" || substr(text, 1, 1) == "C") return "skip"
    if (substr(text, 1, 3) == "END") return "end"
    if (substr(text, 1, 1) != "W" && substr(text, 1, 1) != "B") return "bad"
    LINE_COLOUR = substr(text, 1, 1) == "W" ? WHITE : BLACK
    if (length(text) == 1 || substr(text, 2, 1) == "P") { LINE_SQ = PASS; return "move" }
    col = index("ABCDEFGH", substr(text, 2, 1)); row = index("12345678", substr(text, 3, 1))
    if (length(text) >= 3 && col > 0 && row > 0) { LINE_SQ = (row - 1) * 8 + col - 1; return "move" }
    return "bad"
}

# Sleep `p` seconds; returns the next pause, twice as long, at most 10 ms.  awk can neither
# watch a directory nor sleep by itself: each pause starts a shell and `sleep` (about 1 ms),
# so pauses start at 1 ms (while an answer may come at once) and grow to 10 ms (cheap when
# it comes late).
function pause_for(p) {
    system("sleep " p)
    return p * 2 < 0.01 ? p * 2 : 0.01
}

# Wait for `path` (the referee writes it atomically), read its lines into LINES[1..n], delete it; returns n.
function take_file(path,    n, line, status, p) {
    for (p = 0.001; (status = (getline line < path)) < 0; ) p = pause_for(p)
    n = 0
    if (status > 0) LINES[++n] = line
    while ((getline line < path) > 0) LINES[++n] = line
    close(path)
    system("rm -f '" path "'")
    return n
}

# Write NAME.out atomically: a temporary file, then a rename.
function put_move(name, text) {
    printf "%s", text > (name ".out.tmp")
    close(name ".out.tmp")
    system("mv -f '" name ".out.tmp' '" name ".out'")
}

# After our last move: let the referee take NAME.out (or send the end line), at most 2 s.
function wait_collected(name,    p, waited) {
    for (p = 0.001; waited < 2; p = pause_for(p)) {
        if (system("test -e '" name ".out' && test ! -e '" name ".in'") != 0) return
        waited += p
    }
}

function play_game(name, seconds, max_depth,    n, i, kind, to_move, me, first, sq, winner, bank, increment, cap,
                   plus, arrived, left) {
    start_board()
    to_move = WHITE
    # $OTHELLO_CLOCK "BASE+INC" and $OTHELLO_MOVE_CAP (PROTOCOL.md section 10)
    plus = index(ENVIRON["OTHELLO_CLOCK"], "+")
    increment = plus ? substr(ENVIRON["OTHELLO_CLOCK"], plus + 1) + 0 : 0
    cap = ENVIRON["OTHELLO_MOVE_CAP"] + 0
    bank = -1  # under a game clock: the seconds left, from the (CLOCK ...) line
    n = take_file(name ".in")
    arrived = now()  # our clock starts when NAME.in is there
    me = toupper(substr(LINES[1], match(LINES[1], /[^ \t]/), 1)) == "W" ? WHITE : BLACK
    first = 2  # in an opening game (PROTOCOL.md section 8), the moves already played follow the colour
    while (1) {
        for (i = first; i <= n; i++) {
            kind = parse_line(LINES[i])
            if (kind == "skip") continue
            if (kind == "clock") { bank = LINE_BANK; continue }
            if (kind == "end") return
            # Every move is checked, the opponent's and the opening's.  A pass is always taken:
            # with --illegal lose-turn the referee relays an illegal move as a pass.
            if (kind != "move" || LINE_COLOUR != to_move || (LINE_SQ != PASS && !flips(LINE_SQ, to_move, 0))) {
                winner = me == WHITE ? "White" : "Black"
                printf "illegal move received: %s; %s wins\n", LINES[i], winner > "/dev/stderr"
                exit 1
            }
            if (LINE_SQ != PASS) make(LINE_SQ, to_move)
            to_move = -to_move
        }
        if (game_over()) return
        if (to_move == me) {
            if (seconds > 0) {
                left = move_seconds(seconds, bank, increment, cap) - (now() - arrived)
                start_clock(left > 0.001 ? left : 0.001)
            } else {
                start_clock(0)  # --depth: no clock
            }
            sq = think(me, max_depth)
            put_move(name, "(C depth " DONE " score " SCORE ")\n" move_line(me, sq) "\n")
            if (sq != PASS) make(sq, me)
            to_move = -me
            if (game_over()) { wait_collected(name); return }
        }
        n = take_file(name ".in")
        arrived = now()
        first = 1
    }
}

# --analyze: one position a line on standard input, the chosen move line on standard output.
function analyze(seconds, max_depth,    line, parts, sq, c, colour) {
    while ((getline line) > 0) {
        if (split(line, parts, " ") < 2) continue
        for (sq = 0; sq < 64; sq++) {
            c = substr(parts[1], sq + 1, 1)
            b[sq] = c == "W" ? WHITE : c == "B" ? BLACK : EMPTY
        }
        colour = parts[2] == "W" ? WHITE : BLACK
        start_clock(seconds)
        print move_line(colour, think(colour, max_depth))
        fflush()
    }
}

BEGIN {
    setup()
    name = ENVIRON["OTHELLO_NAME"]; max_depth = 0; analyzing = 0
    for (i = 1; i < ARGC; i++) {
        if (ARGV[i] == "--depth" && i + 1 < ARGC) max_depth = ARGV[++i] + 0
        else if (ARGV[i] == "--analyze") analyzing = 1
        else name = ARGV[i]
    }
    ARGC = 1  # the arguments are not input files: standard input is (for --analyze)
    if (name == "") name = "starter"
    seconds = max_depth > 0 ? 0 : (ENVIRON["OTHELLO_TIME"] + 0 > 0 ? ENVIRON["OTHELLO_TIME"] + 0 : 60)
    if (max_depth <= 0) max_depth = 64
    if (analyzing) analyze(seconds, max_depth)
    else play_game(name, seconds, max_depth)
    exit 0
}
