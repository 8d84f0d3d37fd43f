// starter.go: a starter Othello Arena agent in Go (the file protocol, see PROTOCOL.md).
//
// Strategy: iterative-deepening alpha-beta (negamax) over a square-weight table,
// under its own clock.  The same program exists in Python, C, C++, Java,
// JavaScript, Rust and awk (starter.*, Starter.java): same search, same evaluation,
// same move for the same position at the same depth.  Standard library only.
//
// Build:  go build -o starter_go starter.go
//
//	(a tournament's build line adds GOCACHE=/tmp/go-cache: Go keeps its compile
//	cache under $HOME, which for a build is the submission folder; /tmp is private)
//
// Run:    othello play "openings:starter=./starter_go {name}" random
//
// Usage:  starter_go [NAME] [--depth N] [--analyze]
//
//	NAME        its files are NAME.in and NAME.out (default: $OTHELLO_NAME, else "starter")
//	--depth N   search exactly N plies, no clock (to debug, or to compare versions)
//	--analyze   no game: read positions from standard input, one a line,
//	            64 characters A1 B1 .. H1 A2 .. H8 ('W', 'B', '.') then a space and
//	            the side to move ('W' or 'B'); print the chosen move line for each
//
// The time per move is $OTHELLO_TIME seconds (default 60); see startFraction.
// It reads openings (PROTOCOL.md section 8): the moves after the colour in its first NAME.in.
// Under a game clock (PROTOCOL.md section 10: $OTHELLO_CLOCK, declared with
// "clock:starter=...") it reads its bank, the (CLOCK seconds) line, and thinks
// a share of it: see moveSeconds.
//
// Where to improve it: evaluate (the evaluation), ordered (move ordering),
// startFraction / abortFraction (the time budget).
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	white = 1 // a colour's opponent is -colour (negamax)
	black = -1
	empty = 0
	inf   = 1000000 // above any score: a won game is at most 64 * 1000
	pass  = -1
)

// Board is 64 squares: index = (row - 1) * 8 + column, A1 = 0, H1 = 7, H8 = 63.
type Board [64]int

var directions = [8][2]int{{1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}} // (column, row) steps

// The evaluation: a value per square (corners good, the squares next to them bad).
// The table is symmetric, so it reads the same whichever way the rows are numbered.
var weights = [64]int{
	100, -20, 10, 5, 5, 10, -20, 100,
	-20, -50, -2, -2, -2, -2, -50, -20,
	10, -2, 1, 1, 1, 1, -2, 10,
	5, -2, 1, 0, 0, 1, -2, 5,
	5, -2, 1, 0, 0, 1, -2, 5,
	10, -2, 1, 1, 1, 1, -2, 10,
	-20, -50, -2, -2, -2, -2, -50, -20,
	100, -20, 10, 5, 5, 10, -20, 100,
}

// The time budget (TUNE HERE): of the OTHELLO_TIME seconds per move, start a new
// depth only before startFraction of them, and abandon a depth still running at
// abortFraction (then the best move of the last finished depth is played).
// PROTOCOL.md section 4: answer by 0.9 * time, the referee allows time + 0.25 s.
const (
	startFraction = 0.40
	abortFraction = 0.80
)

// -- the rules ------------------------------------------------------------------------

func startBoard() Board {
	var b Board
	b[27], b[28], b[35], b[36] = black, white, white, black // D4 E4 D5 E5
	return b
}

func onBoard(col, row int) bool { return col >= 0 && col < 8 && row >= 0 && row < 8 }

// flipped returns the squares a disc of colour on sq would flip (empty: not a legal move).
func flipped(b *Board, sq, colour int) []int {
	var result []int
	if b[sq] != empty {
		return result
	}
	for _, d := range directions {
		col, row := sq%8+d[0], sq/8+d[1]
		var run []int
		for onBoard(col, row) && b[row*8+col] == -colour {
			run = append(run, row*8+col)
			col, row = col+d[0], row+d[1]
		}
		if len(run) > 0 && onBoard(col, row) && b[row*8+col] == colour {
			result = append(result, run...)
		}
	}
	return result
}

// legalMoves returns the legal squares of colour, in A1..H8 order.
func legalMoves(b *Board, colour int) []int {
	var moves []int
	for sq := 0; sq < 64; sq++ {
		if b[sq] == empty && len(flipped(b, sq, colour)) > 0 {
			moves = append(moves, sq)
		}
	}
	return moves
}

// play returns a new board: colour plays on sq (a legal move).
func play(b *Board, sq, colour int) Board {
	after := *b
	for _, square := range flipped(b, sq, colour) {
		after[square] = colour
	}
	after[sq] = colour
	return after
}

