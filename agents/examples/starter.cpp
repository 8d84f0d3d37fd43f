// starter.cpp: a starter Othello Arena agent in C++17 (the file protocol, see PROTOCOL.md).
//
// Strategy: iterative-deepening alpha-beta (negamax) over a square-weight table,
// under its own clock.  The same program exists in Python, C, Java, JavaScript,
// Rust, Go and awk (starter.*, Starter.java): same search, same evaluation, same move
// for the same position at the same depth.
//
// Build:  g++ -O2 -Wall -std=c++17 -o starter_cpp starter.cpp
// Run:    othello play "openings:starter=./starter_cpp {name}" random
//
// Usage:  starter_cpp [NAME] [--depth N] [--analyze]
//   NAME        its files are NAME.in and NAME.out (default: $OTHELLO_NAME, else "starter")
//   --depth N   search exactly N plies, no clock (to debug, or to compare versions)
//   --analyze   no game: read positions from standard input, one a line,
//               64 characters A1 B1 .. H1 A2 .. H8 ('W', 'B', '.') then a space and
//               the side to move ('W' or 'B'); print the chosen move line for each
//
// The time per move is $OTHELLO_TIME seconds (default 60); see START_FRACTION.
// It reads openings (PROTOCOL.md section 8): the moves after the colour in its first NAME.in.
// Under a game clock (PROTOCOL.md section 10: $OTHELLO_CLOCK, declared with
// "clock:starter=...") it reads its bank, the (CLOCK seconds) line, and thinks
// a share of it: see move_seconds().
//
// Where to improve it: evaluate() (the evaluation), ordered() (move ordering),
// START_FRACTION / ABORT_FRACTION (the time budget).
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#ifdef __linux__
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>
#endif

namespace {

constexpr int WHITE = 1, BLACK = -1, EMPTY = 0;  // a colour's opponent is -colour (negamax)
constexpr int INF = 1000000;                      // above any score: a won game is at most 64 * 1000
constexpr int PASS = -1;

// The board is 64 squares: index = (row - 1) * 8 + column, A1 = 0, H1 = 7, H8 = 63.
using Board = std::array<int, 64>;
constexpr int DCOL[8] = {1, 1, 0, -1, -1, -1, 0, 1};
constexpr int DROW[8] = {0, 1, 1, 1, 0, -1, -1, -1};

// The evaluation: a value per square (corners good, the squares next to them bad).
// The table is symmetric, so it reads the same whichever way the rows are numbered.
constexpr int WEIGHTS[64] = {
    100, -20, 10, 5, 5, 10, -20, 100,
    -20, -50, -2, -2, -2, -2, -50, -20,
    10, -2, 1, 1, 1, 1, -2, 10,
    5, -2, 1, 0, 0, 1, -2, 5,
    5, -2, 1, 0, 0, 1, -2, 5,
    10, -2, 1, 1, 1, 1, -2, 10,
    -20, -50, -2, -2, -2, -2, -50, -20,
    100, -20, 10, 5, 5, 10, -20, 100,
};

// The time budget (TUNE HERE): of the OTHELLO_TIME seconds per move, start a new
// depth only before START_FRACTION of them, and abandon a depth still running at
// ABORT_FRACTION (then the best move of the last finished depth is played).
// PROTOCOL.md section 4: answer by 0.9 * time, the referee allows time + 0.25 s.
constexpr double START_FRACTION = 0.40;
constexpr double ABORT_FRACTION = 0.80;

// -- the rules ------------------------------------------------------------------------

Board start_board() {
    Board b{};
    b[27] = BLACK; b[28] = WHITE; b[35] = WHITE; b[36] = BLACK;  // D4 E4 D5 E5
    return b;
}

// The squares a disc of `colour` on `sq` would flip (empty: not a legal move).
std::vector<int> flipped(const Board& b, int sq, int colour) {
    std::vector<int> result;
    if (b[sq] != EMPTY) return result;
    for (int d = 0; d < 8; d++) {
        int col = sq % 8 + DCOL[d], row = sq / 8 + DROW[d];
        std::vector<int> run;
        while (col >= 0 && col < 8 && row >= 0 && row < 8 && b[row * 8 + col] == -colour) {
            run.push_back(row * 8 + col);
            col += DCOL[d]; row += DROW[d];
        }
        if (!run.empty() && col >= 0 && col < 8 && row >= 0 && row < 8 && b[row * 8 + col] == colour)
            result.insert(result.end(), run.begin(), run.end());
    }
    return result;
}

// The legal squares of `colour`, in A1..H8 order.
std::vector<int> legal_moves(const Board& b, int colour) {
    std::vector<int> moves;
    for (int sq = 0; sq < 64; sq++)
        if (b[sq] == EMPTY && !flipped(b, sq, colour).empty()) moves.push_back(sq);
    return moves;
}

// A new board: `colour` plays on `sq` (a legal move).
Board play(const Board& b, int sq, int colour) {
    Board after = b;
    for (int square : flipped(b, sq, colour)) after[square] = colour;
    after[sq] = colour;
    return after;
}

bool game_over(const Board& b) { return legal_moves(b, WHITE).empty() && legal_moves(b, BLACK).empty(); }

// -- the search -----------------------------------------------------------------------

// The position seen by `colour` (IMPROVE HERE: mobility, stable discs, parity...).
int evaluate(const Board& b, int colour) {
    int sum = 0;
    for (int sq = 0; sq < 64; sq++) sum += WEIGHTS[sq] * b[sq];
    return sum * colour;
}

// A finished game: the disc difference, scaled above any evaluation.
int final_score(const Board& b, int colour) {
    int sum = 0;
    for (int v : b) sum += v;
    return sum * colour * 1000;
}

// Likely best first, so that alpha-beta cuts more (IMPROVE HERE): by square weight.
// The sort is stable (ties keep A1..H8 order): every translation orders the same way.
std::vector<int> ordered(std::vector<int> moves) {
    std::stable_sort(moves.begin(), moves.end(), [](int a, int b) { return WEIGHTS[a] > WEIGHTS[b]; });
    return moves;
}

struct TimeUp {};  // thrown when the clock ran out in the middle of a depth

using Instant = std::chrono::steady_clock::time_point;

// Deadlines of one move; no seconds: no clock (fixed depth).
struct Clock {
    std::optional<Instant> start_by, abort_at;
    explicit Clock(std::optional<double> seconds) {
        if (!seconds) return;
        auto now = std::chrono::steady_clock::now();
        auto after = [&](double fraction) {
            return now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(fraction * *seconds));
        };
        start_by = after(START_FRACTION);
        abort_at = after(ABORT_FRACTION);
    }
    bool may_start_depth() const { return !start_by || std::chrono::steady_clock::now() < *start_by; }
    void check() const {
        if (abort_at && std::chrono::steady_clock::now() >= *abort_at) throw TimeUp{};
    }
};

