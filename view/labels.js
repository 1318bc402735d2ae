// agenteval viewer: labels. On a run's page, each criterion a judge
// decided gets agree and disagree buttons and a note; the top of the page
// says how many judged criteria carry a label and how many of those agree
// with the judge. It adds to what the report's own script draws, and
// finds the criteria by the score names and assertion texts it shows.
// Every piece of content reaches the page as text, never as markup.
(function () {
  "use strict";
  var factsEl = document.getElementById("agenteval-labels");
  var app = document.getElementById("app");
  if (!factsEl || !app || typeof fetch !== "function") return;
  var facts = JSON.parse(factsEl.textContent);
  var runID = facts.run_id;
  var token = facts.token || "";
  var why = facts.read_only || "";
  var US = "\u001f";

  function el(tag, cls) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      e.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  function pct(n, d) { return d ? Math.round(100 * n / d) + "%" : "–"; }
  function other(v) { return v === "pass" ? "fail" : "pass"; }
  function when(iso) { return iso ? String(iso).slice(0, 16).replace("T", " ") + " UTC" : ""; }
  function api(method, body) {
    return fetch("/api/labels", {
      method: method,
      headers: { "Content-Type": "application/json", "X-Agenteval-Token": token },
      body: JSON.stringify(body),
      credentials: "same-origin",
      cache: "no-store"
    }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw new Error(j && j.error ? j.error : "HTTP " + r.status);
        return j;
      }, function () { throw new Error("HTTP " + r.status); });
    });
  }

  // ---- the run's totals, at the top -------------------------------------------
  var totals = null, totalsErr = "";
  var topEl = el("span", "lbl-summary");
  topEl.setAttribute("role", "status");
  function drawTotals() {
    while (topEl.firstChild) topEl.removeChild(topEl.firstChild);
    if (totalsErr) { topEl.appendChild(el("span", "lbl-err", "labels: " + totalsErr)); return; }
    if (!totals) return;
    var t = totals;
    if (!t.judged) { topEl.appendChild(document.createTextNode("no judged criteria to label")); return; }
    topEl.appendChild(el("span", "lbl-k", "labels "));
    topEl.appendChild(el("b", "lbl-count", t.labelled + " of " + t.judged));
    topEl.appendChild(document.createTextNode(" judged criteria · "));
    topEl.appendChild(el("b", "lbl-agree", t.agree + " agree"));
    topEl.appendChild(document.createTextNode(" with the judge (" + pct(t.agree, t.labelled) + ")"));
    if (t.false_pass) topEl.appendChild(el("span", "lbl-fp", " · " + t.false_pass + " passed by the judge, failed by you"));
    if (why) topEl.appendChild(el("span", "lbl-ro", " · read-only: " + why));
  }
  function loadTotals() {
    fetch("/api/runs/" + encodeURIComponent(runID) + "/labels", { cache: "no-store" }).then(function (r) {
      return r.json().then(function (j) { if (!r.ok) throw new Error(j.error || "HTTP " + r.status); return j; });
    }).then(function (j) { totals = j.summary; totalsErr = ""; drawTotals(); }, function (err) { totalsErr = String(err.message || err); drawTotals(); });
  }

  // ---- the open test --------------------------------------------------------------
  // The report keeps the open test in the address (#t=suite US [target US] id).
  function openTest() {
    if (location.hash.indexOf("#t=") !== 0) return null;
    var k;
    try { k = decodeURIComponent(location.hash.slice(3)); } catch (e) { return null; }
    var p = k.split(US);
    if (p.length === 3) return { key: k, suite: p[0], target: p[1], test: p[2] };
    if (p.length === 2) return { key: k, suite: p[0], target: "", test: p[1] };
    return null;
  }
  // The trial shown: the report marks its button; a test without trials
  // is trial 0.
  function shownTrial(detail) {
    var b = detail.querySelector(".trials button.on");
    if (!b) return 0;
    var m = /trial\s+(\d+)/.exec(b.textContent);
    return m ? +m[1] : 0;
  }
  var byTest = {}; // test key -> promise of its criteria
  function criteriaOf(t) {
    if (!byTest[t.key]) {
      var q = "?suite=" + encodeURIComponent(t.suite) + "&test=" + encodeURIComponent(t.test) + "&target=" + encodeURIComponent(t.target);
      byTest[t.key] = fetch("/api/runs/" + encodeURIComponent(runID) + "/labels" + q, { cache: "no-store" }).then(function (r) {
        return r.json().then(function (j) { if (!r.ok) throw new Error(j.error || "HTTP " + r.status); return j.criteria || []; });
      });
      byTest[t.key].catch(function () { delete byTest[t.key]; });
    }
    return byTest[t.key];
  }

  // A check's score path: the names of the checks it sits in, from the
  // top, under its turn's composite score (turn-N) when it is in a turn.
  function titleOf(check) {
    var t = check.querySelector(":scope > div > .title");
    return t && t.firstChild && t.firstChild.nodeType === 3 ? t.firstChild.nodeValue : null;
  }
  function pathOf(check, detail) {
    var names = [];
    for (var n = check; n && n !== detail; n = n.parentElement) {
      if (n.classList && n.classList.contains("check")) {
        var name = titleOf(n);
        if (name === null) return null;
        names.unshift(name);
      }
    }
    var turn = check.closest(".turn[data-turn]");
    if (turn && names[0] !== "turn-" + turn.getAttribute("data-turn")) names.unshift("turn-" + turn.getAttribute("data-turn"));
    return names.join("/");
  }

  var pass = 0;
  function decorate() {
    var detail = document.querySelector("#app .detail");
    var t = openTest();
    if (!detail || !t) return;
    var head = detail.querySelector(".test-head h2");
    if (!head || head.textContent !== t.test) return; // another test is drawn, or none yet
    var fresh = Array.prototype.filter.call(detail.querySelectorAll(".check"), function (c) { return !c.hasAttribute("data-lbl"); });
    if (!fresh.length) return;
    fresh.forEach(function (c) { c.setAttribute("data-lbl", ""); });
    var trial = shownTrial(detail);
    var seq = ++pass;
    criteriaOf(t).then(function (list) {
      if (seq !== pass || !document.body.contains(fresh[0])) return; // the page moved on
      var here = list.filter(function (c) { return c.trial === trial || (!c.trial && !trial); });
      fresh.forEach(function (check) {
        if (!document.body.contains(check)) return;
        var path = pathOf(check, detail);
        if (path === null) return;
        var asserts = check.querySelectorAll(":scope > div > .sub > .assert");
        here.forEach(function (c) {
          if (c.score !== path) return;
          var a = asserts[c.index];
          var text = a && a.children[1] ? a.children[1].textContent : null;
          if (text !== c.criterion) return;
          a.parentNode.insertBefore(row(t, c), a.nextSibling);
        });
      });
      drawTestTotals(detail, here);
    }, function (err) {
      var box = el("div", "lbl-err", "Labels could not be read: " + (err.message || err));
      detail.appendChild(box);
    });
  }

  function drawTestTotals(detail, here) {
    var facts = detail.querySelector(".test-head .facts");
    if (!facts || !here.length) return;
    var s = facts.querySelector(".lbl-test");
    if (!s) { s = el("span", "lbl-test"); facts.appendChild(s); }
    var n = here.filter(function (c) { return c.label; }).length;
    s.textContent = "labelled " + n + " of " + here.length + " judged";
  }

  // row is the labelling line under a judged criterion.
  function row(t, c) {
    var r = el("div", "lbl");
    r.setAttribute("data-score", c.score);
    var choice = c.label ? (c.label.human === c.judge ? "agree" : "disagree") : "";
    var agree = el("button", "lbl-agree", "agree");
    var disagree = el("button", "lbl-disagree", "disagree");
    var note = el("input", "lbl-note");
    var save = el("button", "lbl-save", "save");
    var clear = el("button", "lbl-clear", "×");
    var status = el("span", "lbl-status");
    [agree, disagree, save, clear].forEach(function (b) { b.type = "button"; });
    agree.title = "The judge was right: " + (c.judge === "pass" ? "this holds" : "this does not hold");
    disagree.title = "The judge was wrong: " + (c.judge === "pass" ? "this does not hold" : "this holds");
    clear.title = "Remove the label";
    clear.setAttribute("aria-label", "remove the label");
    note.type = "text";
    note.placeholder = "note (optional)";
    note.setAttribute("aria-label", "note");
    note.maxLength = 4000;
    note.value = c.label ? c.label.note || "" : "";
    var saved = { choice: choice, note: note.value };
    function draw(msg, bad) {
      r.className = "lbl" + (choice ? " " + choice : "");
      agree.className = "lbl-agree" + (choice === "agree" ? " on" : "");
      disagree.className = "lbl-disagree" + (choice === "disagree" ? " on" : "");
      agree.setAttribute("aria-pressed", choice === "agree");
      disagree.setAttribute("aria-pressed", choice === "disagree");
      save.disabled = !token || !choice || (choice === saved.choice && note.value === saved.note);
      clear.style.display = token && saved.choice ? "" : "none";
      status.className = "lbl-status" + (bad ? " bad" : "");
      if (msg !== undefined) { status.textContent = msg; return; }
      if (!saved.choice) { status.textContent = token ? "" : "not labelled"; return; }
      var l = c.label || {};
      status.textContent = "labelled" + (l.labeller ? " by " + l.labeller : "") + (l.time ? ", " + when(l.time) : "");
    }
    function key() { return { run_id: runID, suite: c.suite, test_id: c.test_id, target: c.target, trial: c.trial || 0, score: c.score, criterion: c.criterion }; }
    function send(want) {
      if (!want) { draw("pick agree or disagree first", true); return; }
      var body = key();
      body.human = want === "agree" ? c.judge : other(c.judge);
      body.note = note.value;
      choice = want;
      draw("saving…");
      api("POST", body).then(function (j) {
        c.label = j.criterion.label;
        saved = { choice: want, note: body.note };
        totals = j.summary; totalsErr = ""; drawTotals();
        draw();
        refreshTestTotals();
      }, function (err) { choice = saved.choice; draw("not saved: " + (err.message || err), true); });
    }
    function refreshTestTotals() {
      var tk = openTest();
      if (!tk || !byTest[tk.key]) return;
      byTest[tk.key].then(function (list) {
        var d = document.querySelector("#app .detail");
        if (d) drawTestTotals(d, list.filter(function (x) { return x.trial === shownTrial(d) || (!x.trial && !shownTrial(d)); }));
      });
    }
    agree.addEventListener("click", function () { send("agree"); });
    disagree.addEventListener("click", function () { send("disagree"); });
    save.addEventListener("click", function () { send(choice); });
    note.addEventListener("input", function () { draw(); });
    note.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { ev.preventDefault(); send(choice); } });
    clear.addEventListener("click", function () {
      draw("removing…");
      api("DELETE", key()).then(function (j) {
        c.label = null;
        choice = "";
        note.value = "";
        saved = { choice: "", note: "" };
        totals = j.summary; totalsErr = ""; drawTotals();
        draw();
        refreshTestTotals();
      }, function (err) { draw("not removed: " + (err.message || err), true); });
    });
    if (!token) {
      [agree, disagree, save, note].forEach(function (x) { x.disabled = true; x.title = "read-only: " + why; });
    }
    r.appendChild(el("span", "lbl-q", "with the judge:"));
    r.appendChild(agree);
    r.appendChild(disagree);
    r.appendChild(note);
    r.appendChild(save);
    r.appendChild(clear);
    r.appendChild(status);
    draw();
    return r;
  }

  // The report draws and redraws as a person moves around: the totals go
  // back at the top when it is redrawn, and each test drawn is decorated.
  var queued = false;
  function ensure() {
    queued = false;
    var top = document.querySelector("#app header.top");
    if (top && topEl.parentNode !== top) top.appendChild(topEl);
    decorate();
  }
  new MutationObserver(function () {
    if (queued) return;
    queued = true;
    setTimeout(ensure, 0);
  }).observe(app, { childList: true, subtree: true });
  loadTotals();
  ensure();
})();
