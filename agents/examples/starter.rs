// starter.rs: a starter Othello Arena agent in Rust (the file protocol, see PROTOCOL.md).
//
// Strategy: iterative-deepening alpha-beta (negamax) over a square-weight table,
// under its own clock.  The same program exists in Python, C, C++, Java,
// JavaScript, Go and awk (starter.*, Starter.java): same search, same evaluation,
// same move for the same position at the same depth.  Standard library only:
// no cargo, no crates, no network.
//
// Build:  rustc -O -o starter_rs starter.rs
// Run:    othello play "openings:starter=./starter_rs {name}" random
//
// Usage:  starter_rs [NAME] [--depth N] [--analyze]
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
use std::env;
use std::fs;
use std::io::{self, BufRead, ErrorKind, Write};
use std::path::Path;
use std::process;
use std::thread;
use std::time::{Duration, Instant};

const WHITE: i32 = 1; // a colour's opponent is -colour (negamax)
const BLACK: i32 = -1;
const EMPTY: i32 = 0;
const INF: i32 = 1_000_000; // above any score: a won game is at most 64 * 1000

// The board is 64 squares: index = (row - 1) * 8 + column, A1 = 0, H1 = 7, H8 = 63.
type Board = [i32; 64];
const DIRECTIONS: [(i32, i32); 8] = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)];

// The evaluation: a value per square (corners good, the squares next to them bad).
// The table is symmetric, so it reads the same whichever way the rows are numbered.
const WEIGHTS: [i32; 64] = [
    100, -20, 10, 5, 5, 10, -20, 100,
    -20, -50, -2, -2, -2, -2, -50, -20,
    10, -2, 1, 1, 1, 1, -2, 10,
    5, -2, 1, 0, 0, 1, -2, 5,
    5, -2, 1, 0, 0, 1, -2, 5,
    10, -2, 1, 1, 1, 1, -2, 10,
    -20, -50, -2, -2, -2, -2, -50, -20,
    100, -20, 10, 5, 5, 10, -20, 100,
];

// The time budget (TUNE HERE): of the OTHELLO_TIME seconds per move, start a new
// depth only before START_FRACTION of them, and abandon a depth still running at
// ABORT_FRACTION (then the best move of the last finished depth is played).
// PROTOCOL.md section 4: answer by 0.9 * time, the referee allows time + 0.25 s.
const START_FRACTION: f64 = 0.40;
const ABORT_FRACTION: f64 = 0.80;

// -- the rules ------------------------------------------------------------------------

fn start_board() -> Board {
    let mut board = [EMPTY; 64];
    board[27] = BLACK; // D4
    board[28] = WHITE; // E4
    board[35] = WHITE; // D5
    board[36] = BLACK; // E5
    board
}

/// The squares a disc of `colour` on `sq` would flip (empty: not a legal move).
fn flipped(board: &Board, sq: usize, colour: i32) -> Vec<usize> {
    let mut result = Vec::new();
    if board[sq] != EMPTY {
        return result;
    }
    for &(dc, dr) in DIRECTIONS.iter() {
        let (mut col, mut row) = ((sq % 8) as i32 + dc, (sq / 8) as i32 + dr);
        let mut run = Vec::new();
        while (0..8).contains(&col) && (0..8).contains(&row) && board[(row * 8 + col) as usize] == -colour {
            run.push((row * 8 + col) as usize);
            col += dc;
            row += dr;
        }
        if !run.is_empty() && (0..8).contains(&col) && (0..8).contains(&row) && board[(row * 8 + col) as usize] == colour {
            result.extend(run);
        }
    }
    result
}

/// The legal squares of `colour`, in A1..H8 order.
fn legal_moves(board: &Board, colour: i32) -> Vec<usize> {
    (0..64).filter(|&sq| board[sq] == EMPTY && !flipped(board, sq, colour).is_empty()).collect()
}

/// A new board: `colour` plays on `sq` (a legal move).
fn play(board: &Board, sq: usize, colour: i32) -> Board {
    let mut after = *board;
    for square in flipped(board, sq, colour) {
        after[square] = colour;
    }
    after[sq] = colour;
    after
}

