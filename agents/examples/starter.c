/*
 * starter.c: a starter Othello Arena agent in C (the file protocol, see PROTOCOL.md).
 *
 * Strategy: iterative-deepening alpha-beta (negamax) over a square-weight table,
 * under its own clock.  The same program exists in Python, C++, Java, JavaScript,
 * Rust, Go and awk (starter.*, Starter.java): same search, same evaluation, same move
 * for the same position at the same depth.
 *
 * Build:  gcc -O2 -Wall -o starter_c starter.c
 * Run:    othello play "openings:starter=./starter_c {name}" random
 *
 * Usage:  starter_c [NAME] [--depth N] [--analyze]
 *   NAME        its files are NAME.in and NAME.out (default: $OTHELLO_NAME, else "starter")
 *   --depth N   search exactly N plies, no clock (to debug, or to compare versions)
 *   --analyze   no game: read positions from standard input, one a line,
 *               64 characters A1 B1 .. H1 A2 .. H8 ('W', 'B', '.') then a space and
 *               the side to move ('W' or 'B'); print the chosen move line for each
 *
 * The time per move is $OTHELLO_TIME seconds (default 60); see START_FRACTION.
 * It reads openings (PROTOCOL.md section 8): the moves after the colour in its first NAME.in.
 * Under a game clock (PROTOCOL.md section 10: $OTHELLO_CLOCK, declared with
 * "clock:starter=...") it reads its bank, the (CLOCK seconds) line, and thinks
 * a share of it: see move_seconds().
 *
 * Where to improve it: evaluate() (the evaluation), order_moves() (move ordering),
 * START_FRACTION / ABORT_FRACTION (the time budget).
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <poll.h>
#include <sys/inotify.h>
#endif

enum { WHITE = 1, BLACK = -1, EMPTY = 0 }; /* a colour's opponent is -colour (negamax) */
#define INF 1000000                         /* above any score: a won game is at most 64 * 1000 */
#define PASS (-1)

/* The board is 64 squares: index = (row - 1) * 8 + column, A1 = 0, H1 = 7, H8 = 63. */
typedef struct { int sq[64]; } Board;
static const int DCOL[8] = {1, 1, 0, -1, -1, -1, 0, 1};
static const int DROW[8] = {0, 1, 1, 1, 0, -1, -1, -1};

/* The evaluation: a value per square (corners good, the squares next to them bad).
 * The table is symmetric, so it reads the same whichever way the rows are numbered. */
static const int WEIGHTS[64] = {
    100, -20, 10, 5, 5, 10, -20, 100,
    -20, -50, -2, -2, -2, -2, -50, -20,
    10, -2, 1, 1, 1, 1, -2, 10,
    5, -2, 1, 0, 0, 1, -2, 5,
    5, -2, 1, 0, 0, 1, -2, 5,
    10, -2, 1, 1, 1, 1, -2, 10,
    -20, -50, -2, -2, -2, -2, -50, -20,
    100, -20, 10, 5, 5, 10, -20, 100,
};

/* The time budget (TUNE HERE): of the OTHELLO_TIME seconds per move, start a new
 * depth only before START_FRACTION of them, and abandon a depth still running at
 * ABORT_FRACTION (then the best move of the last finished depth is played).
 * PROTOCOL.md section 4: answer by 0.9 * time, the referee allows time + 0.25 s. */
#define START_FRACTION 0.40
#define ABORT_FRACTION 0.80

/* -- the rules ------------------------------------------------------------------------ */

static Board start_board(void) {
    Board b = {{0}};
    b.sq[27] = BLACK; b.sq[28] = WHITE; b.sq[35] = WHITE; b.sq[36] = BLACK; /* D4 E4 D5 E5 */
    return b;
}

/* Number of discs a disc of `colour` on `sq` would flip (0: not a legal move); with `apply`, play it. */
static int flips(Board *b, int sq, int colour, int apply) {
    if (b->sq[sq] != EMPTY) return 0;
    int total = 0;
    for (int d = 0; d < 8; d++) {
        int col = sq % 8 + DCOL[d], row = sq / 8 + DROW[d], run = 0;
        while (col >= 0 && col < 8 && row >= 0 && row < 8 && b->sq[row * 8 + col] == -colour) {
            col += DCOL[d]; row += DROW[d]; run++;
        }
        if (run > 0 && col >= 0 && col < 8 && row >= 0 && row < 8 && b->sq[row * 8 + col] == colour) {
            total += run;
            if (apply)
                for (int k = 1; k <= run; k++) b->sq[(sq / 8 + k * DROW[d]) * 8 + sq % 8 + k * DCOL[d]] = colour;
        }
    }
    if (apply && total > 0) b->sq[sq] = colour;
    return total;
}

