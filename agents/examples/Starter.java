// Starter.java: a starter Othello Arena agent in Java 17 (the file protocol, see PROTOCOL.md).
//
// Strategy: iterative-deepening alpha-beta (negamax) over a square-weight table,
// under its own clock.  The same program exists in Python, C, C++, JavaScript,
// Rust, Go and awk (starter.*): same search, same evaluation, same move for the same
// position at the same depth.
//
// Build:  javac Starter.java
// Run:    othello play "openings:starter=java -cp {home} Starter {name}" random
//         (the agent runs in its own game directory, not where Starter.class is:
//         {home} is the folder you ran othello in, or the agent's cwd in a tournament)
//
// Usage:  java Starter [NAME] [--depth N] [--analyze]
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
// a share of it: see moveSeconds().
//
// Where to improve it: evaluate() (the evaluation), ordered() (move ordering),
// START_FRACTION / ABORT_FRACTION (the time budget).
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

public class Starter {
    static final int WHITE = 1, BLACK = -1, EMPTY = 0; // a colour's opponent is -colour (negamax)
    static final int INF = 1_000_000; // above any score: a won game is at most 64 * 1000
    static final int PASS = -1;

    // The board is an int[64]: index = (row - 1) * 8 + column, A1 = 0, H1 = 7, H8 = 63.
    static final int[] DCOL = {1, 1, 0, -1, -1, -1, 0, 1};
    static final int[] DROW = {0, 1, 1, 1, 0, -1, -1, -1};

