// The class server's pages.  Each page comes whole from the server; this script only keeps it fresh:
// the parts that change while a page is open ([data-part], each with its mark, classroom/live.py) are
// fetched again alone (/parts?names=...) when a message of /api/events says their mark moved; the
// dashboard, which has no such parts, is fetched whole at its stream's messages.  It also sends the
// upload form through the JSON API and fills that form from a starter.
"use strict";

const ClassPages = (() => {
  let fetching = false, again = false;
  let afterRefresh = () => {};  // what a page does once its parts are fresh (the upload form follows its version)
  const wanted = new Set();  // the parts whose mark moved, to be fetched
  let timer = null, fetchingParts = false;

  // Put a fresh part's content in place of the page's; open <details> stay open, a form being filled in
  // (the instructor's reason for a verdict) is not wiped: that part waits (false).
  function swap(part, next) {
    const typing = document.activeElement;
    if (typing && part.contains(typing) && typing.matches("input, textarea, select")) return false;
    const open = new Set([...part.querySelectorAll("details[open][id]")].map((d) => d.id));
    const closed = new Set([...part.querySelectorAll("details[id]:not([open])")].map((d) => d.id));
    part.innerHTML = next.innerHTML;
    if (next.dataset.mark !== undefined) part.dataset.mark = next.dataset.mark;
    for (const details of part.querySelectorAll("details[id]")) {
      if (open.has(details.id)) details.open = true;
      if (closed.has(details.id)) details.open = false;
    }
    return true;
  }

  // Fetch this page again and put its data-refresh parts in place (the dashboard's way).
  async function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    try {
      const response = await fetch(location.pathname, { cache: "no-store" });
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
      for (const part of document.querySelectorAll("[data-refresh][id]")) {
        const next = fresh.getElementById(part.id);
        if (next) swap(part, next);
      }
      afterRefresh();
    } finally {
      fetching = false;
      if (again) { again = false; refresh(); }
    }
  }

  const partsOnPage = () => [...document.querySelectorAll("[data-part][data-mark]")];

  // The marks a stream sent: the parts this page shows otherwise are fetched, after a short wait drawn by
  // each page (a burst of messages is one fetch; a class of pages does not ask in the same moment).
  function compare(marks) {
    for (const part of partsOnPage()) {
      const mark = marks[part.dataset.part];
      if (mark !== undefined && mark !== part.dataset.mark) wanted.add(part.dataset.part);
    }
    if (wanted.size && timer === null && !fetchingParts) timer = setTimeout(fetchParts, 200 + Math.random() * 1800);
  }

  // Fetch the wanted parts (and ``also``) alone, and put them in place.
  async function fetchParts(also = []) {
    clearTimeout(timer);
    timer = null;
    for (const name of also) wanted.add(name);
    if (fetchingParts || !wanted.size) return;
    const names = [...wanted];
    wanted.clear();
    fetchingParts = true;
    try {
      const response = await fetch("/parts?names=" + names.join(","), { cache: "no-store" });
      if (!response.ok) throw new Error(response.statusText);
      const holder = document.createElement("template");
      for (const [name, html] of Object.entries((await response.json()).parts)) {
        holder.innerHTML = html;
        const part = document.querySelector(`[data-part="${name}"]`);
        const next = holder.content.firstElementChild;
        if (part && next && !swap(part, next)) wanted.add(name);
      }
      afterRefresh();
    } catch (error) {
      for (const name of names) wanted.add(name);  // asked again at the next message, or by the minute's poll
    } finally {
      fetchingParts = false;
      if (wanted.size && timer === null) timer = setTimeout(fetchParts, 2000 + Math.random() * 3000);
    }
  }

  // The server says what changed (capped streams: the browser reconnects when one ends, and its first
  // message then says what moved meanwhile).
  function refreshing() {
    const names = partsOnPage().map((part) => part.dataset.part);
    const source = new EventSource("/api/events" + (names.length ? "?parts=" + names.join(",") : ""));
    let first = true;
    source.onmessage = (event) => {
      let data = {};
      try { data = JSON.parse(event.data); } catch (error) { /* a message of another server: ask the page */ }
      if (names.length && data.parts) { compare(data.parts); return; }
      if (first) { first = false; return; }  // a page without parts: the first message is the page as it is
      refresh();
    };
    // No stream (refused: the class's streams are all taken; or the server is gone): ask once a minute.
    let polling = null;
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED || polling !== null) return;
      polling = setInterval(() => (names.length ? fetchParts(names) : refresh()), 50000 + Math.random() * 20000);
    };
  }

  function studentPage() {
    refreshing();
    const form = document.getElementById("send");
    const $ = (id) => document.getElementById(id);
    let starters = null;
    let sent = null;  // the version this form sent, {id, number}, until its card comes
    // The form's line follows the version it sent: "being built and checked" only while it is, then its verdict.
    afterRefresh = () => {
      const block = sent && document.getElementById("version-" + sent.id);
      if (!block || block.dataset.status === "checking") return;
      const reason = (block.querySelector(".reason") || {}).textContent || "";
      const result = $("send-result");
      result.dataset.status = block.dataset.status;
      if (block.dataset.status === "rejected") {
        result.textContent = "";
        $("send-error").textContent = "Version " + sent.number + " was rejected" + (reason ? ": " + reason : "")
          + ". Its card below says why; the version you had playing plays on.";
      } else {
        result.textContent = "Version " + sent.number + " is admitted" + (reason ? " (" + reason + ")" : "")
          + ": it plays the ladder now.";
      }
      sent = null;
    };
    $("starter").addEventListener("change", async () => {
      const index = $("starter").value;
      if (index === "") return;
      if (starters === null) starters = (await (await fetch("/api/starters")).json()).starters;
      const chosen = starters[Number(index)];
      $("command").value = chosen.command;
      $("build").value = chosen.build;
      const [name, text] = Object.entries(chosen.files)[0];
      $("paste_name").value = name;
      $("paste").value = text;
    });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      $("send-error").textContent = "";
      $("send-result").textContent = "Sending…";
      $("send-result").dataset.status = "sending";
      sent = null;
      $("send-button").disabled = true;
      try {
        const response = await fetch("/api/submissions", { method: "POST", body: new FormData(form) });
        const data = await response.json().catch(() => ({ error: response.statusText }));
        if (!response.ok) throw new Error(data.error || response.statusText);
        // (data.version: the student's number of it; data.id: the page's and the API's key)
        $("send-result").textContent = data.new
          ? "Version " + data.version + " (" + data.fingerprint.slice(0, 12) + ") is being built and checked."
          : "The same program as version " + data.version + " (the same files, build line and command words): "
            + ({ admitted: "it plays on, with its games.", rejected: "it was rejected, as its card says." }[data.status]
               || "it is being built and checked.");
        $("send-result").dataset.status = data.status;
        if (data.status === "checking") sent = { id: data.id, number: data.version };
        $("files").value = "";
        await fetchParts(["versions"]);
        const block = document.getElementById("version-" + data.id);
        if (block) block.open = true;
      } catch (error) {
        $("send-result").textContent = "";
        $("send-result").dataset.status = "refused";
        $("send-error").textContent = error.message;
      } finally {
        $("send-button").disabled = false;
      }
    });
  }

  function dashboard() {
    refreshing();
    // The final runs in its own process: while the page says it runs, ask how it goes.
    setInterval(async () => {
      const button = document.getElementById("final-button");
      if (!button || !button.disabled) return;
      const state = await (await fetch("/api/final")).json().catch(() => ({}));
      if (!state.running) refresh();
    }, 3000);
    document.addEventListener("submit", async (event) => {
      if (event.target.id !== "final-form") return;
      event.preventDefault();
      const response = await fetch("/api/final", { method: "POST" });
      if (!response.ok && response.status !== 409) {
        const data = await response.json().catch(() => ({}));
        alert(data.error || response.statusText);
      }
      refresh();
    });
  }

  return { refresh, fetchParts, refreshing, studentPage, dashboard };
})();