func gameOver(b *Board) bool {
	return len(legalMoves(b, white)) == 0 && len(legalMoves(b, black)) == 0
}

// -- the search -----------------------------------------------------------------------

// evaluate scores the position seen by colour (IMPROVE HERE: mobility, stable discs, parity...).
func evaluate(b *Board, colour int) int {
	sum := 0
	for sq := 0; sq < 64; sq++ {
		sum += weights[sq] * b[sq]
	}
	return sum * colour
}

// finalScore scores a finished game: the disc difference, scaled above any evaluation.
func finalScore(b *Board, colour int) int {
	sum := 0
	for _, v := range b {
		sum += v
	}
	return sum * colour * 1000
}

// ordered puts likely best moves first, so that alpha-beta cuts more (IMPROVE HERE): by square weight.
// sort.SliceStable keeps ties in A1..H8 order: every translation orders the same way.
func ordered(moves []int) []int {
	result := append([]int(nil), moves...)
	sort.SliceStable(result, func(i, j int) bool { return weights[result[i]] > weights[result[j]] })
	return result
}

// Clock holds the deadlines of one move; timed false: no clock (fixed depth).
type Clock struct {
	timed            bool
	startBy, abortAt time.Time
	timeUp           bool // the clock ran out in the middle of a depth: every result is then void
}

func newClock(seconds float64, timed bool) *Clock {
	now := time.Now() // Go's time.Now carries a monotonic reading: Sub and Before use it
	after := func(fraction float64) time.Time {
		return now.Add(time.Duration(fraction * seconds * float64(time.Second)))
	}
	return &Clock{timed: timed, startBy: after(startFraction), abortAt: after(abortFraction)}
}

func (c *Clock) mayStartDepth() bool { return !c.timed || time.Now().Before(c.startBy) }

func (c *Clock) expired() bool {
	if c.timed && !time.Now().Before(c.abortAt) {
		c.timeUp = true
	}
	return c.timeUp
}

// gameClock reads $OTHELLO_CLOCK "BASE+INC" and $OTHELLO_MOVE_CAP (PROTOCOL.md section 10):
// the increment, and the cap (0: none).
func gameClock() (float64, float64) {
	increment, cap := 0.0, 0.0
	if _, inc, found := strings.Cut(os.Getenv("OTHELLO_CLOCK"), "+"); found {
		increment, _ = strconv.ParseFloat(strings.TrimSpace(inc), 64)
	}
	if text := os.Getenv("OTHELLO_MOVE_CAP"); text != "" {
		cap, _ = strconv.ParseFloat(strings.TrimSpace(text), 64)
	}
	return increment, cap
}

// moveSeconds is the time for this move: $OTHELLO_TIME, or under a game clock (bank >= 0) the
// bank spread over our moves still to come (half the empty squares, at least 8) plus most of
// the increment, never more than 0.6 of the bank (the increment comes after the move) nor 0.9
// of a cap (cap > 0).  (TUNE HERE)
func moveSeconds(seconds, bank float64, b *Board, increment, cap float64) float64 {
	if bank < 0 {
		return seconds
	}
	empties := 0
	for _, cell := range b {
		if cell == empty {
			empties++
		}
	}
	movesLeft := (empties + 1) / 2
	if movesLeft < 8 {
		movesLeft = 8
	}
	budget := math.Min(bank/float64(movesLeft)+0.8*increment, 0.6*bank)
	if cap > 0 {
		budget = math.Min(budget, 0.9*cap)
	}
	return budget
}

// negamax values b for colour to move, searched depth plies (a pass is a ply).
func negamax(b *Board, colour, depth, alpha, beta int, clock *Clock) int {
	if clock.expired() {
		return 0
	}
	if depth == 0 {
		return evaluate(b, colour)
	}
	moves := legalMoves(b, colour)
	if len(moves) == 0 {
		if len(legalMoves(b, -colour)) == 0 {
			return finalScore(b, colour)
		}
		return -negamax(b, -colour, depth-1, -beta, -alpha, clock)
	}
	best := -inf
	for _, sq := range ordered(moves) {
		after := play(b, sq, colour)
		score := -negamax(&after, -colour, depth-1, -beta, -alpha, clock)
		if clock.timeUp {
			return 0
		}
		if score > best {
			best = score
			if best > alpha {
				alpha = best
				if alpha >= beta {
					break // the opponent will not allow this line
				}
			}
		}
	}
	return best
}

// searchRoot returns the best move at depth and its score; the first of equal moves wins.
func searchRoot(b *Board, colour int, moves []int, depth int, clock *Clock) (int, int) {
	bestMove, alpha := moves[0], -inf
	for _, sq := range moves {
		after := play(b, sq, colour)
		score := -negamax(&after, -colour, depth-1, -inf, -alpha, clock)
		if clock.timeUp {
			return pass, 0
		}
		if score > alpha {
			bestMove, alpha = sq, score
		}
	}
	return bestMove, alpha
}