// Seconds for this move: $OTHELLO_TIME, or under a game clock (a bank) the bank spread over
// our moves still to come (half the empty squares, at least 8) plus most of the increment,
// never more than 0.6 of the bank (the increment comes after the move) nor 0.9 of a cap.
// (TUNE HERE)
std::optional<double> move_seconds(std::optional<double> seconds, std::optional<double> bank, const Board& b,
                                   double increment, std::optional<double> cap) {
    if (!seconds || !bank) return seconds;
    int empties = static_cast<int>(std::count(b.begin(), b.end(), EMPTY));
    int moves_left = std::max(8, (empties + 1) / 2);
    double budget = std::min(*bank / moves_left + 0.8 * increment, 0.6 * *bank);
    return cap ? std::min(budget, 0.9 * *cap) : budget;
}

// The value of `b` for `colour` to move, searched `depth` plies (a pass is a ply).
int negamax(const Board& b, int colour, int depth, int alpha, int beta, const Clock& clock) {
    clock.check();
    if (depth == 0) return evaluate(b, colour);
    std::vector<int> moves = legal_moves(b, colour);
    if (moves.empty()) {
        if (legal_moves(b, -colour).empty()) return final_score(b, colour);
        return -negamax(b, -colour, depth - 1, -beta, -alpha, clock);
    }
    int best = -INF;
    for (int sq : ordered(moves)) {
        int score = -negamax(play(b, sq, colour), -colour, depth - 1, -beta, -alpha, clock);
        if (score > best) {
            best = score;
            if (best > alpha) {
                alpha = best;
                if (alpha >= beta) break;  // the opponent will not allow this line
            }
        }
    }
    return best;
}

// (best move, its score) at `depth`; the first of equal moves wins.
std::pair<int, int> search_root(const Board& b, int colour, const std::vector<int>& moves, int depth,
                                const Clock& clock) {
    int best_move = moves[0], alpha = -INF;
    for (int sq : moves) {
        int score = -negamax(play(b, sq, colour), -colour, depth - 1, -INF, -alpha, clock);
        if (score > alpha) { best_move = sq; alpha = score; }
    }
    return {best_move, alpha};
}

struct Choice { int move, depth, score; };

