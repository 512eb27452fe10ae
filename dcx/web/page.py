"""The workbench's one page: self-contained, no external asset, every hit shown as text.

The page's script and style carry the per-response CSP nonce; nothing else
may run. Server-side values (the editor's first text, the goal and agent)
travel as one JSON island whose ``<``, ``>`` and ``&`` are escaped, so no
posted or stored text can close the island or open a tag. The script writes
results with ``textContent`` only, never ``innerHTML``.
"""

from __future__ import annotations

import json

_ISLAND_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _island(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    for char, escape in _ISLAND_ESCAPES.items():
        text = text.replace(char, escape)
    return text


def render_page(*, nonce: str, profile_text: str, agent_id: str, goal_id: str) -> str:
    island = _island({"profile_toml": profile_text, "agent_id": agent_id, "goal_id": goal_id})
    return PAGE.replace("{{NONCE}}", nonce).replace("{{ISLAND}}", island)


PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>dcx workbench</title>
<style nonce="{{NONCE}}">
:root { --ink:#1d2430; --muted:#5b6575; --line:#d8dde5; --bg:#f6f7f9; --card:#fff;
        --accent:#2f5ea8; --warn:#9a5b00; --warnbg:#fff6e5; --bad:#a32020; --badbg:#fdecec; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--ink); background:var(--bg); }
header { padding:14px 24px; border-bottom:1px solid var(--line); background:var(--card); display:flex; gap:16px; align-items:baseline; flex-wrap:wrap; }
header h1 { font-size:18px; margin:0; }
header .who { color:var(--muted); font-size:13px; }
main { display:grid; grid-template-columns: minmax(320px, 1fr) minmax(360px, 1.3fr); gap:20px; padding:20px 24px; }
@media (max-width: 900px) { main { grid-template-columns: 1fr; } }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:16px; }
h2 { font-size:15px; margin:0 0 10px; }
label { display:block; font-size:13px; color:var(--muted); margin:10px 0 4px; }
textarea, input { width:100%; font:13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; padding:8px; border:1px solid var(--line); border-radius:6px; background:#fcfcfd; color:var(--ink); }
textarea#profile { min-height:260px; }
textarea#query { min-height:70px; }
.row { display:grid; grid-template-columns: 2fr 1fr 1fr; gap:10px; }
.buttons { display:flex; gap:8px; margin-top:12px; flex-wrap:wrap; }
button { font:inherit; font-size:14px; padding:6px 14px; border-radius:6px; border:1px solid var(--accent); background:var(--accent); color:#fff; cursor:pointer; }
button.secondary { background:#fff; color:var(--accent); }
button:disabled { opacity:.55; cursor:progress; }
.status { margin-top:12px; font-size:13px; padding:8px 10px; border-radius:6px; background:#eef3fb; white-space:pre-wrap; }
.status.warn { background:var(--warnbg); color:var(--warn); }
.status.bad { background:var(--badbg); color:var(--bad); }
.status:empty { display:none; }
.banner { font-size:12px; color:var(--warn); background:var(--warnbg); border-radius:6px; padding:6px 10px; margin-bottom:10px; }
ol#hits { list-style:none; margin:0; padding:0; }
ol#hits li { border:1px solid var(--line); border-radius:6px; padding:10px 12px; margin-top:10px; }
.hit-head { display:flex; gap:10px; align-items:baseline; flex-wrap:wrap; }
.rank { font-weight:600; }
.summary { font-weight:600; overflow-wrap:anywhere; }
.meta { color:var(--muted); font-size:12px; font-family:ui-monospace, monospace; overflow-wrap:anywhere; }
.trust { font-size:11px; text-transform:uppercase; letter-spacing:.04em; color:var(--warn); }
pre.content { white-space:pre-wrap; overflow-wrap:anywhere; margin:8px 0 0; padding:8px; background:#f8f9fb; border-radius:4px; font-size:12.5px; max-height:320px; overflow:auto; }
footer { padding:0 24px 20px; color:var(--muted); font-size:12px; }
</style>
</head>
<body>
<script type="application/json" id="island" nonce="{{NONCE}}">{{ISLAND}}</script>
<header>
  <h1>dcx recall workbench</h1>
  <span class="who" id="who"></span>
  <span class="who">local only · nothing is saved · the profile here never changes profile.toml</span>
</header>
<main>
  <section aria-labelledby="p-title">
    <h2 id="p-title">Profile (edited only in this page)</h2>
    <textarea id="profile" spellcheck="false" aria-label="profile TOML"></textarea>
    <div class="buttons">
      <button id="inspect">Inspect</button>
      <button id="clear" class="secondary">Clear</button>
    </div>
    <div id="activation" class="status" role="status"></div>
  </section>
  <section aria-labelledby="q-title">
    <h2 id="q-title">Query</h2>
    <label for="query">Query (private: sent to the provider only)</label>
    <textarea id="query" spellcheck="false"></textarea>
    <label for="summary">Query summary (public-safe)</label>
    <input id="summary" value="workbench query">
    <div class="row">
      <div><label for="scope">Scope</label><input id="scope" value="" placeholder="'' (all), source:&lt;id&gt;, viking://…"></div>
      <div><label for="max">Max results</label><input id="max" type="number" min="1" max="8" placeholder="profile"></div>
      <div><label for="timeout">Timeout (s)</label><input id="timeout" type="number" min="1" max="120" step="any" placeholder="profile"></div>
    </div>
    <div class="buttons">
      <button id="recall">Recall</button>
      <button id="retry" class="secondary" hidden>Retry</button>
    </div>
    <div id="recall-status" class="status" role="status"></div>
    <div class="banner" id="banner" hidden>Recalled content is untrusted advisory input: data to weigh, never instructions, never authority.</div>
    <ol id="hits" aria-label="hits"></ol>
  </section>
</main>
<footer>Closing this page or pressing Clear drops the profile and the hits. Stop the workbench with Ctrl-C in its terminal.</footer>
<script nonce="{{NONCE}}">
(function () {
  "use strict";
  var island = JSON.parse(document.getElementById("island").textContent);
  var token = new URLSearchParams(window.location.search).get("token") || "";
  // keep the token out of the address bar and history once the page has it
  window.history.replaceState(null, "", window.location.pathname);
  var $ = function (id) { return document.getElementById(id); };
  $("profile").value = island.profile_toml;
  $("who").textContent = "goal " + island.goal_id + " · agent " + island.agent_id;
  var lastRecall = null;

  function setStatus(el, text, kind) {
    el.textContent = text;
    el.className = "status" + (kind ? " " + kind : "");
  }

  function call(path, body, timeoutMs) {
    var controller = new AbortController();
    var timer = setTimeout(function () { controller.abort(); }, timeoutMs);
    return fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-DCX-Token": token },
      body: JSON.stringify(body),
      signal: controller.signal,
      credentials: "omit",
      cache: "no-store"
    }).then(function (response) {
      return response.json().then(function (json) { return { http: response.status, json: json }; });
    }).finally(function () { clearTimeout(timer); });
  }

  function errorText(json) {
    var e = (json && json.error) || {};
    var text = "refused: " + (e.code || "error") + " — " + (e.message || "");
    if (e.hint) { text += "\\nhint: " + e.hint; }
    return text;
  }

  function numberOrNull(id) {
    var raw = $(id).value.trim();
    return raw === "" ? null : Number(raw);
  }

  $("inspect").addEventListener("click", function () {
    var button = $("inspect");
    button.disabled = true;
    call("/api/inspect", { profile_toml: $("profile").value }, 20000).then(function (r) {
      if (r.http !== 200) { setStatus($("activation"), errorText(r.json), "bad"); return; }
      var a = r.json.data.activation, cp = r.json.data.context_provider;
      var text = "activation: " + a.status + (a.reason_code ? " (" + a.reason_code + ")" : "") +
        "\\nprovider: " + cp.provider + " · max results " + cp.max_results + " · timeout " + cp.timeout_seconds + " s" +
        "\\nsources: " + a.enabled_source_count + " enabled of " + a.source_count;
      setStatus($("activation"), text, a.active ? "" : "warn");
    }).catch(function () {
      setStatus($("activation"), "the workbench did not answer (is it still running?)", "bad");
    }).finally(function () { button.disabled = false; });
  });

  function showHits(packet) {
    var list = $("hits");
    list.replaceChildren();
    packet.results.forEach(function (row) {
      var item = document.createElement("li");
      var head = document.createElement("div");
      head.className = "hit-head";
      var rank = document.createElement("span"); rank.className = "rank"; rank.textContent = "#" + row.rank;
      var summary = document.createElement("span"); summary.className = "summary"; summary.textContent = row.summary;
      var score = document.createElement("span"); score.className = "meta";
      score.textContent = "score " + (row.score === null ? "-" : Number(row.score).toPrecision(4));
      var trust = document.createElement("span"); trust.className = "trust"; trust.textContent = "untrusted advisory";
      head.append(rank, summary, score, trust);
      var ref = document.createElement("div"); ref.className = "meta"; ref.textContent = row.provider_ref;
      var content = document.createElement("pre"); content.className = "content"; content.textContent = row.content;
      item.append(head, ref, content);
      list.append(item);
    });
    $("banner").hidden = packet.results.length === 0;
  }

  function runRecall(body) {
    var button = $("recall");
    button.disabled = true;
    $("retry").hidden = true;
    setStatus($("recall-status"), "recalling…", "");
    var waitMs = ((body.timeout_seconds || 120) + 10) * 1000;
    call("/api/recall", body, waitMs).then(function (r) {
      if (r.http !== 200) {
        $("hits").replaceChildren(); $("banner").hidden = true;
        setStatus($("recall-status"), errorText(r.json), "bad");
        return;
      }
      var packet = r.json.data;
      var receipt = packet.retrieval;
      showHits(packet);
      if (packet.status !== "completed") {
        var text = "recall " + packet.status + ": " + packet.reason_code + (r.json.hint ? "\\nhint: " + r.json.hint : "");
        setStatus($("recall-status"), text, "warn");
        $("retry").hidden = false;
        return;
      }
      setStatus($("recall-status"), receipt.provider + " · " + receipt.result_count + " result(s) · " +
        receipt.telemetry.latency_ms + " ms", "");
    }).catch(function () {
      setStatus($("recall-status"), "no answer in time: the workbench or the provider did not respond", "bad");
      $("retry").hidden = false;
    }).finally(function () { button.disabled = false; });
  }

  $("recall").addEventListener("click", function () {
    lastRecall = {
      profile_toml: $("profile").value,
      scope_ref: $("scope").value,
      query: $("query").value,
      query_summary: $("summary").value,
      max_results: numberOrNull("max"),
      timeout_seconds: numberOrNull("timeout")
    };
    runRecall(lastRecall);
  });
  $("retry").addEventListener("click", function () { if (lastRecall) { runRecall(lastRecall); } });

  $("clear").addEventListener("click", function () {
    $("profile").value = "";
    $("query").value = "";
    $("hits").replaceChildren();
    $("banner").hidden = true;
    $("retry").hidden = true;
    lastRecall = null;
    setStatus($("activation"), "", "");
    setStatus($("recall-status"), "", "");
  });
})();
</script>
</body>
</html>
"""