// think deepens iteratively: the move (pass to pass), the last finished depth, its score.
func think(b *Board, colour int, clock *Clock, maxDepth int) (int, int, int) {
	moves := ordered(legalMoves(b, colour))
	if len(moves) == 0 {
		return pass, 0, 0
	}
	if len(moves) == 1 {
		return moves[0], 0, 0
	}
	best, done, score := moves[0], 0, 0
	empties := 0
	for _, v := range b {
		if v == empty {
			empties++
		}
	}
	limit := maxDepth // deeper than the empty squares is no deeper
	if empties < limit {
		limit = empties
	}
	for depth := 1; depth <= limit && clock.mayStartDepth(); depth++ {
		// the previous depth's best move first: it is the likeliest best again
		tried := []int{best}
		for _, sq := range moves {
			if sq != best {
				tried = append(tried, sq)
			}
		}
		move, value := searchRoot(b, colour, tried, depth, clock)
		if clock.timeUp {
			break // keep the best move of the last finished depth
		}
		best, done, score = move, depth, value
	}
	return best, done, score
}

// -- the file protocol ----------------------------------------------------------------

func moveLine(colour, sq int) string {
	c := "B"
	if colour == white {
		c = "W"
	}
	if sq == pass {
		return "(" + c + " P)"
	}
	return fmt.Sprintf("(%s %c %d)", c, 'A'+sq%8, sq/8+1)
}

type kind int

const (
	lineSkip kind = iota
	lineEnd
	lineMove
	lineBad
	lineClock
)

// parseLine reads a line liberally ("(w d 3)", "(WD3)", "(B P)", "(B)"): its kind, colour and square;
// for the clock line "(CLOCK 12.345)" lineClock, and the bank from parseClock.
func parseLine(line string) (kind, int, int) {
	text := lineText(line)
	if strings.HasPrefix(text, "CLOCK") {
		if _, ok := parseClock(line); ok {
			return lineClock, 0, pass
		}
		return lineBad, 0, pass
	}
	if text == "" || text[0] == 'C' {
		return lineSkip, 0, pass
	}
	if strings.HasPrefix(text, "END") {
		return lineEnd, 0, pass
	}
	if text[0] != 'W' && text[0] != 'B' {
		return lineBad, 0, pass
	}
	colour := black
	if text[0] == 'W' {
		colour = white
	}
	if len(text) == 1 || text[1] == 'P' {
		return lineMove, colour, pass
	}
	if len(text) >= 3 && text[1] >= 'A' && text[1] <= 'H' && text[2] >= '1' && text[2] <= '8' {
		return lineMove, colour, int(text[2]-'1')*8 + int(text[1]-'A')
	}
	return lineBad, 0, pass
}

// lineText is a line upper-cased, without blanks and brackets.
func lineText(line string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' || r == '(' || r == ')' {
			return -1
		}
		return r
	}, strings.ToUpper(line))
}

// parseClock reads the bank of a clock line "(CLOCK 12.345)".
func parseClock(line string) (float64, bool) {
	text := lineText(line)
	if !strings.HasPrefix(text, "CLOCK") {
		return 0, false
	}
	bank, err := strconv.ParseFloat(text[5:], 64)
	return bank, err == nil
}

// Waiting for a file.  On Linux the kernel wakes us the moment a file of our directory is
// renamed into place, closed after writing or deleted (inotify), as the referee itself waits.
// Where that cannot be had (no inotify left), we look again after a pause that doubles from
// 0.1 ms to 10 ms: quick when the answer is quick, cheap when it is slow.  The watch is made
// once, before we first look for a file, so no event can slip in between.  (syscall's inotify
// makes this file build on Linux only, where the arena runs.)
var watch *os.File

func startWatching() {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return
	}
	if _, err := syscall.InotifyAddWatch(fd, ".", syscall.IN_MOVED_TO|syscall.IN_CLOSE_WRITE|syscall.IN_DELETE); err != nil {
		syscall.Close(fd)
		return
	}
	watch = os.NewFile(uintptr(fd), "inotify") // non-blocking, so Go's poller waits on it, with a deadline
}