fn game_over(board: &Board) -> bool {
    legal_moves(board, WHITE).is_empty() && legal_moves(board, BLACK).is_empty()
}

// -- the search -----------------------------------------------------------------------

/// The position seen by `colour` (IMPROVE HERE: mobility, stable discs, parity...).
fn evaluate(board: &Board, colour: i32) -> i32 {
    (0..64).map(|sq| WEIGHTS[sq] * board[sq]).sum::<i32>() * colour
}

/// A finished game: the disc difference, scaled above any evaluation.
fn final_score(board: &Board, colour: i32) -> i32 {
    board.iter().sum::<i32>() * colour * 1000
}

/// Likely best first, so that alpha-beta cuts more (IMPROVE HERE): by square weight.
/// sort_by_key is stable (ties keep A1..H8 order): every translation orders the same way.
fn ordered(mut moves: Vec<usize>) -> Vec<usize> {
    moves.sort_by_key(|&sq| -WEIGHTS[sq]);
    moves
}

/// The clock ran out in the middle of a depth (the `Err` of a search).
struct TimeUp;

/// Deadlines of one move; `None`: no clock (fixed depth).
struct Clock {
    start_by: Option<Instant>,
    abort_at: Option<Instant>,
}

impl Clock {
    fn new(seconds: Option<f64>) -> Clock {
        let now = Instant::now();
        let after = |fraction: f64| seconds.map(|s| now + Duration::from_secs_f64(fraction * s));
        Clock { start_by: after(START_FRACTION), abort_at: after(ABORT_FRACTION) }
    }

    fn may_start_depth(&self) -> bool {
        self.start_by.map_or(true, |t| Instant::now() < t)
    }

    fn check(&self) -> Result<(), TimeUp> {
        match self.abort_at {
            Some(t) if Instant::now() >= t => Err(TimeUp),
            _ => Ok(()),
        }
    }
}

/// $OTHELLO_CLOCK "BASE+INC" and $OTHELLO_MOVE_CAP (PROTOCOL.md section 10): (increment, cap if any).
fn game_clock() -> (f64, Option<f64>) {
    let clock = env::var("OTHELLO_CLOCK").unwrap_or_default();
    let increment = clock.split_once('+').and_then(|(_, inc)| inc.trim().parse().ok()).unwrap_or(0.0);
    let cap = env::var("OTHELLO_MOVE_CAP").ok().and_then(|cap| cap.trim().parse().ok());
    (increment, cap)
}

/// Seconds for this move: $OTHELLO_TIME, or under a game clock (a bank) the bank spread over
/// our moves still to come (half the empty squares, at least 8) plus most of the increment,
/// never more than 0.6 of the bank (the increment comes after the move) nor 0.9 of a cap.
/// (TUNE HERE)
fn move_seconds(seconds: Option<f64>, bank: Option<f64>, board: &Board, increment: f64, cap: Option<f64>) -> Option<f64> {
    let bank = match (seconds, bank) {
        (Some(_), Some(bank)) => bank, // timed (no --depth) and under a game clock: the bank decides
        _ => return seconds,
    };
    let empties = board.iter().filter(|&&cell| cell == EMPTY).count() as f64;
    let moves_left = ((empties + 1.0) / 2.0).floor().max(8.0);
    let budget = (bank / moves_left + 0.8 * increment).min(0.6 * bank);
    Some(cap.map_or(budget, |cap| budget.min(0.9 * cap)))
}

/// The value of `board` for `colour` to move, searched `depth` plies (a pass is a ply).
fn negamax(board: &Board, colour: i32, depth: i32, mut alpha: i32, beta: i32, clock: &Clock) -> Result<i32, TimeUp> {
    clock.check()?;
    if depth == 0 {
        return Ok(evaluate(board, colour));
    }
    let moves = legal_moves(board, colour);
    if moves.is_empty() {
        if legal_moves(board, -colour).is_empty() {
            return Ok(final_score(board, colour));
        }
        return Ok(-negamax(board, -colour, depth - 1, -beta, -alpha, clock)?);
    }
    let mut best = -INF;
    for sq in ordered(moves) {
        let score = -negamax(&play(board, sq, colour), -colour, depth - 1, -beta, -alpha, clock)?;
        if score > best {
            best = score;
            if best > alpha {
                alpha = best;
                if alpha >= beta {
                    break; // the opponent will not allow this line
                }
            }
        }
    }
    Ok(best)
}