/* The legal squares of `colour` in A1..H8 order, into moves[]; returns how many. */
static int legal_moves(Board *b, int colour, int moves[64]) {
    int n = 0;
    for (int sq = 0; sq < 64; sq++) if (flips(b, sq, colour, 0)) moves[n++] = sq;
    return n;
}

static Board play(Board b, int sq, int colour) { flips(&b, sq, colour, 1); return b; }

static int game_over(Board *b) {
    int moves[64];
    return legal_moves(b, WHITE, moves) == 0 && legal_moves(b, BLACK, moves) == 0;
}

/* -- the search ----------------------------------------------------------------------- */

/* The position seen by `colour` (IMPROVE HERE: mobility, stable discs, parity...). */
static int evaluate(const Board *b, int colour) {
    int sum = 0;
    for (int sq = 0; sq < 64; sq++) sum += WEIGHTS[sq] * b->sq[sq];
    return sum * colour;
}

/* A finished game: the disc difference, scaled above any evaluation. */
static int final_score(const Board *b, int colour) {
    int sum = 0;
    for (int sq = 0; sq < 64; sq++) sum += b->sq[sq];
    return sum * colour * 1000;
}

/* Likely best first, so that alpha-beta cuts more (IMPROVE HERE): by square weight.
 * An insertion sort, stable (ties keep A1..H8 order): every translation orders the same way. */
