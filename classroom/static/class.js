// The class server's pages.  Each page comes whole from the server; this script only refreshes it
// (on each message of /api/events it fetches the page again and swaps in its data-refresh parts),
// sends the upload form through the JSON API and fills that form from a starter.
"use strict";

const ClassPages = (() => {
  let fetching = false, again = false;
  let afterRefresh = () => {};  // what a page does once its parts are fresh (the upload form follows its version)

  // Fetch this page again and put its data-refresh parts in place; open <details> stay open.
  async function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    try {
      const response = await fetch(location.pathname, { cache: "no-store" });
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
      for (const part of document.querySelectorAll("[data-refresh][id]")) {
        const next = fresh.getElementById(part.id);
        if (!next) continue;
        // a form being filled in (the instructor's reason for a verdict) is not wiped: that part waits
        const typing = document.activeElement;
        if (typing && part.contains(typing) && typing.matches("input, textarea, select")) continue;
        const open = new Set([...part.querySelectorAll("details[open][id]")].map((d) => d.id));
        const closed = new Set([...part.querySelectorAll("details[id]:not([open])")].map((d) => d.id));
        part.innerHTML = next.innerHTML;
        for (const details of part.querySelectorAll("details[id]")) {
          if (open.has(details.id)) details.open = true;
          if (closed.has(details.id)) details.open = false;
        }
      }
      afterRefresh();
    } finally {
      fetching = false;
      if (again) { again = false; refresh(); }
    }
  }

  // The server says when something changed (capped streams: the browser reconnects when one ends).
  function refreshing() {
    const source = new EventSource("/api/events");
    let first = true;
    source.onmessage = () => { if (first) { first = false; return; } refresh(); };  // the first is the page itself
    setInterval(refresh, 60000);  // the standings move with everybody's games, not only one's own
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
        await refresh();
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

  return { refresh, refreshing, studentPage, dashboard };
})();