/// (best move, its score) at `depth`; the first of equal moves wins.
fn search_root(board: &Board, colour: i32, moves: &[usize], depth: i32, clock: &Clock) -> Result<(usize, i32), TimeUp> {
    let (mut best_move, mut alpha) = (moves[0], -INF);
    for &sq in moves {
        let score = -negamax(&play(board, sq, colour), -colour, depth - 1, -INF, -alpha, clock)?;
        if score > alpha {
            best_move = sq;
            alpha = score;
        }
    }
    Ok((best_move, alpha))
}

/// Iterative deepening: (move or None to pass, last finished depth, its score).
fn think(board: &Board, colour: i32, clock: &Clock, max_depth: i32) -> (Option<usize>, i32, i32) {
    let moves = ordered(legal_moves(board, colour));
    if moves.len() <= 1 {
        return (moves.first().copied(), 0, 0);
    }
    let (mut best, mut done, mut score) = (moves[0], 0, 0);
    let empties = board.iter().filter(|&&v| v == EMPTY).count() as i32;
    let limit = max_depth.min(empties); // deeper than the empty squares is no deeper
    let mut depth = 1;
    while depth <= limit && clock.may_start_depth() {
        // the previous depth's best move first: it is the likeliest best again
        let mut tried = vec![best];
        tried.extend(moves.iter().copied().filter(|&sq| sq != best));
        match search_root(board, colour, &tried, depth, clock) {
            Ok((sq, value)) => {
                best = sq;
                score = value;
                done = depth;
            }
            Err(TimeUp) => break, // keep the best move of the last finished depth
        }
        depth += 1;
    }
    (Some(best), done, score)
}

// -- the file protocol ----------------------------------------------------------------

fn move_line(colour: i32, sq: Option<usize>) -> String {
    let c = if colour == WHITE { 'W' } else { 'B' };
    match sq {
        None => format!("({} P)", c),
        Some(sq) => format!("({} {} {})", c, (b'A' + (sq % 8) as u8) as char, sq / 8 + 1),
    }
}

enum Line {
    Skip,
    End,
    Move(i32, Option<usize>),
    Clock(f64),
    Bad,
}

/// Read a line liberally ("(w d 3)", "(WD3)", "(B P)", "(B)"); the clock line "(CLOCK 12.345)" gives the bank.
fn parse_line(line: &str) -> Line {
    let text: Vec<u8> = line.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'(' && *b != b')')
        .map(|b| b.to_ascii_uppercase()).collect();
    if let Some(bank) = text.strip_prefix(b"CLOCK") {
        return match std::str::from_utf8(bank).ok().and_then(|bank| bank.parse().ok()) {
            Some(bank) => Line::Clock(bank),
            None => Line::Bad,
        };
    }
    if text.is_empty() || text[0] == b'C' {
        return Line::Skip;
    }
    if text.starts_with(b"END") {
        return Line::End;
    }
    let colour = match text[0] {
        b'W' => WHITE,
        b'B' => BLACK,
        _ => return Line::Bad,
    };
    if text.len() == 1 || text[1] == b'P' {
        return Line::Move(colour, None);
    }
    if text.len() >= 3 && (b'A'..=b'H').contains(&text[1]) && (b'1'..=b'8').contains(&text[2]) {
        return Line::Move(colour, Some((text[2] - b'1') as usize * 8 + (text[1] - b'A') as usize));
    }
    Line::Bad
}