static void order_moves(int *moves, int n) {
    for (int i = 1; i < n; i++) {
        int m = moves[i], j = i;
        while (j > 0 && WEIGHTS[moves[j - 1]] < WEIGHTS[m]) { moves[j] = moves[j - 1]; j--; }
        moves[j] = m;
    }
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Deadlines of one move; timed == 0: no clock (fixed depth). */
static int timed;
static double start_by, abort_at;
static int time_up; /* set when the clock ran out in the middle of a depth: every result is then void */

/* Seconds for this move: OTHELLO_TIME, or under a game clock (bank >= 0) the bank spread
 * over our moves still to come (half the empty squares, at least 8) plus most of the
 * increment, never more than 0.6 of the bank (the increment comes after the move) nor
 * 0.9 of a cap (cap > 0).  (TUNE HERE) */
static double move_seconds(double seconds, double bank, const Board *b, double increment, double cap) {
    if (seconds <= 0 || bank < 0) return seconds;
    int empties = 0;
    for (int sq = 0; sq < 64; sq++) empties += b->sq[sq] == EMPTY;
    int moves_left = (empties + 1) / 2 > 8 ? (empties + 1) / 2 : 8;
    double budget = bank / moves_left + 0.8 * increment;
    if (budget > 0.6 * bank) budget = 0.6 * bank;
    if (cap > 0 && budget > 0.9 * cap) budget = 0.9 * cap;
    return budget;
}

static void start_clock(double seconds) {
    double t = now();
    timed = seconds > 0;
    start_by = t + START_FRACTION * seconds;
    abort_at = t + ABORT_FRACTION * seconds;
    time_up = 0;
}

/* The value of `b` for `colour` to move, searched `depth` plies (a pass is a ply). */
static int negamax(Board *b, int colour, int depth, int alpha, int beta) {
    if (time_up || (timed && now() >= abort_at)) { time_up = 1; return 0; }
    if (depth == 0) return evaluate(b, colour);
    int moves[64], n = legal_moves(b, colour, moves);
    if (n == 0) {
        int other[64];
        if (legal_moves(b, -colour, other) == 0) return final_score(b, colour);
        return -negamax(b, -colour, depth - 1, -beta, -alpha);
    }
    order_moves(moves, n);
    int best = -INF;
    for (int i = 0; i < n; i++) {
        Board after = play(*b, moves[i], colour);
        int score = -negamax(&after, -colour, depth - 1, -beta, -alpha);
        if (time_up) return 0;
        if (score > best) {
            best = score;
            if (best > alpha) {
                alpha = best;
                if (alpha >= beta) break; /* the opponent will not allow this line */
            }
        }
    }
    return best;
}

/* The best move at `depth` (the first of equal moves wins) and its score in *score. */
static int search_root(Board *b, int colour, const int *moves, int n, int depth, int *score) {
    int best_move = moves[0], alpha = -INF;
    for (int i = 0; i < n; i++) {
        Board after = play(*b, moves[i], colour);
        int value = -negamax(&after, -colour, depth - 1, -INF, -alpha);
        if (time_up) return PASS;
        if (value > alpha) { best_move = moves[i]; alpha = value; }
    }
    *score = alpha;
    return best_move;
}

/* Iterative deepening: the move (PASS to pass); the last finished depth and its score in *done, *score. */
static int think(Board *b, int colour, int max_depth, int *done, int *score) {
    int moves[64], n = legal_moves(b, colour, moves);
    order_moves(moves, n);
    *done = 0; *score = 0;
    if (n <= 1) return n ? moves[0] : PASS;
    int best = moves[0], empties = 0;
    for (int sq = 0; sq < 64; sq++) empties += b->sq[sq] == EMPTY;
    int limit = max_depth < empties ? max_depth : empties; /* deeper than the empty squares is no deeper */
    for (int depth = 1; depth <= limit && (!timed || now() < start_by); depth++) {
        /* the previous depth's best move first: it is the likeliest best again */
        int tried[64], k = 0, value;
        tried[k++] = best;
        for (int i = 0; i < n; i++) if (moves[i] != best) tried[k++] = moves[i];
        int move = search_root(b, colour, tried, n, depth, &value);
        if (time_up) break; /* keep the best move of the last finished depth */
        best = move; *done = depth; *score = value;
    }
    return best;
}

/* -- the file protocol ---------------------------------------------------------------- */

static void format_move(char *out, size_t size, int colour, int sq) {
    char c = colour == WHITE ? 'W' : 'B';
    if (sq == PASS) snprintf(out, size, "(%c P)", c);
    else snprintf(out, size, "(%c %c %d)", c, 'A' + sq % 8, sq / 8 + 1);
}

enum { LINE_SKIP, LINE_END, LINE_MOVE, LINE_BAD, LINE_CLOCK };

/* Read a line liberally ("(w d 3)", "(WD3)", "(B P)", "(B)"); a move sets *colour and *sq,
 * the clock line "(CLOCK 12.345)" *bank. */
static int parse_line(const char *line, int *colour, int *sq, double *bank) {
    char text[64];
    size_t n = 0;
    for (const char *p = line; *p && n < sizeof text - 1; p++)
        if (!isspace((unsigned char)*p) && *p != '(' && *p != ')') text[n++] = (char)toupper((unsigned char)*p);
    text[n] = '\0';
    if (strncmp(text, "CLOCK", 5) == 0) {
        char *end;
        *bank = strtod(text + 5, &end);
        return end != text + 5 && *end == '\0' ? LINE_CLOCK : LINE_BAD;
    }
    if (n == 0 || text[0] == 'C') return LINE_SKIP;
    if (strncmp(text, "END", 3) == 0) return LINE_END;
    if (text[0] != 'W' && text[0] != 'B') return LINE_BAD;
    *colour = text[0] == 'W' ? WHITE : BLACK;
    if (n == 1 || text[1] == 'P') { *sq = PASS; return LINE_MOVE; }
    if (n >= 3 && text[1] >= 'A' && text[1] <= 'H' && text[2] >= '1' && text[2] <= '8') {
        *sq = (text[2] - '1') * 8 + (text[1] - 'A');
        return LINE_MOVE;
    }
    return LINE_BAD;
}

/* Waiting for a file.  On Linux the kernel wakes us the moment a file of our
 * directory is renamed into place, closed after writing or deleted (inotify),
 * as the referee itself waits.  Where that cannot be had (another system, no
 * inotify left), we look again after a pause that doubles from 0.1 ms to 10 ms:
 * quick when the answer is quick, cheap when it is slow.  The watch is made
 * once, before we first look for a file, so no event can slip in between. */
static int watch_fd = -1;

static void start_watching(void) {
#ifdef __linux__
    watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (watch_fd >= 0 && inotify_add_watch(watch_fd, ".", IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE) < 0) {
        close(watch_fd);
        watch_fd = -1;
    }
#endif
}

/* Sleep until our directory changes (at most 10 ms: a lost event costs no more), or for *pause_us. */
static void wait_for_change(long *pause_us) {
#ifdef __linux__
    if (watch_fd >= 0) {
        struct pollfd ready = {watch_fd, POLLIN, 0};
        char events[4096];
        if (poll(&ready, 1, 10) > 0)
            while (read(watch_fd, events, sizeof events) > 0) {} /* the events only wake us: we look at the files */
        return;
    }
#endif
    struct timespec ts = {0, *pause_us * 1000};
    nanosleep(&ts, NULL);
    *pause_us = *pause_us * 2 < 10000 ? *pause_us * 2 : 10000;
}

/* Wait for `path` (the referee writes it atomically), read it whole into `buf`, delete it. */
static void take_file(const char *path, char *buf, size_t size) {
    FILE *f;
    long pause_us = 100;
    while ((f = fopen(path, "r")) == NULL) wait_for_change(&pause_us);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
}

/* Write NAME.out atomically: a temporary file, then a rename. */
static void put_move(const char *name, const char *text) {
    char tmp[512], out[512];
    snprintf(tmp, sizeof tmp, "%s.out.tmp", name);
    snprintf(out, sizeof out, "%s.out", name);
    FILE *f = fopen(tmp, "w");
    if (!f) { perror(tmp); exit(1); }
    fputs(text, f);
    fclose(f);
    rename(tmp, out);
}

/* After our last move: let the referee take NAME.out (or send the end line), at most 2 s. */
static void wait_collected(const char *name) {
    char in[512], out[512];
    snprintf(in, sizeof in, "%s.in", name);
    snprintf(out, sizeof out, "%s.out", name);
    long pause_us = 100;
    for (int i = 0; i < 200 && access(out, F_OK) == 0 && access(in, F_OK) != 0; i++) wait_for_change(&pause_us);
}

static void play_game(const char *name, double seconds, int max_depth) {
    char in_path[512], text[4096], line_out[64], message[128];
    snprintf(in_path, sizeof in_path, "%s.in", name);
    Board board = start_board();
    int to_move = WHITE;
    const char *clock_text = getenv("OTHELLO_CLOCK"), *cap_text = getenv("OTHELLO_MOVE_CAP");
    const char *plus = clock_text ? strchr(clock_text, '+') : NULL;
    double increment = plus ? atof(plus + 1) : 0, cap = cap_text ? atof(cap_text) : 0;
    double bank = -1; /* under a game clock: the seconds left, from the (CLOCK ...) line */

    start_watching();
    take_file(in_path, text, sizeof text);
    double arrived = now(); /* our clock starts when NAME.in is there */
    char *rest = text;
    while (isspace((unsigned char)*rest)) rest++;
    int me = toupper((unsigned char)*rest) == 'W' ? WHITE : BLACK;
    rest += strcspn(rest, "\n"); /* in an opening game (PROTOCOL.md section 8), the moves already played follow */

    for (;;) {
        for (char *line = strtok(rest, "\r\n"); line; line = strtok(NULL, "\r\n")) {
            int colour = 0, sq = PASS, kind = parse_line(line, &colour, &sq, &bank);
            if (kind == LINE_SKIP || kind == LINE_CLOCK) continue;
            if (kind == LINE_END) return;
            /* Every move is checked, the opponent's and the opening's.  A pass is always taken:
             * with --illegal lose-turn the referee relays an illegal move as a pass. */
            int legal = kind == LINE_MOVE && colour == to_move && (sq == PASS || flips(&board, sq, colour, 0) > 0);
            if (!legal) {
                fprintf(stderr, "illegal move received: %s; %s wins\n", line, me == WHITE ? "White" : "Black");
                exit(1);
            }
            if (sq != PASS) board = play(board, sq, colour);
            to_move = -colour;
        }
        if (game_over(&board)) return;
        if (to_move == me) {
            if (seconds > 0) {
                double left = move_seconds(seconds, bank, &board, increment, cap) - (now() - arrived);
                start_clock(left > 0.001 ? left : 0.001);
            } else {
                start_clock(0); /* --depth: no clock */
            }
            int depth, score, sq = think(&board, me, max_depth, &depth, &score);
            format_move(line_out, sizeof line_out, me, sq);
            snprintf(message, sizeof message, "(C depth %d score %d)\n%s\n", depth, score, line_out);
            put_move(name, message);
            if (sq != PASS) board = play(board, sq, me);
            to_move = -me;
            if (game_over(&board)) { wait_collected(name); return; }
        }
        take_file(in_path, text, sizeof text);
        arrived = now();
        rest = text;
    }
}

/* --analyze: one position a line on standard input, the chosen move line on standard output. */
static void analyze(double seconds, int max_depth) {
    char cells[128], side[8], line_out[64];
    while (scanf("%127s %7s", cells, side) == 2) {
        Board board = start_board();
        for (int sq = 0; sq < 64; sq++) board.sq[sq] = cells[sq] == 'W' ? WHITE : cells[sq] == 'B' ? BLACK : EMPTY;
        int colour = side[0] == 'W' ? WHITE : BLACK, depth, score;
        start_clock(seconds);
        format_move(line_out, sizeof line_out, colour, think(&board, colour, max_depth, &depth, &score));
        printf("%s\n", line_out);
        fflush(stdout);
    }
}

int main(int argc, char **argv) {
    const char *name = getenv("OTHELLO_NAME");
    int max_depth = 0, analyzing = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc) max_depth = atoi(argv[++i]);
        else if (strcmp(argv[i], "--analyze") == 0) analyzing = 1;
        else name = argv[i];
    }
    if (!name || !*name) name = "starter";
    const char *time_text = getenv("OTHELLO_TIME");
    double seconds = max_depth > 0 ? 0 : (time_text && atof(time_text) > 0 ? atof(time_text) : 60);
    if (max_depth <= 0) max_depth = 64;
    if (analyzing) analyze(seconds, max_depth);
    else play_game(name, seconds, max_depth);
    return 0;
}
