#!/usr/bin/env node
// starter.js: a starter Othello Arena agent in JavaScript for Node (the file protocol, see PROTOCOL.md).
//
// Strategy: iterative-deepening alpha-beta (negamax) over a square-weight table,
// under its own clock.  The same program exists in Python, C, C++, Java, Rust,
// Go and awk (starter.*, Starter.java): same search, same evaluation, same move for
// the same position at the same depth.  Node's own modules only.
//
// Run:    othello play "openings:starter=node starter.js {name}" random
//
// Usage:  node starter.js [NAME] [--depth N] [--analyze]
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
'use strict';

const fs = require('fs');

const WHITE = 1, BLACK = -1, EMPTY = 0; // a colour's opponent is -colour (negamax)
const INF = 1000000; // above any score: a won game is at most 64 * 1000
const PASS = -1;

// The board is an array of 64 squares: index = (row - 1) * 8 + column, A1 = 0, H1 = 7, H8 = 63.
const DIRECTIONS = [[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]]; // (column, row) steps

// The evaluation: a value per square (corners good, the squares next to them bad).
// The table is symmetric, so it reads the same whichever way the rows are numbered.
const WEIGHTS = [
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
const START_FRACTION = 0.40;
const ABORT_FRACTION = 0.80;

// -- the rules ------------------------------------------------------------------------

function startBoard() {
  const board = new Array(64).fill(EMPTY);
  board[27] = BLACK; board[28] = WHITE; board[35] = WHITE; board[36] = BLACK; // D4 E4 D5 E5
  return board;
}

// The squares a disc of `colour` on `sq` would flip (empty: not a legal move).
function flipped(board, sq, colour) {
  const result = [];
  if (board[sq] !== EMPTY) return result;
  for (const [dc, dr] of DIRECTIONS) {
    let col = sq % 8 + dc, row = Math.floor(sq / 8) + dr;
    const run = [];
    while (col >= 0 && col < 8 && row >= 0 && row < 8 && board[row * 8 + col] === -colour) {
      run.push(row * 8 + col);
      col += dc; row += dr;
    }
    if (run.length > 0 && col >= 0 && col < 8 && row >= 0 && row < 8 && board[row * 8 + col] === colour) {
      result.push(...run);
    }
  }
  return result;
}

// The legal squares of `colour`, in A1..H8 order.
function legalMoves(board, colour) {
  const moves = [];
  for (let sq = 0; sq < 64; sq++) {
    if (board[sq] === EMPTY && flipped(board, sq, colour).length > 0) moves.push(sq);
  }
  return moves;
}

// A new board: `colour` plays on `sq` (a legal move).
function play(board, sq, colour) {
  const after = board.slice();
  for (const square of flipped(board, sq, colour)) after[square] = colour;
  after[sq] = colour;
  return after;
}

function gameOver(board) {
  return legalMoves(board, WHITE).length === 0 && legalMoves(board, BLACK).length === 0;
}

// -- the search -----------------------------------------------------------------------

// The position seen by `colour` (IMPROVE HERE: mobility, stable discs, parity...).
function evaluate(board, colour) {
  let sum = 0;
  for (let sq = 0; sq < 64; sq++) sum += WEIGHTS[sq] * board[sq];
  return sum * colour;
}

// A finished game: the disc difference, scaled above any evaluation.
function finalScore(board, colour) {
  return board.reduce((a, b) => a + b, 0) * colour * 1000;
}

// Likely best first, so that alpha-beta cuts more (IMPROVE HERE): by square weight.
// Array.prototype.sort is stable (ties keep A1..H8 order): every translation orders the same way.
function ordered(moves) {
  return moves.slice().sort((a, b) => WEIGHTS[b] - WEIGHTS[a]);
}

// Thrown when the clock ran out in the middle of a depth.
class TimeUp extends Error {}

function now() {
  return Number(process.hrtime.bigint()) / 1e9; // seconds, monotonic
}

// Deadlines of one move; `seconds === null`: no clock (fixed depth).
class Clock {
  constructor(seconds) {
    const t = now();
    this.startBy = seconds === null ? Infinity : t + START_FRACTION * seconds;
    this.abortAt = seconds === null ? Infinity : t + ABORT_FRACTION * seconds;
  }

  mayStartDepth() { return now() < this.startBy; }

  check() {
    if (now() >= this.abortAt) throw new TimeUp();
  }
}

// $OTHELLO_CLOCK "BASE+INC" and $OTHELLO_MOVE_CAP (PROTOCOL.md section 10): {increment, cap or null}.
function gameClock() {
  const increment = Number((process.env.OTHELLO_CLOCK || '0+0').split('+')[1]) || 0;
  const cap = process.env.OTHELLO_MOVE_CAP;
  return { increment, cap: cap ? Number(cap) : null };
}

// Seconds for this move: $OTHELLO_TIME, or under a game clock (a bank) the bank spread over
// our moves still to come (half the empty squares, at least 8) plus most of the increment,
// never more than 0.6 of the bank (the increment comes after the move) nor 0.9 of a cap.
// (TUNE HERE)
function moveSeconds(seconds, bank, board, increment, cap) {
  if (seconds === null || bank === null) return seconds;
  const movesLeft = Math.max(8, Math.floor((board.filter((cell) => cell === EMPTY).length + 1) / 2));
  const budget = Math.min(bank / movesLeft + 0.8 * increment, 0.6 * bank);
  return cap === null ? budget : Math.min(budget, 0.9 * cap);
}

// The value of `board` for `colour` to move, searched `depth` plies (a pass is a ply).
function negamax(board, colour, depth, alpha, beta, clock) {
  clock.check();
  if (depth === 0) return evaluate(board, colour);
  const moves = legalMoves(board, colour);
  if (moves.length === 0) {
    if (legalMoves(board, -colour).length === 0) return finalScore(board, colour);
    return -negamax(board, -colour, depth - 1, -beta, -alpha, clock);
  }
  let best = -INF;
  for (const sq of ordered(moves)) {
    const score = -negamax(play(board, sq, colour), -colour, depth - 1, -beta, -alpha, clock);
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

// {move, score} at `depth`; the first of equal moves wins.
function searchRoot(board, colour, moves, depth, clock) {
  let bestMove = moves[0], alpha = -INF;
  for (const sq of moves) {
    const score = -negamax(play(board, sq, colour), -colour, depth - 1, -INF, -alpha, clock);
    if (score > alpha) { bestMove = sq; alpha = score; }
  }
  return { move: bestMove, score: alpha };
}

// Iterative deepening: {move (PASS to pass), depth (the last finished one), score}.
function think(board, colour, clock, maxDepth) {
  const moves = ordered(legalMoves(board, colour));
  if (moves.length <= 1) return { move: moves.length ? moves[0] : PASS, depth: 0, score: 0 };
  let choice = { move: moves[0], depth: 0, score: 0 };
  const empties = board.filter((v) => v === EMPTY).length;
  const limit = Math.min(maxDepth, empties); // deeper than the empty squares is no deeper
  for (let depth = 1; depth <= limit && clock.mayStartDepth(); depth++) {
    // the previous depth's best move first: it is the likeliest best again
    const tried = [choice.move, ...moves.filter((sq) => sq !== choice.move)];
    try {
      const { move, score } = searchRoot(board, colour, tried, depth, clock);
      choice = { move, depth, score };
    } catch (e) {
      if (!(e instanceof TimeUp)) throw e;
      break; // keep the best move of the last finished depth
    }
  }
  return choice;
}

// -- the file protocol ----------------------------------------------------------------

function moveLine(colour, sq) {
  const c = colour === WHITE ? 'W' : 'B';
  return sq === PASS ? `(${c} P)` : `(${c} ${'ABCDEFGH'[sq % 8]} ${Math.floor(sq / 8) + 1})`;
}

// Read a line liberally ("(w d 3)", "(WD3)", "(B P)", "(B)"):
// {kind: 'skip' | 'end' | 'move' | 'bad', colour, sq}, or {kind: 'clock', bank} for "(CLOCK 12.345)".
function parseLine(line) {
  const text = line.toUpperCase().replace(/[\s()]/g, '');
  if (text.startsWith('CLOCK')) {
    const bank = text.length > 5 ? Number(text.slice(5)) : NaN;
    return Number.isFinite(bank) ? { kind: 'clock', bank } : { kind: 'bad' };
  }
  if (text === '' || text[0] === 'C') return { kind: 'skip' };
  if (text.startsWith('END')) return { kind: 'end' };
  if (text[0] !== 'W' && text[0] !== 'B') return { kind: 'bad' };
  const colour = text[0] === 'W' ? WHITE : BLACK;
  if (text.length === 1 || text[1] === 'P') return { kind: 'move', colour, sq: PASS };
  if (text.length >= 3 && 'ABCDEFGH'.includes(text[1]) && '12345678'.includes(text[2])) {
    return { kind: 'move', colour, sq: (Number(text[2]) - 1) * 8 + 'ABCDEFGH'.indexOf(text[1]) };
  }
  return { kind: 'bad' };
}

// Waiting for a file.  Node's fs.watch is inotify on Linux: the kernel wakes us the moment a
// file of our directory is renamed into place, written or deleted, as the referee itself
// waits.  Its events come through Node's event loop, so the game loop is `async` and waits
// with `await`.  Where there is no watch to be had (no inotify left, a file system without
// events), we look again after a pause that doubles from 1 ms (a timer's finest) to 10 ms.
// The watch is made once, before we first look for a file, so no event can slip in between.
class DirectoryWatch {
  constructor() {
    this.wake = null; // ends the wait in progress, if any
    try {
      this.watcher = fs.watch('.', () => this.wake && this.wake());
      this.watcher.unref(); // the watch alone never keeps Node running (the wait's timer does)
      this.watcher.on('error', () => { this.watcher.close(); this.watcher = null; }); // failed mid-game: poll
    } catch (e) {
      this.watcher = null;
    }
  }

  // Sleep until our directory changes (at most 10 ms: a lost event costs no more), or for
  // `pause` ms; resolves to the next pause.
  wait(pause) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake(), this.watcher ? 10 : pause);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve(this.watcher ? pause : Math.min(pause * 2, 10));
      };
    });
  }
}