// Iterative deepening: the move (PASS to pass), the last finished depth, its score.
Choice think(const Board& b, int colour, const Clock& clock, int max_depth) {
    std::vector<int> moves = ordered(legal_moves(b, colour));
    if (moves.size() <= 1) return {moves.empty() ? PASS : moves[0], 0, 0};
    Choice choice{moves[0], 0, 0};
    int empties = static_cast<int>(std::count(b.begin(), b.end(), EMPTY));
    int limit = std::min(max_depth, empties);  // deeper than the empty squares is no deeper
    for (int depth = 1; depth <= limit && clock.may_start_depth(); depth++) {
        // the previous depth's best move first: it is the likeliest best again
        std::vector<int> tried{choice.move};
        for (int sq : moves) if (sq != choice.move) tried.push_back(sq);
        try {
            auto [move, score] = search_root(b, colour, tried, depth, clock);
            choice = {move, depth, score};
        } catch (const TimeUp&) {
            break;  // keep the best move of the last finished depth
        }
    }
    return choice;
}

// -- the file protocol ----------------------------------------------------------------

std::string move_line(int colour, int sq) {
    std::string c = colour == WHITE ? "W" : "B";
    if (sq == PASS) return "(" + c + " P)";
    return "(" + c + " " + std::string(1, static_cast<char>('A' + sq % 8)) + " " + std::to_string(sq / 8 + 1) + ")";
}

enum class Kind { Skip, End, Move, Bad, Clock };
struct Parsed { Kind kind; int colour = 0, sq = PASS; double bank = 0; };

// Read a line liberally ("(w d 3)", "(WD3)", "(B P)", "(B)"); the clock line "(CLOCK 12.345)" gives the bank.
Parsed parse_line(const std::string& line) {
    std::string text;
    for (char ch : line)
        if (!std::isspace(static_cast<unsigned char>(ch)) && ch != '(' && ch != ')')
            text += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (text.rfind("CLOCK", 0) == 0) {
        char* end = nullptr;
        double bank = std::strtod(text.c_str() + 5, &end);
        return end != text.c_str() + 5 && *end == '\0' ? Parsed{Kind::Clock, 0, PASS, bank} : Parsed{Kind::Bad};
    }
    if (text.empty() || text[0] == 'C') return {Kind::Skip};
    if (text.rfind("END", 0) == 0) return {Kind::End};
    if (text[0] != 'W' && text[0] != 'B') return {Kind::Bad};
    int colour = text[0] == 'W' ? WHITE : BLACK;
    if (text.size() == 1 || text[1] == 'P') return {Kind::Move, colour, PASS};
    if (text.size() >= 3 && text[1] >= 'A' && text[1] <= 'H' && text[2] >= '1' && text[2] <= '8')
        return {Kind::Move, colour, (text[2] - '1') * 8 + (text[1] - 'A')};
    return {Kind::Bad};
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

// Waiting for a file.  On Linux the kernel wakes us the moment a file of our directory is
// renamed into place, closed after writing or deleted (inotify), as the referee itself waits.
// Where that cannot be had (another system, no inotify left), we look again after a pause
// that doubles from 0.1 ms to 10 ms: quick when the answer is quick, cheap when it is slow.
// The watch is made once, before we first look for a file, so no event can slip in between.
int watch_fd = -1;

void start_watching() {
#ifdef __linux__
    watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (watch_fd >= 0 && inotify_add_watch(watch_fd, ".", IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE) < 0) {
        close(watch_fd);
        watch_fd = -1;
    }
#endif
}

// Sleep until our directory changes (at most 10 ms: a lost event costs no more), or for `pause`.
void wait_for_change(std::chrono::microseconds& pause) {
#ifdef __linux__
    if (watch_fd >= 0) {
        pollfd ready{watch_fd, POLLIN, 0};
        char events[4096];
        if (poll(&ready, 1, 10) > 0)
            while (read(watch_fd, events, sizeof events) > 0) {}  // the events only wake us: we look at the files
        return;
    }
#endif
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(10000));
}

// Wait for `path` (the referee writes it atomically), read its lines, delete it.
std::vector<std::string> take_file(const std::string& path) {
    std::ifstream in;
    std::chrono::microseconds pause(100);
    for (in.open(path); !in; in.open(path)) wait_for_change(pause);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    in.close();
    std::remove(path.c_str());
    return lines;
}

// Write NAME.out atomically: a temporary file, then a rename.
void put_move(const std::string& name, const std::string& text) {
    std::string tmp = name + ".out.tmp";
    {
        std::ofstream out(tmp);
        out << text;
    }
    std::rename(tmp.c_str(), (name + ".out").c_str());
}

// After our last move: let the referee take NAME.out (or send the end line), at most 2 s.
void wait_collected(const std::string& name) {
    std::chrono::microseconds pause(100);
    for (int i = 0; i < 200 && exists(name + ".out") && !exists(name + ".in"); i++) wait_for_change(pause);
}

