/*
 * greedy.c: a complete Othello Arena agent in C (the file protocol, see PROTOCOL.md).
 *
 * Strategy: the move that flips the most discs (ties: the first in A1..H8 order).
 *
 * Build:  gcc -O2 -Wall -o greedy greedy.c
 * Run:    othello play "openings:greedy=./greedy {name}" random
 *
 * The name of its files comes from the first argument, else $OTHELLO_NAME,
 * else "greedy".  It waits for NAME.in, reads and deletes it, checks the
 * opponent's move, and writes its own to NAME.out.tmp then renames it to
 * NAME.out.  It exits when the game is over (seen on its own board, or the
 * end line).  It reads openings (PROTOCOL.md section 8): the moves after
 * the colour in its first NAME.in.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <poll.h>
#include <sys/inotify.h>
#endif

enum { EMPTY = 0, WHITE = 1, BLACK = 2 };

static int board[64]; /* square = (row - 1) * 8 + column, A1 = 0, H8 = 63 */
static const int DCOL[8] = {1, 1, 0, -1, -1, -1, 0, 1};
static const int DROW[8] = {0, 1, 1, 1, 0, -1, -1, -1};

static int opponent(int colour) { return colour == WHITE ? BLACK : WHITE; }
static char colour_char(int colour) { return colour == WHITE ? 'W' : 'B'; }

/* Number of discs a disc of `colour` on `sq` would flip (0: not a legal move). */
static int flips(int sq, int colour, int apply) {
    int total = 0;
    if (board[sq] != EMPTY) return 0;
    for (int d = 0; d < 8; d++) {
        int col = sq % 8 + DCOL[d], row = sq / 8 + DROW[d], run = 0;
        while (col >= 0 && col < 8 && row >= 0 && row < 8 && board[row * 8 + col] == opponent(colour)) {
            col += DCOL[d]; row += DROW[d]; run++;
        }
        if (run > 0 && col >= 0 && col < 8 && row >= 0 && row < 8 && board[row * 8 + col] == colour) {
            total += run;
            if (apply) {
                for (int k = 1; k <= run; k++) board[(sq / 8 + k * DROW[d]) * 8 + sq % 8 + k * DCOL[d]] = colour;
            }
        }
    }
    if (apply && total > 0) board[sq] = colour;
    return total;
}

static int has_move(int colour) {
    for (int sq = 0; sq < 64; sq++) if (flips(sq, colour, 0)) return 1;
    return 0;
}

static int game_over(void) { return !has_move(WHITE) && !has_move(BLACK); }

/* The greedy choice: the square flipping the most discs, or -1 to pass. */
static int choose(int colour) {
    int best = -1, most = 0;
    for (int sq = 0; sq < 64; sq++) {
        int n = flips(sq, colour, 0);
        if (n > most) { most = n; best = sq; }
    }
    return best;
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

/* Wait for `path`, read it whole into `buf`, delete it. */
static void take_file(const char *path, char *buf, size_t size) {
    FILE *f;
    long pause_us = 100;
    while ((f = fopen(path, "r")) == NULL) wait_for_change(&pause_us);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
}

static void put_move(const char *name, int colour, int sq) {
    char tmp[512], out[512];
    snprintf(tmp, sizeof tmp, "%s.out.tmp", name);
    snprintf(out, sizeof out, "%s.out", name);
    FILE *f = fopen(tmp, "w");
    if (!f) { perror(tmp); exit(1); }
    if (sq < 0) fprintf(f, "(%c P)\n", colour_char(colour));
    else fprintf(f, "(%c %c %d)\n", colour_char(colour), 'A' + sq % 8, sq / 8 + 1);
    fclose(f);
    rename(tmp, out);
}

/* After our last move: let the referee take NAME.out (or send the end line) before we exit, for at most 2 s. */
static void wait_collected(const char *name, const char *in_path) {
    char out[512];
    snprintf(out, sizeof out, "%s.out", name);
    long pause_us = 100;
    for (int i = 0; i < 200 && access(out, F_OK) == 0 && access(in_path, F_OK) != 0; i++) wait_for_change(&pause_us);
}

/* Read one move line liberally: "(w d 3)", "(WD3)", "(B P)", "(B)".  Returns 1 if it is a move. */
static int parse_move(const char *line, int *colour, int *sq) {
    char body[64];
    size_t n = 0;
    for (const char *p = line; *p && n < sizeof body - 1; p++)
        if (!isspace((unsigned char)*p) && *p != '(' && *p != ')') body[n++] = (char)toupper((unsigned char)*p);
    body[n] = '\0';
    if (n == 0 || (body[0] != 'W' && body[0] != 'B')) return 0;
    *colour = body[0] == 'W' ? WHITE : BLACK;
    if (n == 1 || body[1] == 'P') { *sq = -1; return 1; }
    if (n < 3 || body[1] < 'A' || body[1] > 'H' || body[2] < '1' || body[2] > '8') return 0;
    *sq = (body[2] - '1') * 8 + (body[1] - 'A');
    return 1;
}

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : getenv("OTHELLO_NAME");
    if (!name || !*name) name = "greedy";
    char in_path[512], text[4096];
    snprintf(in_path, sizeof in_path, "%s.in", name);
    start_watching();

    board[27] = BLACK; board[28] = WHITE; /* D4 E4 */
    board[35] = WHITE; board[36] = BLACK; /* D5 E5 */

    take_file(in_path, text, sizeof text);
    char *rest = text;
    while (isspace((unsigned char)*rest)) rest++;
    int me = toupper((unsigned char)*rest) == 'W' ? WHITE : BLACK;
    rest += strcspn(rest, "\n"); /* in an opening game (PROTOCOL.md section 8), the moves already played follow */
    int to_move = WHITE;

    for (;;) {
        for (char *line = strtok(rest, "\r\n"); line; line = strtok(NULL, "\r\n")) {
            int colour, sq;
            const char *p = line;
            while (isspace((unsigned char)*p) || *p == '(') p++;
            if (strncasecmp(p, "END", 3) == 0) return 0;
            if (!parse_move(line, &colour, &sq)) continue; /* blank line or comment */
            /* Every move is checked, the opponent's and the opening's.  A pass is always taken:
             * with --illegal lose-turn the referee relays an illegal move as a pass. */
            int legal = colour == to_move && (sq < 0 || flips(sq, colour, 0) > 0);
            if (!legal) {
                printf("illegal move received: %s; %s wins\n", line, me == WHITE ? "White" : "Black");
                fprintf(stderr, "illegal move received: %s; %s wins\n", line, me == WHITE ? "White" : "Black");
                return 0;
            }
            if (sq >= 0) flips(sq, colour, 1);
            to_move = opponent(colour);
        }
        if (game_over()) return 0;
        if (to_move == me) {
            int sq = choose(me);
            put_move(name, me, sq);
            if (sq >= 0) flips(sq, me, 1);
            to_move = opponent(me);
            if (game_over()) { wait_collected(name, in_path); return 0; }
        }
        take_file(in_path, text, sizeof text);
        rest = text;
    }
}