// Waiting for a file.  On Linux the kernel wakes us the moment a file of our directory is
// renamed into place, closed after writing or deleted (inotify), as the referee itself waits.
// Rust's standard library has no inotify, so we declare the three libc calls we need (std
// links libc already: no crate).  Where there is no watch to be had (another system, no
// inotify left), we look again after a pause that doubles from 0.1 ms to 10 ms: quick when
// the answer is quick, cheap when it is slow.  The watch is made once, before we first look
// for a file, so no event can slip in between.
#[cfg(target_os = "linux")]
mod inotify {
    use std::os::raw::{c_char, c_int, c_short, c_uint, c_ulong};
    pub const IN_CLOSE_WRITE: c_uint = 0x8;
    pub const IN_MOVED_TO: c_uint = 0x80;
    pub const IN_DELETE: c_uint = 0x200;
    pub const POLLIN: c_short = 1;
    #[repr(C)]
    pub struct PollFd {
        pub fd: c_int,
        pub events: c_short,
        pub revents: c_short,
    }
    extern "C" {
        pub fn inotify_init() -> c_int;
        pub fn inotify_add_watch(fd: c_int, path: *const c_char, mask: c_uint) -> c_int;
        pub fn poll(fds: *mut PollFd, count: c_ulong, timeout_ms: c_int) -> c_int;
    }
}

#[cfg(target_os = "linux")]
fn start_watching() -> Option<fs::File> {
    use inotify::*;
    use std::os::unix::io::FromRawFd;
    let fd = unsafe { inotify_init() };
    if fd < 0 {
        return None;
    }
    let file = unsafe { fs::File::from_raw_fd(fd) }; // closes the descriptor when dropped
    let mask = IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE;
    if unsafe { inotify_add_watch(fd, b".\0".as_ptr().cast(), mask) } < 0 {
        return None;
    }
    Some(file)
}

#[cfg(not(target_os = "linux"))]
fn start_watching() -> Option<fs::File> {
    None
}

/// Sleep until our directory changes (at most 10 ms: a lost event costs no more), or for
/// `pause`; returns the next pause.
fn wait_for_change(watch: &mut Option<fs::File>, pause: Duration) -> Duration {
    #[cfg(target_os = "linux")]
    if let Some(file) = watch {
        use inotify::*;
        use std::io::Read;
        use std::os::unix::io::AsRawFd;
        let mut ready = PollFd { fd: file.as_raw_fd(), events: POLLIN, revents: 0 };
        if unsafe { poll(&mut ready, 1, 10) } > 0 {
            let _ = file.read(&mut [0u8; 4096]); // the events only wake us: we look at the files
        }
        return pause;
    }
    let _ = watch; // unused where there is no inotify
    thread::sleep(pause);
    (pause * 2).min(Duration::from_millis(10))
}

/// Wait for `path` (the referee writes it atomically), read its lines, delete it.
fn take_file(path: &str, watch: &mut Option<fs::File>) -> Vec<String> {
    let mut pause = Duration::from_micros(100);
    loop {
        match fs::read(path) {
            Ok(bytes) => {
                let _ = fs::remove_file(path);
                return String::from_utf8_lossy(&bytes).lines().map(String::from).collect();
            }
            Err(e) if e.kind() == ErrorKind::NotFound => pause = wait_for_change(watch, pause),
            Err(e) => panic!("cannot read {}: {}", path, e),
        }
    }
}

/// Write NAME.out atomically: a temporary file, then a rename.
fn put_move(name: &str, text: &str) {
    let tmp = format!("{}.out.tmp", name);
    fs::write(&tmp, text).expect("cannot write NAME.out.tmp");
    fs::rename(&tmp, format!("{}.out", name)).expect("cannot rename to NAME.out");
}

/// After our last move: let the referee take NAME.out (or send the end line), at most 2 s.
fn wait_collected(name: &str, watch: &mut Option<fs::File>) {
    let (out, inbox) = (format!("{}.out", name), format!("{}.in", name));
    let mut pause = Duration::from_micros(100);
    for _ in 0..200 {
        if !Path::new(&out).exists() || Path::new(&inbox).exists() {
            return;
        }
        pause = wait_for_change(watch, pause);
    }
}