    // The evaluation: a value per square (corners good, the squares next to them bad).
    // The table is symmetric, so it reads the same whichever way the rows are numbered.
    static final int[] WEIGHTS = {
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
    static final double START_FRACTION = 0.40;
    static final double ABORT_FRACTION = 0.80;

    // -- the rules ------------------------------------------------------------------------

    static int[] startBoard() {
        int[] b = new int[64];
        b[27] = BLACK; b[28] = WHITE; b[35] = WHITE; b[36] = BLACK; // D4 E4 D5 E5
        return b;
    }

    /** The squares a disc of {@code colour} on {@code sq} would flip (empty: not a legal move). */
    static List<Integer> flipped(int[] b, int sq, int colour) {
        List<Integer> result = new ArrayList<>();
        if (b[sq] != EMPTY) return result;
        for (int d = 0; d < 8; d++) {
            int col = sq % 8 + DCOL[d], row = sq / 8 + DROW[d];
            List<Integer> run = new ArrayList<>();
            while (col >= 0 && col < 8 && row >= 0 && row < 8 && b[row * 8 + col] == -colour) {
                run.add(row * 8 + col);
                col += DCOL[d];
                row += DROW[d];
            }
            if (!run.isEmpty() && col >= 0 && col < 8 && row >= 0 && row < 8 && b[row * 8 + col] == colour) {
                result.addAll(run);
            }
        }
        return result;
    }

    /** The legal squares of {@code colour}, in A1..H8 order. */
    static List<Integer> legalMoves(int[] b, int colour) {
        List<Integer> moves = new ArrayList<>();
        for (int sq = 0; sq < 64; sq++) {
            if (b[sq] == EMPTY && !flipped(b, sq, colour).isEmpty()) moves.add(sq);
        }
        return moves;
    }

    /** A new board: {@code colour} plays on {@code sq} (a legal move). */
    static int[] play(int[] b, int sq, int colour) {
        int[] after = b.clone();
        for (int square : flipped(b, sq, colour)) after[square] = colour;
        after[sq] = colour;
        return after;
    }

    static boolean gameOver(int[] b) {
        return legalMoves(b, WHITE).isEmpty() && legalMoves(b, BLACK).isEmpty();
    }

    // -- the search -----------------------------------------------------------------------

    /** The position seen by {@code colour} (IMPROVE HERE: mobility, stable discs, parity...). */
    static int evaluate(int[] b, int colour) {
        int sum = 0;
        for (int sq = 0; sq < 64; sq++) sum += WEIGHTS[sq] * b[sq];
        return sum * colour;
    }

    /** A finished game: the disc difference, scaled above any evaluation. */
    static int finalScore(int[] b, int colour) {
        int sum = 0;
        for (int v : b) sum += v;
        return sum * colour * 1000;
    }

    /**
     * Likely best first, so that alpha-beta cuts more (IMPROVE HERE): by square weight.
     * List.sort is stable (ties keep A1..H8 order): every translation orders the same way.
     */
    static List<Integer> ordered(List<Integer> moves) {
        List<Integer> result = new ArrayList<>(moves);
        result.sort(Comparator.comparingInt(sq -> -WEIGHTS[sq]));
        return result;
    }

    /** Thrown when the clock ran out in the middle of a depth. */
    static final class TimeUp extends Exception {
        private static final long serialVersionUID = 1L;

        TimeUp() { super(null, null, false, false); } // no stack trace: it is not an error
    }

    /** Deadlines of one move; {@code seconds == null}: no clock (fixed depth). */
    static final class Clock {
        final boolean timed;
        final long startBy, abortAt;

        Clock(Double seconds) {
            long now = System.nanoTime();
            timed = seconds != null;
            startBy = timed ? now + (long) (START_FRACTION * seconds * 1e9) : 0;
            abortAt = timed ? now + (long) (ABORT_FRACTION * seconds * 1e9) : 0;
        }

        boolean mayStartDepth() { return !timed || System.nanoTime() - startBy < 0; }

        void check() throws TimeUp {
            if (timed && System.nanoTime() - abortAt >= 0) throw new TimeUp();
        }
    }

    /**
     * Seconds for this move: $OTHELLO_TIME, or under a game clock (a bank) the bank spread over
     * our moves still to come (half the empty squares, at least 8) plus most of the increment,
     * never more than 0.6 of the bank (the increment comes after the move) nor 0.9 of a cap.
     * (TUNE HERE)
     */
    static Double moveSeconds(Double seconds, Double bank, int[] b, double increment, Double cap) {
        if (seconds == null || bank == null) return seconds;
        int empties = 0;
        for (int cell : b) if (cell == EMPTY) empties++;
        int movesLeft = Math.max(8, (empties + 1) / 2);
        double budget = Math.min(bank / movesLeft + 0.8 * increment, 0.6 * bank);
        return cap == null ? budget : Math.min(budget, 0.9 * cap);
    }

    /** The value of {@code b} for {@code colour} to move, searched {@code depth} plies (a pass is a ply). */
    static int negamax(int[] b, int colour, int depth, int alpha, int beta, Clock clock) throws TimeUp {
        clock.check();
        if (depth == 0) return evaluate(b, colour);
        List<Integer> moves = legalMoves(b, colour);
        if (moves.isEmpty()) {
            if (legalMoves(b, -colour).isEmpty()) return finalScore(b, colour);
            return -negamax(b, -colour, depth - 1, -beta, -alpha, clock);
        }
        int best = -INF;
        for (int sq : ordered(moves)) {
            int score = -negamax(play(b, sq, colour), -colour, depth - 1, -beta, -alpha, clock);
            if (score > best) {
                best = score;
                if (best > alpha) {
                    alpha = best;
                    if (alpha >= beta) break; // the opponent will not allow this line
                }
            }
        }
        return best;
    }

    /** The move chosen, the depth it was searched to and its score. */
    record Choice(int move, int depth, int score) {}

    /** The best move at {@code depth} and its score; the first of equal moves wins. */
    static Choice searchRoot(int[] b, int colour, List<Integer> moves, int depth, Clock clock) throws TimeUp {
        int bestMove = moves.get(0), alpha = -INF;
        for (int sq : moves) {
            int score = -negamax(play(b, sq, colour), -colour, depth - 1, -INF, -alpha, clock);
            if (score > alpha) {
                bestMove = sq;
                alpha = score;
            }
        }
        return new Choice(bestMove, depth, alpha);
    }

    /** Iterative deepening: the move (PASS to pass), the last finished depth, its score. */
    static Choice think(int[] b, int colour, Clock clock, int maxDepth) {
        List<Integer> moves = ordered(legalMoves(b, colour));
        if (moves.size() <= 1) return new Choice(moves.isEmpty() ? PASS : moves.get(0), 0, 0);
        Choice choice = new Choice(moves.get(0), 0, 0);
        int empties = 0;
        for (int v : b) if (v == EMPTY) empties++;
        int limit = Math.min(maxDepth, empties); // deeper than the empty squares is no deeper
        for (int depth = 1; depth <= limit && clock.mayStartDepth(); depth++) {
            // the previous depth's best move first: it is the likeliest best again
            List<Integer> tried = new ArrayList<>();
            tried.add(choice.move());
            for (int sq : moves) if (sq != choice.move()) tried.add(sq);
            try {
                choice = searchRoot(b, colour, tried, depth, clock);
            } catch (TimeUp up) {
                break; // keep the best move of the last finished depth
            }
        }
        return choice;
    }

    // -- the file protocol ----------------------------------------------------------------

    static String moveLine(int colour, int sq) {
        String c = colour == WHITE ? "W" : "B";
        if (sq == PASS) return "(" + c + " P)";
        return "(" + c + " " + "ABCDEFGH".charAt(sq % 8) + " " + (sq / 8 + 1) + ")";
    }

    enum Kind { SKIP, END, MOVE, BAD, CLOCK }

    record Parsed(Kind kind, int colour, int sq, double bank) {
        Parsed(Kind kind, int colour, int sq) { this(kind, colour, sq, 0); }
    }

    /** Read a line liberally ("(w d 3)", "(WD3)", "(B P)", "(B)"); the clock line "(CLOCK 12.345)" gives the bank. */
    static Parsed parseLine(String line) {
        String text = line.toUpperCase().replaceAll("[\\s()]", "");
        if (text.startsWith("CLOCK")) {
            try {
                return new Parsed(Kind.CLOCK, 0, PASS, Double.parseDouble(text.substring(5)));
            } catch (NumberFormatException e) {
                return new Parsed(Kind.BAD, 0, PASS);
            }
        }
        if (text.isEmpty() || text.charAt(0) == 'C') return new Parsed(Kind.SKIP, 0, PASS);
        if (text.startsWith("END")) return new Parsed(Kind.END, 0, PASS);
        char c = text.charAt(0);
        if (c != 'W' && c != 'B') return new Parsed(Kind.BAD, 0, PASS);
        int colour = c == 'W' ? WHITE : BLACK;
        if (text.length() == 1 || text.charAt(1) == 'P') return new Parsed(Kind.MOVE, colour, PASS);
        if (text.length() >= 3 && "ABCDEFGH".indexOf(text.charAt(1)) >= 0 && "12345678".indexOf(text.charAt(2)) >= 0) {
            return new Parsed(Kind.MOVE, colour, (text.charAt(2) - '1') * 8 + (text.charAt(1) - 'A'));
        }
        return new Parsed(Kind.BAD, 0, PASS);
    }

    /*
     * Waiting for a file.  On Linux, OpenJDK's WatchService is inotify: the kernel wakes us the
     * moment a file of our directory is created, renamed into place or deleted, as the referee
     * itself waits.  Where there is no watch to be had, we look again after a pause that doubles
     * from 0.1 ms to 10 ms: quick when the answer is quick, cheap when it is slow.  The watch is
     * made once, before we first look for a file, so no event can slip in between.
     */
    static WatchService watcher;

    static void startWatching() {
        try {
            watcher = FileSystems.getDefault().newWatchService();
            Path.of("").toAbsolutePath().register(watcher,
                    StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
        } catch (IOException | UnsupportedOperationException e) {
            watcher = null;
        }
    }

    /** Sleep until our directory changes (at most 10 ms: a lost event costs no more), or for the pause; returns the next pause. */
    static long waitForChange(long pauseMicros) {
        try {
            if (watcher != null) {
                WatchKey key = watcher.poll(10, TimeUnit.MILLISECONDS);
                if (key != null) {
                    key.pollEvents(); // the events only wake us: we look at the files
                    key.reset();
                }
                return pauseMicros;
            }
            TimeUnit.MICROSECONDS.sleep(pauseMicros);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Math.min(pauseMicros * 2, 10_000);
    }

    /** Wait for {@code path} (the referee writes it atomically), read its lines, delete it. */
    static List<String> takeFile(Path path) throws IOException {
        long pause = 100;
        while (true) {
            try {
                List<String> lines = Files.readAllLines(path, StandardCharsets.UTF_8);
                Files.delete(path);
                return lines;
            } catch (NoSuchFileException e) {
                pause = waitForChange(pause);
            }
        }
    }

    /** Write NAME.out atomically: a temporary file, then a rename. */
    static void putMove(String name, String text) throws IOException {
        Path tmp = Path.of(name + ".out.tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, Path.of(name + ".out"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** After our last move: let the referee take NAME.out (or send the end line), at most 2 s. */
    static void waitCollected(String name) {
        long pause = 100;
        for (int i = 0; i < 200 && Files.exists(Path.of(name + ".out")) && !Files.exists(Path.of(name + ".in")); i++) {
            pause = waitForChange(pause);
        }
    }

    static void playGame(String name, Double seconds, int maxDepth) throws IOException {
        Path inbox = Path.of(name + ".in");
        int[] board = startBoard();
        int toMove = WHITE;
        // $OTHELLO_CLOCK "BASE+INC" and $OTHELLO_MOVE_CAP (PROTOCOL.md section 10)
        String clockText = System.getenv("OTHELLO_CLOCK"), capText = System.getenv("OTHELLO_MOVE_CAP");
        int plus = clockText == null ? -1 : clockText.indexOf('+');
        double increment = plus < 0 ? 0 : Double.parseDouble(clockText.substring(plus + 1));
        Double cap = capText == null || capText.isEmpty() ? null : Double.parseDouble(capText);
        Double bank = null; // under a game clock: the seconds left, from the (CLOCK ...) line
        startWatching();
        List<String> lines = takeFile(inbox);
        long arrived = System.nanoTime(); // our clock starts when NAME.in is there
        int me = !lines.isEmpty() && lines.get(0).trim().toUpperCase().startsWith("W") ? WHITE : BLACK;
        // in an opening game (PROTOCOL.md section 8), the moves already played follow the colour
        lines = lines.isEmpty() ? lines : lines.subList(1, lines.size());
        while (true) {
            for (String line : lines) {
                Parsed parsed = parseLine(line);
                if (parsed.kind() == Kind.SKIP) continue;
                if (parsed.kind() == Kind.CLOCK) {
                    bank = parsed.bank();
                    continue;
                }
                if (parsed.kind() == Kind.END) return;
                // Every move is checked, the opponent's and the opening's.  A pass is always taken:
                // with --illegal lose-turn the referee relays an illegal move as a pass.
                boolean legal = parsed.kind() == Kind.MOVE && parsed.colour() == toMove
                        && (parsed.sq() == PASS || !flipped(board, parsed.sq(), toMove).isEmpty());
                if (!legal) {
                    System.err.println("illegal move received: " + line.strip() + "; "
                            + (me == WHITE ? "White" : "Black") + " wins");
                    System.exit(1);
                }
                if (parsed.sq() != PASS) board = play(board, parsed.sq(), toMove);
                toMove = -toMove;
            }
            if (gameOver(board)) return;
            if (toMove == me) {
                Double budget = moveSeconds(seconds, bank, board, increment, cap);
                if (budget != null) budget = Math.max(0.001, budget - (System.nanoTime() - arrived) / 1e9);
                Choice choice = think(board, me, new Clock(budget), maxDepth);
                putMove(name, "(C depth " + choice.depth() + " score " + choice.score() + ")\n"
                        + moveLine(me, choice.move()) + "\n");
                if (choice.move() != PASS) board = play(board, choice.move(), me);
                toMove = -me;
                if (gameOver(board)) {
                    waitCollected(name);
                    return;
                }
            }
            lines = takeFile(inbox);
            arrived = System.nanoTime();
        }
    }

    /** --analyze: one position a line on standard input, the chosen move line on standard output. */
    static void analyze(Double seconds, int maxDepth) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length < 2) continue;
            int[] board = new int[64];
            for (int sq = 0; sq < 64; sq++) {
                char ch = fields[0].charAt(sq);
                board[sq] = ch == 'W' ? WHITE : ch == 'B' ? BLACK : EMPTY;
            }
            int colour = fields[1].equals("W") ? WHITE : BLACK;
            System.out.println(moveLine(colour, think(board, colour, new Clock(seconds), maxDepth).move()));
            System.out.flush();
        }
    }

    public static void main(String[] args) throws IOException {
        String name = System.getenv("OTHELLO_NAME");
        Integer depth = null;
        boolean analyzing = false;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--depth") && i + 1 < args.length) depth = Integer.parseInt(args[++i]);
            else if (args[i].equals("--analyze")) analyzing = true;
            else name = args[i];
        }
        if (name == null || name.isEmpty()) name = "starter";
        String timeText = System.getenv("OTHELLO_TIME");
        Double seconds = null;
        if (depth == null) seconds = timeText != null && !timeText.isEmpty() ? Double.parseDouble(timeText) : 60.0;
        int maxDepth = depth != null ? depth : 64;
        if (analyzing) analyze(seconds, maxDepth);
        else playGame(name, seconds, maxDepth);
    }
}