// waitForChange sleeps until our directory changes (at most 10 ms: a lost event costs no more),
// or for pause; it returns the next pause.
func waitForChange(pause time.Duration) time.Duration {
	if watch != nil && watch.SetReadDeadline(time.Now().Add(10*time.Millisecond)) == nil {
		events := make([]byte, 4096)
		// the events only wake us: we look at the files
		if _, err := watch.Read(events); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			watch = nil // a watch that fails mid-game: pause instead
		}
		return pause
	}
	time.Sleep(pause)
	if pause *= 2; pause > 10*time.Millisecond {
		pause = 10 * time.Millisecond
	}
	return pause
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// takeFile waits for path (the referee writes it atomically), reads its lines, deletes it.
func takeFile(path string) []string {
	pause := 100 * time.Microsecond
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			os.Remove(path)
			return strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
		}
		if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintln(os.Stderr, "cannot read", path, err)
			os.Exit(1)
		}
		pause = waitForChange(pause)
	}
}

// putMove writes NAME.out atomically: a temporary file, then a rename.
func putMove(name, text string) {
	if err := os.WriteFile(name+".out.tmp", []byte(text), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Rename(name+".out.tmp", name+".out"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// waitCollected: after our last move, let the referee take NAME.out (or send the end line), at most 2 s.
func waitCollected(name string) {
	pause := 100 * time.Microsecond
	for i := 0; i < 200 && exists(name+".out") && !exists(name+".in"); i++ {
		pause = waitForChange(pause)
	}
}

func playGame(name string, seconds float64, timed bool, maxDepth int) {
	inbox := name + ".in"
	board := startBoard()
	toMove := white
	increment, cap := gameClock()
	bank := -1.0 // under a game clock: the seconds left, from the (CLOCK ...) line
	startWatching()
	lines := takeFile(inbox)
	arrived := time.Now() // our clock starts when NAME.in is there
	me := black
	if len(lines) > 0 && strings.HasPrefix(strings.ToUpper(strings.TrimSpace(lines[0])), "W") {
		me = white
	}
	if len(lines) > 0 {
		lines = lines[1:] // in an opening game (PROTOCOL.md section 8), the moves already played follow the colour
	}
	for {
		for _, line := range lines {
			k, colour, sq := parseLine(line)
			if k == lineSkip {
				continue
			}
			if k == lineClock {
				bank, _ = parseClock(line)
				continue
			}
			if k == lineEnd {
				return
			}
			// Every move is checked, the opponent's and the opening's.  A pass is always taken:
			// with --illegal lose-turn the referee relays an illegal move as a pass.
			legal := k == lineMove && colour == toMove && (sq == pass || len(flipped(&board, sq, colour)) > 0)
			if !legal {
				winner := "Black"
				if me == white {
					winner = "White"
				}
				fmt.Fprintf(os.Stderr, "illegal move received: %s; %s wins\n", strings.TrimSpace(line), winner)
				os.Exit(1)
			}
			if sq != pass {
				board = play(&board, sq, colour)
			}
			toMove = -colour
		}
		if gameOver(&board) {
			return
		}
		if toMove == me {
			left := math.Max(0.001, moveSeconds(seconds, bank, &board, increment, cap)-time.Since(arrived).Seconds())
			sq, depth, score := think(&board, me, newClock(left, timed), maxDepth)
			putMove(name, fmt.Sprintf("(C depth %d score %d)\n%s\n", depth, score, moveLine(me, sq)))
			if sq != pass {
				board = play(&board, sq, me)
			}
			toMove = -me
			if gameOver(&board) {
				waitCollected(name)
				return
			}
		}
		lines = takeFile(inbox)
		arrived = time.Now()
	}
}

// analyze (--analyze): one position a line on standard input, the chosen move line on standard output.
func analyze(seconds float64, timed bool, maxDepth int) {
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 2 {
			continue
		}
		var board Board
		for sq := 0; sq < 64 && sq < len(fields[0]); sq++ {
			switch fields[0][sq] {
			case 'W':
				board[sq] = white
			case 'B':
				board[sq] = black
			}
		}
		colour := black
		if fields[1] == "W" {
			colour = white
		}
		sq, _, _ := think(&board, colour, newClock(seconds, timed), maxDepth)
		fmt.Println(moveLine(colour, sq))
	}
}

func main() {
	name := os.Getenv("OTHELLO_NAME")
	depth, analyzing := 0, false
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--depth" && i+1 < len(args):
			i++
			depth, _ = strconv.Atoi(args[i])
		case args[i] == "--analyze":
			analyzing = true
		default:
			name = args[i]
		}
	}
	if name == "" {
		name = "starter"
	}
	seconds, err := strconv.ParseFloat(os.Getenv("OTHELLO_TIME"), 64)
	if err != nil || seconds <= 0 {
		seconds = 60
	}
	timed, maxDepth := depth <= 0, depth
	if !timed {
		seconds = 0
	} else {
		maxDepth = 64
	}
	if analyzing {
		analyze(seconds, timed, maxDepth)
	} else {
		playGame(name, seconds, timed, maxDepth)
	}
}
