// Othello Arena web app.  The server computes every position, the legal
// squares and the flips with the rules core; this script only draws them.
"use strict";

const Arena = (() => {
  const COLUMNS = "ABCDEFGHIJKLMN";  // enough for seed 002's biggest board, 14x14
  const NAMES = { W: "White", B: "Black" };

  function squareName(sq, n) { return COLUMNS[sq % n] + (Math.floor(sq / n) + 1); }

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child != null) node.append(child);
    return node;
  }

  // -- theme and projector ------------------------------------------------------
  function setupChrome() {
    const root = document.documentElement;
    const saved = localStorage.getItem("othello-theme");
    const dark = saved ? saved === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
    root.dataset.theme = dark ? "dark" : "light";
    if (localStorage.getItem("othello-projector") === "1") document.body.classList.add("projector");
    const theme = document.getElementById("theme");
    if (theme) theme.addEventListener("click", () => {
      root.dataset.theme = root.dataset.theme === "dark" ? "light" : "dark";
      localStorage.setItem("othello-theme", root.dataset.theme);
    });
    const projector = document.getElementById("projector");
    if (projector) projector.addEventListener("click", () => {
      const on = document.body.classList.toggle("projector");
      localStorage.setItem("othello-projector", on ? "1" : "0");
    });
  }

  // -- the board ------------------------------------------------------------------
  // cells: 64 characters A1..H8 ("W", "B", "."), n*n on a bigger board; the top row is drawn first.
  function drawBoard(container, cells, opts = {}) {
    const n = Math.round(Math.sqrt(cells.length));
    const legal = new Set(opts.legal || []);
    const flips = new Set(opts.flips || []);
    const board = el("div", { class: "board", "data-cells": cells, "data-size": String(n) });
    for (let row = n; row >= 1; row--) {
      for (let col = 0; col < n; col++) {
        const sq = (row - 1) * n + col;
        const classes = ["sq"];
        if (legal.has(sq)) classes.push("legal");
        if (legal.has(sq) && opts.onClick) classes.push("clickable");
        if (opts.last === sq) classes.push("last");
        if (flips.has(sq)) classes.push("flip");
        const square = el("div", { class: classes.join(" "), "data-square": squareName(sq, n), title: squareName(sq, n) });
        if (cells[sq] === "W" || cells[sq] === "B") square.append(el("div", { class: "disc " + cells[sq] }));
        if (legal.has(sq) && opts.onClick) square.addEventListener("click", () => opts.onClick(sq));
        board.append(square);
      }
    }
    const ranks = el("div", { class: "ranks" });
    for (let row = n; row >= 1; row--) ranks.append(el("div", { text: String(row) }));
    const files = el("div", { class: "files" });
    for (const c of COLUMNS.slice(0, n)) files.append(el("div", { text: c }));
    container.replaceChildren(el("div", { class: "board-wrap", style: "--n: " + n }, ranks, board, files));
  }

  function count(cells, colour) { return [...cells].filter((c) => c === colour).length; }

  function clockText(seconds) {
    const s = Math.max(0, seconds);
    return s < 60 ? s.toFixed(1) + " s" : Math.floor(s / 60) + ":" + String(Math.floor(s % 60)).padStart(2, "0");
  }

  // The clocks of a game view: the side to move's runs from `since` (server time).  Under a game
  // clock (PROTOCOL.md section 10) a side's clock is its bank, counting down; else its time used.
  function runningClocks(view, offset) {
    const running = view.to_move && view.since ? Math.max(0, Date.now() / 1000 + offset - view.since) : 0;
    const clocks = {};
    for (const colour of ["W", "B"]) {
      const bank = view.banks ? view.banks[colour] : null;
      const ticking = colour === view.to_move ? running : 0;
      clocks[colour] = bank === null || bank === undefined ? view.clocks[colour] + ticking : bank - ticking;
    }
    return clocks;
  }

  function follow(url, onData) {
    let source = null;
    function open() {
      source = new EventSource(url);
      source.onmessage = (event) => onData(JSON.parse(event.data));
    }
    open();
    return () => source && source.close();
  }

  async function post(url, body) {
    const response = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" },
                                        body: JSON.stringify(body) });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(data.error || response.statusText);
    return data;
  }

  // -- a game page (a browser game, or a tournament's game) ---------------------
  // webGame: a game of this server (else a tournament's); mayPlay: this browser may move for its people.
  function gamePage(source, webGame, mayPlay) {
    let view = null, ply = 0, following = true, offset = 0, busy = false;
    const $ = (id) => document.getElementById(id);

    // Not while this page's last move is still on its way: a click then would be dropped (the referee
    // may have answered it already, so the board shows the person's turn before the answer arrives).
    function myTurn() {
      return webGame && mayPlay && !busy && view && view.result === null && !view.error && view.to_move &&
        (view.people || []).includes(view.to_move) && !(view.written || {})[view.to_move] &&
        ply === view.plies.length - 1;
    }

    async function play(square) {
      if (busy || !myTurn()) return;
      const colour = view.to_move;
      busy = true;
      $("problem").textContent = "";
      render();  // the board stops taking clicks until the server has the move
      try {
        await post(source + "/move", { colour, square });
      } catch (error) {
        $("problem").textContent = error.message;
      } finally {
        busy = false;
        render();
      }
    }

    function render() {
      if (!view) return;
      const last = view.plies.length - 1;
      if (following) ply = last;
      ply = Math.min(ply, last);
      const current = view.plies[ply];
      const atEnd = ply === last;
      const clickable = myTurn();
      drawBoard($("board"), current.cells, {
        legal: clickable ? view.legal : [],  // the squares a person may click; an agent needs no hint
        last: current.square, flips: current.flips, onClick: clickable ? play : null,
      });
      const clocks = runningClocks(view, offset);
      for (const colour of ["W", "B"]) {
        const box = $("player-" + colour);
        box.classList.toggle("to-move", atEnd && view.to_move === colour);
        box.querySelector(".name").textContent = colour === "W" ? view.white : view.black;
        box.querySelector(".count").textContent = count(current.cells, colour);
        box.querySelector(".clock").textContent = clockText(clocks[colour]);
      }
      $("status").textContent = statusText(atEnd);
      $("status").dataset.state = view.result ? "over" : clickable ? "your-turn" : "waiting";
      const mustPass = clickable && view.legal.length === 0;
      $("pass").hidden = !mustPass;
      $("retry").textContent = view.retry || "";
      $("problem").textContent = view.problem || view.error || $("problem").textContent;
      const inbox = webGame && view.to_move && (view.inbox || {})[view.to_move];
      $("inbox").hidden = !inbox;
      if (inbox) {
        $("inbox").querySelector("pre").textContent = inbox;
        $("inbox-name").textContent = view.files[view.to_move] + ".in";
        $("outbox-name").textContent = view.files[view.to_move] + ".out";
      }
      $("ply").textContent = ply + " / " + last;
      renderMoves();
      if (webGame) $("downloads").hidden = !view.result;
      if (!webGame && view.links) {
        $("downloads").replaceChildren(...Object.entries(view.links).map(([label, path]) =>
          el("a", { href: "/results/" + path, text: label, style: "margin-right:1rem" })));
        if (view.detail) $("detail").textContent = view.detail;
      }
      if (webGame) renderFault();
    }

    // Why the game ended on a fault: the detail, the move number, what was written, each program's output.
    let faultShown = false;
    function renderFault() {
      const result = view.result;
      if (!result || faultShown || result.reason === "normal") return;
      faultShown = true;
      const parts = [];
      const where = result.move_number ? "At move " + result.move_number + ": " : "";
      if (result.detail) parts.push(el("p", { id: "fault-detail", text: where + result.detail }));
      const fault = view.fault;
      if (fault && fault.line !== null && fault.line !== undefined) {
        const name = fault.colour === "W" ? view.white : view.black;
        const took = fault.seconds === null || fault.seconds === undefined ? "" : " after " + fault.seconds.toFixed(2) + " s";
        const comments = (fault.comments || []).map((c) => "(C " + c + ")").join(" ");
        parts.push(el("p", { id: "fault-line", text: name + " wrote " + fault.line + took + (comments ? "  " + comments : "") }));
      }
      const links = Object.entries(view.stderr || {});
      if (mayPlay && links.length) {
        parts.push(el("p", { id: "stderr-links" }, "Output: ", ...links.map(([colour, href]) =>
          el("a", { href, target: "_blank", text: (colour === "W" ? view.white : view.black) + ".stderr.log",
                    style: "margin-right:1rem" }))));
      }
      $("detail").replaceChildren(...parts);
    }

    function statusText(atEnd) {
      if (view.error) return view.error;
      if (view.result) return view.result_text;
      if (!atEnd) return "Replaying move " + ply;
      if (!view.to_move) return view.plies.length > 1 || view.status === "running" ? "…" : "Waiting for the game to start";
      const name = view.to_move === "W" ? view.white : view.black;
      if (myTurn()) return view.legal.length ? name + " (" + NAMES[view.to_move] + ") to move: click a highlighted square"
                                            : name + " (" + NAMES[view.to_move] + ") has no legal move and must pass";
      if ((view.written || {})[view.to_move]) return "Sent " + view.written[view.to_move] + " to the referee";
      if (busy) return "Sending the move to the referee";
      return name + " (" + NAMES[view.to_move] + ") is thinking";
    }

    let movesShown = -1;
    function renderMoves() {
      const table = $("moves");
      if (movesShown !== view.plies.length) {
        movesShown = view.plies.length;
        table.replaceChildren(...view.plies.slice(1).map((p, i) => {
          const row = el("tr", { "data-ply": String(i + 1), onclick: () => { following = false; ply = i + 1; render(); } },
            el("td", { class: "num", text: String(i + 1) }),
            el("td", { text: p.move + (p.forfeit ? " (lost turn)" : "") }),
            el("td", { class: "num", text: (p.seconds || 0).toFixed(2) + " s" }),
            el("td", { class: "comment", text: (p.comments || []).join(" · ") }));
          return row;
        }));
      }
      for (const row of table.querySelectorAll("tr")) row.classList.toggle("current", Number(row.dataset.ply) === ply);
      const current = table.querySelector("tr.current");
      const box = $("moves-box");
      if (current && following) box.scrollTop = current.offsetTop - box.clientHeight / 2;  // the list only, not the page
    }

    function step(to) {
      if (!view) {
        // The record has not arrived (what shows is the server's first paint): Start and Latest are
        // kept for when it does; a click was lost, with an error, before.
        if (to === 0 || to === Infinity) { ply = 0; following = to === Infinity; }
        return;
      }
      const last = view.plies.length - 1;
      ply = Math.max(0, Math.min(last, to));
      following = ply === last;
      render();
    }

    $("first").addEventListener("click", () => step(0));
    $("prev").addEventListener("click", () => step(ply - 1));
    $("next").addEventListener("click", () => step(ply + 1));
    $("latest").addEventListener("click", () => step(Infinity));
    document.addEventListener("keydown", (event) => {
      if (!view || event.target.tagName === "INPUT") return;
      if (event.key === "ArrowLeft") step(ply - 1);
      if (event.key === "ArrowRight") step(ply + 1);
    });
    $("pass").addEventListener("click", () => play(null));
    follow(source + "/events", (data) => {
      view = data;
      offset = data.now - Date.now() / 1000;
      render();
    });
    setInterval(() => { if (view && view.to_move && !view.result) render(); }, 250);
  }

  // -- the tournament page ------------------------------------------------------
  function tournamentPage() {
    const $ = (id) => document.getElementById(id);
    let data = null, offset = 0;

    // The same markup as the first paint (templates/tournament.html), kept up to date from the events.
    function standings() {
      const head = el("tr", {}, ...["#", "agent", "games", "points", "W-D-L", "discs", "Elo (95%)", "forfeits"]
        .map((h, i) => el("th", { class: i === 1 || i === 7 ? "" : "num", text: h })));
      const rows = data.standings.map((line) => el("tr", { "data-agent": line.agent, class: line.reference ? "reference" : "" },
        el("td", { class: "num", text: String(line.shown_rank) }),
        el("td", {}, el("a", { href: "/tournament/agents/" + encodeURIComponent(line.agent), text: line.agent })),
        el("td", { class: "num", text: String(line.games) }),
        el("td", { class: "num points", text: String(line.points) }),
        el("td", { class: "num", text: line.wins + "-" + line.draws + "-" + line.losses }),
        el("td", { class: "num", text: (line.disc_difference > 0 ? "+" : "") + line.disc_difference }),
        el("td", { class: "num", text: line.elo_text || "" }),
        el("td", { text: line.forfeits_text })));
      $("standings").replaceChildren(head, ...rows);
      if (data.match && $("match-verdict")) {  // a match: its own figures, as the terminal prints them
        $("match-verdict").textContent = data.match.verdict;
        $("match-progress").textContent = data.match.progress;
        $("match-figures").textContent = data.match.figures.join("\n");
      }
    }

    function crosstable() {
      const names = data.standings.map((line) => line.agent);
      const head = el("tr", {}, el("th", { class: "corner" }),
        ...names.map((n, i) => el("th", { class: "col", "data-agent": n, title: n, text: String(i + 1) })));
      const rows = names.map((a, i) => el("tr", { "data-agent": a }, el("th", { class: "row-head", text: (i + 1) + ". " + a }),
        ...names.map((b) => {
          if (a === b) return el("td", { class: "muted", text: "—" });
          const cell = ((data.crosstable || {})[a] || {})[b];
          return el("td", { text: cell && cell.games ? cell.points + "/" + cell.games : "" });
        })));
      $("crosstable").replaceChildren(head, ...rows);
    }

    function live() {
      const clocksNow = [];
      $("live").replaceChildren(...data.live.map((view) => {
        const last = view.plies[view.plies.length - 1];
        const board = el("div");
        drawBoard(board, last.cells, { last: last.square, flips: last.flips });
        const comment = [...view.plies].reverse().find((p) => (p.comments || []).length);
        const clocks = el("div", { class: "info clocks" });
        clocksNow.push([clocks, view]);
        return el("a", { class: "live-game panel", href: "/tournament/games/" + encodeURIComponent(view.key),
                         "data-key": view.key, "data-plies": String(view.plies.length - 1) },
          el("div", { class: "names" }, el("span", { text: "○ " + view.white }), el("span", { text: "● " + view.black })),
          board, clocks,
          el("div", { class: "info", text: "move " + (view.plies.length - 1) + (last.move ? ": " + last.move : "") }),
          el("div", { class: "info comment", text: comment ? comment.move + " said: " + comment.comments.join(" · ") : "" }));
      }));
      $("live-none").hidden = data.live.length > 0;
      tick(clocksNow);
      return clocksNow;
    }

    let ticking = [];
    function tick(list) {
      for (const [node, view] of list) {
        const clocks = runningClocks(view, offset);
        node.textContent = "White " + clockText(clocks.W) + (view.to_move === "W" ? " ◀" : "") +
          "   Black " + clockText(clocks.B) + (view.to_move === "B" ? " ◀" : "");
      }
    }

    function games() {
      const rows = data.games.map((game) => el("tr", { "data-key": game.key, "data-status": game.status },
        el("td", {}, el("a", { href: "/tournament/games/" + encodeURIComponent(game.key), text: game.key })),
        el("td", { text: game.white }), el("td", { text: game.black }),
        el("td", { text: game.status === "finished" ? game.result : game.status })));
      $("games").replaceChildren(el("tr", {}, ...["game", "White", "Black", "result"].map((h) => el("th", { text: h }))), ...rows);
    }

    follow("/api/tournament/events", (next) => {
      data = next;
      offset = (data.now || Date.now() / 1000) - Date.now() / 1000;
      $("waiting").textContent = data.waiting || "";
      const counts = data.counts || {};
      $("counts").textContent = data.counts ? counts.text : "";  // (the server's words: a match says its own)
      standings(); crosstable(); ticking = live(); games();
    });
    setInterval(() => tick(ticking), 250);
  }

  // -- an agent's page -----------------------------------------------------------
  function agentPage(name) {
    const $ = (id) => document.getElementById(id);
    follow("/api/tournament/agents/" + encodeURIComponent(name) + "/events", (data) => {
      const line = data.line;
      $("summary").textContent = line ? "Rank " + line.rank + " · " + line.points + " points from " + line.games +
        " games · " + line.wins + " won, " + line.draws + " drawn, " + line.losses + " lost" +
        (line.elo_text ? " · Elo " + line.elo_text : "") : "";  // (a match's: its Elo over the other, from the pairs)
      $("how").textContent = data.how;
      $("games").replaceChildren(el("tr", {}, ...["game", "White", "Black", "result"].map((h) => el("th", { text: h }))),
        ...data.games.map((g) => el("tr", {},
          el("td", {}, el("a", { href: "/tournament/games/" + encodeURIComponent(g.key), text: g.key })),
          el("td", { text: g.white }), el("td", { text: g.black }), el("td", { text: g.result }))));
      $("forfeits-title").textContent = "Forfeits (" + data.forfeits.length + ")";
      $("forfeits").replaceChildren(...data.forfeits.map((f) => el("div", { class: "panel forfeit" },
        el("h3", {}, el("a", { href: "/tournament/games/" + encodeURIComponent(f.key), text: f.key }), " " + f.result),
        el("p", { text: f.detail }),
        ...(data.with_logs ? [
          el("p", { class: "muted", text: "The end of its stderr (" + f.stderr_length + " characters kept):" }),
          el("pre", { class: "stderr", text: f.stderr_tail || "(nothing)" })] : []))));
      $("logs-note").hidden = data.with_logs || !data.forfeits.length;
    });
  }

  // -- the play form ----------------------------------------------------------------
  function playPage() {
    const form = document.getElementById("play");
    const modeFields = () => {
      const mode = form.elements.mode.value;
      for (const node of form.querySelectorAll("[data-modes]")) node.hidden = !node.dataset.modes.split(" ").includes(mode);
    };
    for (const radio of form.elements.mode) radio.addEventListener("change", modeFields);
    modeFields();
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = Object.fromEntries(new FormData(form).entries());
      document.getElementById("error").textContent = "";
      try {
        const created = await post("/api/games", body);
        location.href = created.url;
      } catch (error) {
        document.getElementById("error").textContent = error.message;
      }
    });
  }

  return { setupChrome, gamePage, tournamentPage, agentPage, playPage, drawBoard };
})();

document.addEventListener("DOMContentLoaded", Arena.setupChrome);