// Wait for `path` (the referee writes it atomically), read its lines, delete it.
async function takeFile(path, watch) {
  for (let pause = 1; ;) {
    try {
      const text = fs.readFileSync(path, 'utf8');
      fs.unlinkSync(path);
      return text.split(/\r?\n/);
    } catch (e) {
      if (e.code !== 'ENOENT') throw e;
      pause = await watch.wait(pause);
    }
  }
}

// Write NAME.out atomically: a temporary file, then a rename.
function putMove(name, text) {
  fs.writeFileSync(`${name}.out.tmp`, text);
  fs.renameSync(`${name}.out.tmp`, `${name}.out`);
}

// After our last move: let the referee take NAME.out (or send the end line), at most 2 s.
async function waitCollected(name, watch) {
  for (let i = 0, pause = 1; i < 200 && fs.existsSync(`${name}.out`) && !fs.existsSync(`${name}.in`); i++) {
    pause = await watch.wait(pause);
  }
}

async function playGame(name, seconds, maxDepth) {
  let board = startBoard();
  let toMove = WHITE;
  const { increment, cap } = gameClock();
  let bank = null; // under a game clock: the seconds left, from the (CLOCK ...) line
  const watch = new DirectoryWatch();
  let lines = await takeFile(`${name}.in`, watch);
  let arrived = now(); // our clock starts when NAME.in is there
  const me = lines[0].trim().toUpperCase().startsWith('W') ? WHITE : BLACK;
  lines = lines.slice(1); // in an opening game (PROTOCOL.md section 8), the moves already played follow the colour
  for (;;) {
    for (const line of lines) {
      const parsed = parseLine(line);
      if (parsed.kind === 'skip') continue;
      if (parsed.kind === 'clock') { bank = parsed.bank; continue; }
      if (parsed.kind === 'end') return;
      // Every move is checked, the opponent's and the opening's.  A pass is always taken:
      // with --illegal lose-turn the referee relays an illegal move as a pass.
      const legal = parsed.kind === 'move' && parsed.colour === toMove &&
        (parsed.sq === PASS || flipped(board, parsed.sq, toMove).length > 0);
      if (!legal) {
        process.stderr.write(`illegal move received: ${line.trim()}; ${me === WHITE ? 'White' : 'Black'} wins\n`);
        process.exit(1);
      }
      if (parsed.sq !== PASS) board = play(board, parsed.sq, toMove);
      toMove = -toMove;
    }
    if (gameOver(board)) return;
    if (toMove === me) {
      const budget = moveSeconds(seconds, bank, board, increment, cap);
      const clock = new Clock(budget === null ? null : Math.max(0.001, budget - (now() - arrived)));
      const choice = think(board, me, clock, maxDepth);
      putMove(name, `(C depth ${choice.depth} score ${choice.score})\n${moveLine(me, choice.move)}\n`);
      if (choice.move !== PASS) board = play(board, choice.move, me);
      toMove = -me;
      if (gameOver(board)) { await waitCollected(name, watch); return; }
    }
    lines = await takeFile(`${name}.in`, watch);
    arrived = now();
  }
}

// --analyze: one position a line on standard input, the chosen move line on standard output.
function analyze(seconds, maxDepth) {
  const out = [];
  for (const line of fs.readFileSync(0, 'utf8').split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 2) continue;
    const board = Array.from(fields[0].slice(0, 64), (ch) => (ch === 'W' ? WHITE : ch === 'B' ? BLACK : EMPTY));
    const colour = fields[1] === 'W' ? WHITE : BLACK;
    out.push(moveLine(colour, think(board, colour, new Clock(seconds), maxDepth).move));
  }
  process.stdout.write(out.map((line) => line + '\n').join(''));
}

function main(args) {
  let name = process.env.OTHELLO_NAME || 'starter';
  let depth = null;
  let analyzing = false;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--depth' && i + 1 < args.length) depth = Number(args[++i]);
    else if (args[i] === '--analyze') analyzing = true;
    else name = args[i];
  }
  const seconds = depth !== null ? null : Number(process.env.OTHELLO_TIME) || 60;
  const maxDepth = depth !== null ? depth : 64;
  if (analyzing) analyze(seconds, maxDepth);
  else playGame(name, seconds, maxDepth);
}

main(process.argv.slice(2));
