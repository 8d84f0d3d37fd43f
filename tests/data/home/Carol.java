// A small Java agent for the tests of {home}: plays the first legal move (A1, A2, ... H8).
// Run as `java -cp {home} Carol {name}`: the class is found in the submission folder, not in
// the game folder where the agent runs; carol.txt beside it is read as a class-path resource.
import java.io.InputStream;
import java.nio.file.*;
import java.util.Arrays;

public class Carol {
    static char[][] board = new char[8][8];  // [column][row - 1]
    static final int[][] DIRECTIONS = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};

    static int flips(int c, int r, char me, boolean apply) {
        if (board[c][r] != '.') return 0;
        char other = me == 'W' ? 'B' : 'W';
        int total = 0;
        for (int[] d : DIRECTIONS) {
            int x = c + d[0], y = r + d[1], n = 0;
            while (x >= 0 && x < 8 && y >= 0 && y < 8 && board[x][y] == other) { x += d[0]; y += d[1]; n++; }
            if (n > 0 && x >= 0 && x < 8 && y >= 0 && y < 8 && board[x][y] == me) {
                total += n;
                if (apply) for (int k = 1; k <= n; k++) board[c + k * d[0]][r + k * d[1]] = me;
            }
        }
        if (apply && total > 0) board[c][r] = me;
        return total;
    }

    static String take(Path in) throws Exception {
        while (!Files.exists(in)) Thread.sleep(5);
        String text = new String(Files.readAllBytes(in));
        Files.delete(in);
        return text;
    }

    public static void main(String[] args) throws Exception {
        InputStream data = Carol.class.getResourceAsStream("/carol.txt");
        if (data == null) throw new IllegalStateException("carol.txt not on the class path");
        System.err.println(new String(data.readAllBytes()).trim());
        String name = args[0];
        for (char[] column : board) Arrays.fill(column, '.');
        board[3][4] = 'W'; board[4][3] = 'W'; board[3][3] = 'B'; board[4][4] = 'B';
        Path in = Paths.get(name + ".in"), out = Paths.get(name + ".out"), tmp = Paths.get(name + ".out.tmp");
        char me = take(in).trim().charAt(0);
        boolean myTurn = me == 'W';
        while (true) {
            if (myTurn) {
                String move = "(" + me + " P)";
                search:
                for (int c = 0; c < 8; c++)
                    for (int r = 0; r < 8; r++)
                        if (flips(c, r, me, false) > 0) {
                            flips(c, r, me, true);
                            move = "(" + me + " " + (char) ('A' + c) + " " + (r + 1) + ")";
                            break search;
                        }
                Files.write(tmp, (move + "\n").getBytes());
                Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE);
            }
            for (String line : take(in).split("\n")) {
                String body = line.replaceAll("[()\\s]", "").toUpperCase();
                if (body.isEmpty()) continue;
                if (body.startsWith("END")) return;
                if (body.length() >= 3) flips(body.charAt(1) - 'A', body.charAt(2) - '1', body.charAt(0), true);
            }
            myTurn = true;
        }
    }
}