fn play_game(name: &str, seconds: Option<f64>, max_depth: i32) {
    let inbox = format!("{}.in", name);
    let mut board = start_board();
    let mut to_move = WHITE;
    let (increment, cap) = game_clock();
    let mut bank: Option<f64> = None; // under a game clock: the seconds left, from the (CLOCK ...) line
    let mut watch = start_watching();
    let mut lines = take_file(&inbox, &mut watch);
    let mut arrived = Instant::now(); // our clock starts when NAME.in is there
    let first = lines.first().map(|l| l.trim().to_ascii_uppercase()).unwrap_or_default();
    let me = if first.starts_with('W') { WHITE } else { BLACK };
    if !lines.is_empty() {
        lines.remove(0); // in an opening game (PROTOCOL.md section 8), the moves already played follow the colour
    }
    loop {
        for line in &lines {
            let (colour, sq) = match parse_line(line) {
                Line::Skip => continue,
                Line::Clock(seconds) => {
                    bank = Some(seconds);
                    continue;
                }
                Line::End => return,
                Line::Move(colour, sq) => (colour, sq),
                Line::Bad => (0, None),
            };
            // Every move is checked, the opponent's and the opening's.  A pass is always taken:
            // with --illegal lose-turn the referee relays an illegal move as a pass.
            let legal = colour == to_move && sq.map_or(true, |sq| !flipped(&board, sq, colour).is_empty());
            if !legal {
                let winner = if me == WHITE { "White" } else { "Black" };
                eprintln!("illegal move received: {}; {} wins", line.trim(), winner);
                process::exit(1);
            }
            if let Some(sq) = sq {
                board = play(&board, sq, colour);
            }
            to_move = -colour;
        }
        if game_over(&board) {
            return;
        }
        if to_move == me {
            let budget = move_seconds(seconds, bank, &board, increment, cap);
            let clock = Clock::new(budget.map(|budget| (budget - arrived.elapsed().as_secs_f64()).max(0.001)));
            let (sq, depth, score) = think(&board, me, &clock, max_depth);
            put_move(name, &format!("(C depth {} score {})\n{}\n", depth, score, move_line(me, sq)));
            if let Some(sq) = sq {
                board = play(&board, sq, me);
            }
            to_move = -me;
            if game_over(&board) {
                wait_collected(name, &mut watch);
                return;
            }
        }
        lines = take_file(&inbox, &mut watch);
        arrived = Instant::now();
    }
}

/// --analyze: one position a line on standard input, the chosen move line on standard output.
fn analyze(seconds: Option<f64>, max_depth: i32) {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for line in io::stdin().lock().lines() {
        let line = line.expect("cannot read standard input");
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 2 {
            continue;
        }
        let mut board = [EMPTY; 64];
        for (sq, ch) in fields[0].bytes().take(64).enumerate() {
            board[sq] = match ch {
                b'W' => WHITE,
                b'B' => BLACK,
                _ => EMPTY,
            };
        }
        let colour = if fields[1] == "W" { WHITE } else { BLACK };
        let (sq, _, _) = think(&board, colour, &Clock::new(seconds), max_depth);
        writeln!(out, "{}", move_line(colour, sq)).expect("cannot write standard output");
        out.flush().expect("cannot write standard output");
    }
}

fn main() {
    let mut name = env::var("OTHELLO_NAME").ok().filter(|n| !n.is_empty()).unwrap_or_else(|| "starter".to_string());
    let (mut depth, mut analyzing) = (None, false);
    let mut args = env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--depth" => depth = args.next().and_then(|n| n.parse::<i32>().ok()),
            "--analyze" => analyzing = true,
            _ => name = arg,
        }
    }
    let seconds = match depth {
        Some(_) => None,
        None => Some(env::var("OTHELLO_TIME").ok().and_then(|t| t.parse::<f64>().ok()).unwrap_or(60.0)),
    };
    let max_depth = depth.unwrap_or(64);
    if analyzing {
        analyze(seconds, max_depth);
    } else {
        play_game(name.as_str(), seconds, max_depth);
    }
}