// $OTHELLO_CLOCK "BASE+INC" and $OTHELLO_MOVE_CAP (PROTOCOL.md section 10): the increment, the cap if any.
std::pair<double, std::optional<double>> game_clock() {
    const char* clock_text = std::getenv("OTHELLO_CLOCK");
    const char* cap_text = std::getenv("OTHELLO_MOVE_CAP");
    const char* plus = clock_text ? std::strchr(clock_text, '+') : nullptr;
    std::optional<double> cap;
    if (cap_text && *cap_text) cap = std::atof(cap_text);
    return {plus ? std::atof(plus + 1) : 0.0, cap};
}

double seconds_since(Instant start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void play_game(const std::string& name, std::optional<double> seconds, int max_depth) {
    Board board = start_board();
    int to_move = WHITE;
    auto [increment, cap] = game_clock();
    std::optional<double> bank;  // under a game clock: the seconds left, from the (CLOCK ...) line
    start_watching();
    std::vector<std::string> lines = take_file(name + ".in");
    Instant arrived = std::chrono::steady_clock::now();  // our clock starts when NAME.in is there
    std::string first = lines.empty() ? "" : lines[0];
    std::size_t at = first.find_first_not_of(" \t\r");
    int me = at != std::string::npos && std::toupper(static_cast<unsigned char>(first[at])) == 'W' ? WHITE : BLACK;
    // in an opening game (PROTOCOL.md section 8), the moves already played follow the colour
    if (!lines.empty()) lines.erase(lines.begin());
    for (;;) {
        for (const std::string& line : lines) {
            Parsed parsed = parse_line(line);
            if (parsed.kind == Kind::Skip) continue;
            if (parsed.kind == Kind::Clock) { bank = parsed.bank; continue; }
            if (parsed.kind == Kind::End) return;
            // Every move is checked, the opponent's and the opening's.  A pass is always taken:
            // with --illegal lose-turn the referee relays an illegal move as a pass.
            bool legal = parsed.kind == Kind::Move && parsed.colour == to_move &&
                         (parsed.sq == PASS || !flipped(board, parsed.sq, to_move).empty());
            if (!legal) {
                std::cerr << "illegal move received: " << line << "; " << (me == WHITE ? "White" : "Black")
                          << " wins" << std::endl;
                std::exit(1);
            }
            if (parsed.sq != PASS) board = play(board, parsed.sq, to_move);
            to_move = -to_move;
        }
        if (game_over(board)) return;
        if (to_move == me) {
            std::optional<double> budget = move_seconds(seconds, bank, board, increment, cap);
            if (budget) budget = std::max(0.001, *budget - seconds_since(arrived));
            Choice choice = think(board, me, Clock(budget), max_depth);
            std::ostringstream text;
            text << "(C depth " << choice.depth << " score " << choice.score << ")\n" << move_line(me, choice.move) << "\n";
            put_move(name, text.str());
            if (choice.move != PASS) board = play(board, choice.move, me);
            to_move = -me;
            if (game_over(board)) { wait_collected(name); return; }
        }
        lines = take_file(name + ".in");
        arrived = std::chrono::steady_clock::now();
    }
}

// --analyze: one position a line on standard input, the chosen move line on standard output.
void analyze(std::optional<double> seconds, int max_depth) {
    std::string cells, side;
    while (std::cin >> cells >> side) {
        Board board{};
        for (int sq = 0; sq < 64; sq++) board[sq] = cells[sq] == 'W' ? WHITE : cells[sq] == 'B' ? BLACK : EMPTY;
        int colour = side == "W" ? WHITE : BLACK;
        std::cout << move_line(colour, think(board, colour, Clock(seconds), max_depth).move) << std::endl;
    }
}

}  // namespace

int main(int argc, char** argv) {
    const char* env_name = std::getenv("OTHELLO_NAME");
    std::string name = env_name && *env_name ? env_name : "starter";
    std::optional<int> depth;
    bool analyzing = false;
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        if (arg == "--depth" && i + 1 < argc) depth = std::atoi(argv[++i]);
        else if (arg == "--analyze") analyzing = true;
        else name = arg;
    }
    const char* time_text = std::getenv("OTHELLO_TIME");
    std::optional<double> seconds;
    if (!depth) seconds = time_text && std::atof(time_text) > 0 ? std::atof(time_text) : 60.0;
    int max_depth = depth.value_or(64);
    if (analyzing) analyze(seconds, max_depth);
    else play_game(name, seconds, max_depth);
    return 0;
}
