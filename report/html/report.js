// agenteval report: renders the results embedded in this page. Plain
// JavaScript, no framework. Every piece of result content reaches the page
// as text (textContent, createTextNode), never as markup.
(function () {
  "use strict";
  var ROW = 46; // px; matches .row in the CSS
  var startedAt = performance.now();
  var app = document.getElementById("app");
  // The index comes as JSON, or (in large reports) gzipped like the data.
  function inflate(b64) {
    var bin = atob(b64.replace(/\s+/g, ""));
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
  }
  var plain = document.getElementById("meta");
  if (plain) {
    start(JSON.parse(plain.textContent));
  } else {
    inflate(document.getElementById("meta-z").textContent).then(function (t) { start(JSON.parse(t)); }, function (err) {
      app.textContent = "This report could not be read: " + err + (typeof DecompressionStream === "undefined" ? ". This browser cannot inflate the report's data; use a current Chrome, Edge, Firefox or Safari." : "");
    });
  }

  function start(meta) {

    // ---- small DOM helpers -------------------------------------------------
    function el(tag, cls) {
      var e = document.createElement(tag);
      if (cls) e.className = cls;
      for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
      return e;
    }
    function add(parent, c) {
      if (c === null || c === undefined || c === false) return;
      if (Array.isArray(c)) { c.forEach(function (x) { add(parent, x); }); return; }
      parent.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    }
    function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
    function badge(v) { v = v || "none"; return el("span", "badge " + v, v === "error" ? "error" : v); }
    function fmtScore(s) { return typeof s === "number" ? s.toFixed(2) : "–"; }
    function fmtInt(n) { return (n || 0).toLocaleString("en-US"); }
    function fmtCost(c) { return c === null || c === undefined ? "unknown" : "$" + (c < 0.01 && c > 0 ? c.toFixed(4) : c.toFixed(2)); }
    function fmtMS(ms) {
      if (!ms && ms !== 0) return "–";
      if (ms < 1000) return Math.round(ms) + " ms";
      if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
      return Math.floor(ms / 60000) + " m " + Math.round((ms % 60000) / 1000) + " s";
    }
    // Times show in UTC, the same for every reader of a shared report.
    function when(iso) { return String(iso).slice(0, 16).replace("T", " ") + " UTC"; }
    function pct(x) { return (100 * x).toFixed(1) + "%"; }
    function mark(v) { return v === "pass" ? "✓" : v === "fail" ? "✗" : v === "error" ? "!" : "–"; }
    // A test's key: its suite, its target (a run of several targets holds
    // each test once per target) and its id, last, so rows can be found
    // by the id they end with.
    function key(suite, id, target) { return (suite || "") + "\u001f" + (target ? target + "\u001f" : "") + id; }

    // ---- the data ------------------------------------------------------------
    // Each run's tests are JSON lines in gzipped, base64 blocks of a few
    // hundred tests. The list draws from a small index; a block is inflated
    // only when one of its tests is opened (or the transcripts are searched),
    // so a large run opens at once.
    function Run(i, m) {
      this.i = i;
      this.header = m.header || {};
      this.summary = m.summary || null;
      this.consistency = m.consistency || null;
      this.index = m.index || [];
      this.order = m.order || []; // the index in the suite's order, when the tests finished in another
      this.size = m.chunk || 200;
      this.blocks = Array.prototype.filter.call(document.querySelectorAll("script.chunk"), function (b) { return b.getAttribute("data-run") === String(i); });
      this.base = this.index.length; // tests in the blocks; later ones came live
      this.cache = {};
      this.over = {}; // tests replaced live
      this.extra = [];
      this.lower = [];
      this.loaded = this.blocks.length === 0;
      this.byKey = {};
      for (var k = 0; k < this.index.length; k++) this.byKey[key(this.index[k].suite, this.index[k].id, this.index[k].tg)] = k;
    }
    Run.prototype.block = function (c) {
      if (!this.cache[c]) this.cache[c] = inflate(this.blocks[c].textContent).then(function (t) { return t.split("\n"); });
      return this.cache[c];
    };
    Run.prototype.line = function (k) {
      if (this.over[k] !== undefined) return Promise.resolve(this.over[k]);
      if (k >= this.base) return Promise.resolve(this.extra[k - this.base]);
      var size = this.size;
      return this.block(Math.floor(k / size)).then(function (ls) { return ls[k % size]; });
    };
    Run.prototype.detail = function (k) { return this.line(k).then(function (l) { return JSON.parse(l); }); };
    // loadAll inflates every block, for searching the transcripts.
    Run.prototype.loadAll = function () {
      var self = this;
      if (this.loading) return this.loading;
      var jobs = this.blocks.map(function (_, c) {
        return self.block(c).then(function (ls) {
          for (var j = 0; j < ls.length; j++) if (self.lower[c * self.size + j] === undefined) self.lower[c * self.size + j] = ls[j].toLowerCase();
        });
      });
      this.loading = Promise.all(jobs).then(function () { self.loaded = true; });
      return this.loading;
    };
    Run.prototype.text = function (k) { return this.lower[k] || ""; };
    Run.prototype.push = function (entry, line) {
      var k = this.byKey[key(entry.suite, entry.id, entry.tg)];
      if (k !== undefined) { // a repeated test replaces its earlier result
        this.index[k] = entry;
        if (k < this.base) this.over[k] = line; else this.extra[k - this.base] = line;
        this.lower[k] = line.toLowerCase();
        return;
      }
      this.byKey[key(entry.suite, entry.id, entry.tg)] = this.index.length;
      this.lower[this.index.length] = line.toLowerCase();
      this.index.push(entry);
      this.extra.push(line);
    };

    var runs = (meta.runs || []).map(function (m, i) { return new Run(i, m); });
    var cmp = meta.compare || null;

    if (meta.mode === "runs") { renderRunsPage(); return; }

    // Items are what the list shows: one per test, or per test of either run
    // when two runs are compared.
    // With several targets, each row names its target (multi).
    var items = [], multi = false;
    function buildItems() {
      items = [];
      var targets = {};
      if (cmp && runs.length === 2) {
        (cmp.tests || []).forEach(function (t) {
          // The base run's result is under its own target's name when
          // two runs of one target each are compared.
          items.push({ key: key(t.suite, t.test_id, t.target), id: t.test_id, suite: t.suite, target: t.target || "", c: t,
            a: runs[0].byKey[key(t.suite, t.test_id, t.base_target || t.target)], b: runs[1].byKey[key(t.suite, t.test_id, t.target)] });
        });
        multi = !!cmp.multi_target;
        return;
      }
      // The list follows the suite's order; tests that came live after the
      // page was made follow it in the order they finished.
      var ks = runs[0].order.slice();
      for (var k = ks.length; k < runs[0].index.length; k++) ks.push(k);
      ks.forEach(function (k) {
        var e = runs[0].index[k];
        targets[e.tg || ""] = true;
        items.push({ key: key(e.suite, e.id, e.tg), id: e.id, suite: e.suite, target: e.tg || "", a: k });
      });
      multi = Object.keys(targets).length > 1;
    }
    function entryOf(it) {
      if (it.b !== undefined && runs[1]) return runs[1].index[it.b];
      return it.a !== undefined ? runs[0].index[it.a] : null;
    }

    // ---- state -----------------------------------------------------------------
    var state = { show: cmp ? "changed" : "all", q: "", tag: "", suite: "", target: "", sel: null };
    var shown = [];

    // ---- page skeleton -------------------------------------------------------
    clear(app);
    var top = el("header", "top");
    var summary = el("section", "summary");
    var main = el("div", "main");
    var list = el("aside", "list");
    var filters = el("div", "filters");
    var rows = el("div", "rows");
    rows.tabIndex = 0;
    var spacer = el("div", "spacer");
    rows.appendChild(spacer);
    var detail = el("section", "detail");
    list.appendChild(filters);
    list.appendChild(rows);
    main.appendChild(list);
    main.appendChild(detail);
    app.appendChild(top);
    app.appendChild(summary);
    app.appendChild(main);

    function renderTop() {
      clear(top);
      var h = runs[0] ? runs[0].header : {};
      var title = (h.suites || []).map(function (s) { return s.name || s.path; }).join(", ") || "results";
      if (meta.home && meta.home.charAt(0) === "/") {
        var a = el("a", "brand", "agenteval");
        a.setAttribute("href", meta.home);
        top.appendChild(a);
      } else {
        top.appendChild(el("span", "brand", "agenteval"));
      }
      top.appendChild(el("h1", null, cmp ? "Compare: " + title : title));
      runs.forEach(function (r, i) {
        var m = el("div", "meta");
        var h = r.header;
        if (runs.length > 1) m.appendChild(el("b", null, i === 0 ? "base" : "new"));
        if (h.run_id) add(m, el("span", null, "run ", el("b", null, h.run_id)));
        if (h.started) add(m, el("span", null, when(h.started)));
        if (h.target) add(m, el("span", null, "target ", el("b", null, h.target)));
        if (h.judge) add(m, el("span", null, "judge ", el("b", null, h.judge)));
        if (h.simulator) add(m, el("span", null, "simulator ", el("b", null, h.simulator)));
        if (h.git && h.git.commit) add(m, el("span", null, "commit ", el("b", null, h.git.commit.slice(0, 10) + (h.git.dirty ? "+dirty" : ""))));
        if (h.agenteval_version) add(m, el("span", null, "agenteval " + h.agenteval_version));
        top.appendChild(m);
      });
      if (meta.live) top.appendChild(el("span", "live" + (liveEnded ? " ended" : ""), liveEnded ? "run finished" : "● live"));
    }

    // Totals are counted from the index, so a live run's grow as it goes.
    function totals(r) {
      var t = { total: 0, pass: 0, fail: 0, error: 0, skip: 0, tok: 0, cost: 0, costKnown: true, ms: 0, used: false };
      r.index.forEach(function (e) {
        t.total++;
        if (e.v === "pass") t.pass++; else if (e.v === "fail") t.fail++; else if (e.v === "error") t.error++; else t.skip++;
        t.tok += e.tok || 0;
        if (e.tok) { t.used = true; if (e.cost === undefined || e.cost === null) t.costKnown = false; else t.cost += e.cost; }
      });
      if (r.summary && r.summary.duration_ms) t.ms = r.summary.duration_ms;
      return t;
    }
    function card(k, v, sub, cls) { return el("div", "card" + (cls ? " " + cls : ""), el("div", "k", k), el("div", "v", v), sub ? el("div", "sub", sub) : null); }
    function deltaSpan(d, fmt, goodUp) {
      if (!d) return el("span", null, " ±0");
      var good = goodUp ? d > 0 : d < 0;
      return el("span", good ? "delta-up" : "delta-down", (d > 0 ? " +" : " −") + fmt(Math.abs(d)));
    }
    // How far to trust the judge: its agreement with human labels, when
    // the run has labels, and how often its samples agreed, when it voted.
    function renderJudgeCards(r) {
      var ag = meta.agreement;
      if (ag && ag.overall && ag.overall.n) {
        var o = ag.overall, fp = o.false_pass || {};
        summary.appendChild(card("judge agreement", o.agreement == null ? "–" : pct(o.agreement),
          "κ " + (o.kappa == null ? "–" : o.kappa.toFixed(2)) + " · " + fmtInt(o.n) + " labels"));
        summary.appendChild(card("false passes", fp.count + " of " + fp.human_fail,
          fp.rate == null ? "no human fails" : pct(fp.rate) + " [" + pct(fp.ci95[0]) + ", " + pct(fp.ci95[1]) + "]", fp.count ? "bad" : ""));
        var vague = (ag.by_criterion || []).filter(function (c) { return c.flags && c.flags.length; });
        if (vague.length) {
          var ul = el("ul", "vague");
          vague.slice(0, 5).forEach(function (c) { ul.appendChild(el("li", null, c.criterion, el("span", "sub", " " + c.flags.join("; ")))); });
          summary.appendChild(el("div", "card bad", el("div", "k", "too vague to judge"), el("div", "v", fmtInt(vague.length)), ul));
        }
      }
      var cs = r && r.consistency;
      if (cs && cs.decisions) {
        var tb = el("table", null, el("tr", null, el("th", null, "agreed"), el("th", null, "split"), el("th", "crit", "criterion")));
        cs.criteria.slice(0, 5).forEach(function (c) {
          tb.appendChild(el("tr", null, el("td", null, pct(c.agreement)), el("td", null, c.split + "/" + c.decisions), el("td", "crit", c.criterion)));
        });
        summary.appendChild(el("div", "card", el("div", "k", "judge self-consistency"), el("div", "v", pct(cs.agreement)),
          el("div", "sub", cs.split + " of " + cs.decisions + " votes split"), tb));
      }
    }
    function renderSummary() {
      clear(summary);
      var ts = runs.map(totals);
      var t = ts[ts.length - 1];
      var rate = t.total ? t.pass / t.total : 0;
      var rateCard = card("pass rate", pct(rate), t.pass + " of " + t.total + " tests", "passrate");
      if (ts.length === 2) {
        var r0 = ts[0].total ? ts[0].pass / ts[0].total : 0;
        rateCard.querySelector(".sub").appendChild(deltaSpan(rate - r0, pct, true));
      }
      summary.appendChild(rateCard);
      summary.appendChild(card("passed", fmtInt(t.pass)));
      summary.appendChild(card("failed", fmtInt(t.fail), null, t.fail ? "bad" : ""));
      summary.appendChild(card("errors", fmtInt(t.error), null, t.error ? "bad" : ""));
      if (t.skip) summary.appendChild(card("skipped", fmtInt(t.skip)));
      var s = runs[runs.length - 1].summary;
      if (s && s.pass_at_k && s.pass_at_k.length) {
        var tb = el("table", null, el("tr", null, el("th", null, "k"), el("th", null, "pass@k"), el("th", null, "pass^k")));
        s.pass_at_k.forEach(function (p) { tb.appendChild(el("tr", null, el("td", null, p.k), el("td", null, pct(p.pass_at_k)), el("td", null, pct(p.pass_hat_k)))); });
        summary.appendChild(el("div", "card", el("div", "k", "trials"), tb));
      }
      var tokCard = card("tokens", fmtInt(t.tok), t.used ? "cost " + fmtCost(t.costKnown ? t.cost : null) : "no model calls");
      if (ts.length === 2) tokCard.querySelector(".v").appendChild(deltaSpan(t.tok - ts[0].tok, fmtInt, false));
      summary.appendChild(tokCard);
      var durCard = card("duration", fmtMS(t.ms));
      if (ts.length === 2 && ts[0].ms) durCard.querySelector(".v").appendChild(deltaSpan(t.ms - ts[0].ms, fmtMS, false));
      summary.appendChild(durCard);
      renderJudgeCards(runs[runs.length - 1]);
      if (cmp && cmp.summary) {
        var c = cmp.summary;
        summary.appendChild(card("regressed", fmtInt(c.regressed), null, c.regressed ? "bad" : ""));
        summary.appendChild(card("fixed", fmtInt(c.fixed)));
        summary.appendChild(card("new · gone", fmtInt(c.new) + " · " + fmtInt(c.gone)));
      }
      document.documentElement.style.setProperty("--head", (top.offsetHeight + summary.offsetHeight) + "px");
    }

    // ---- filters -------------------------------------------------------------
    var countEl = el("span", "count");
    var search, tagSel, suiteSel, targetSel;
    function seg(options) {
      var s = el("div", "seg");
      options.forEach(function (o) {
        var b = el("button", state.show === o[0] ? "on" : "", o[1]);
        b.type = "button";
        b.setAttribute("data-show", o[0]);
        b.addEventListener("click", function () {
          state.show = o[0];
          Array.prototype.forEach.call(s.children, function (x) { x.className = x === b ? "on" : ""; });
          refilter();
        });
        s.appendChild(b);
      });
      return s;
    }
    function options(sel, label, values) {
      var cur = sel.value;
      clear(sel);
      var o = el("option", null, label);
      o.value = "";
      sel.appendChild(o);
      values.forEach(function (v) { var x = el("option", null, v); x.value = v; sel.appendChild(x); });
      sel.value = values.indexOf(cur) >= 0 ? cur : "";
    }
    function renderFilters() {
      clear(filters);
      filters.appendChild(cmp ? seg([["changed", "Changed"], ["regressed", "Regressed"], ["fixed", "Fixed"], ["all", "All"]])
        : seg([["all", "All"], ["failed", "Failed"], ["error", "Errors"], ["pass", "Passed"]]));
      search = el("input");
      search.type = "search";
      search.placeholder = "Search tests and transcripts";
      search.setAttribute("aria-label", "search");
      var timer = null;
      search.addEventListener("input", function () {
        clearTimeout(timer);
        timer = setTimeout(function () {
          state.q = search.value.trim().toLowerCase();
          var pending = runs.filter(function (r) { return !r.loaded; });
          if (state.q && pending.length) {
            // Names match at once; transcripts once they are inflated.
            refilter();
            countEl.textContent = "searching transcripts…";
            Promise.all(pending.map(function (r) { return r.loadAll(); })).then(refilter);
            return;
          }
          refilter();
        }, 120);
      });
      filters.appendChild(search);
      tagSel = el("select");
      tagSel.setAttribute("aria-label", "tag");
      tagSel.addEventListener("change", function () { state.tag = tagSel.value; refilter(); });
      suiteSel = el("select");
      suiteSel.setAttribute("aria-label", "suite");
      suiteSel.addEventListener("change", function () { state.suite = suiteSel.value; refilter(); });
      targetSel = el("select");
      targetSel.setAttribute("aria-label", "target");
      targetSel.addEventListener("change", function () { state.target = targetSel.value; refilter(); });
      filters.appendChild(tagSel);
      filters.appendChild(suiteSel);
      filters.appendChild(targetSel);
      filters.appendChild(countEl);
      refreshChoices();
    }
    function refreshChoices() {
      var tags = {}, suites = {};
      runs.forEach(function (r) {
        r.index.forEach(function (e) {
          (e.tags || []).forEach(function (t) { tags[t] = true; });
          if (e.suite) suites[e.suite] = true;
        });
      });
      var targets = {};
      items.forEach(function (it) { if (it.target) targets[it.target] = true; });
      options(tagSel, "all tags", Object.keys(tags).sort());
      options(suiteSel, "all suites", Object.keys(suites).sort());
      options(targetSel, "all targets", Object.keys(targets).sort());
      tagSel.style.display = Object.keys(tags).length ? "" : "none";
      suiteSel.style.display = Object.keys(suites).length > 1 ? "" : "none";
      targetSel.style.display = multi ? "" : "none";
      if (!multi) state.target = "";
    }
    function matches(it) {
      var e = entryOf(it);
      if (cmp && it.c) {
        var ch = it.c.change;
        if (state.show === "changed" && ch === "unchanged") return false;
        if (state.show === "regressed" && ch !== "regressed") return false;
        if (state.show === "fixed" && ch !== "fixed") return false;
      } else if (e) {
        if (state.show === "failed" && e.v !== "fail" && e.v !== "error") return false;
        if (state.show === "error" && e.v !== "error") return false;
        if (state.show === "pass" && e.v !== "pass") return false;
      }
      if (state.suite && it.suite !== state.suite) return false;
      if (state.target && it.target !== state.target) return false;
      if (state.tag) {
        var ea = it.a !== undefined ? runs[0].index[it.a] : null, eb = it.b !== undefined ? runs[1].index[it.b] : null;
        var has = function (x) { return x && (x.tags || []).indexOf(state.tag) >= 0; };
        if (!has(ea) && !has(eb)) return false;
      }
      if (state.q) {
        var q = state.q;
        if (it.id.toLowerCase().indexOf(q) >= 0 || (it.suite || "").toLowerCase().indexOf(q) >= 0) return true;
        if (multi && it.target.toLowerCase().indexOf(q) >= 0) return true;
        if (e && (e.why || "").toLowerCase().indexOf(q) >= 0) return true;
        if (it.a !== undefined && runs[0].text(it.a).indexOf(q) >= 0) return true;
        if (it.b !== undefined && runs[1].text(it.b).indexOf(q) >= 0) return true;
        return false;
      }
      return true;
    }
    function refilter() {
      shown = items.filter(matches);
      countEl.textContent = shown.length === items.length ? items.length + " tests" : shown.length + " of " + items.length;
      spacer.style.height = Math.max(shown.length * ROW, 1) + "px";
      rendered = {};
      clear(spacer);
      if (!shown.length) spacer.appendChild(el("div", "empty", items.length ? "No test matches the filters." : "No results yet."));
      renderRows();
    }

    // ---- the virtual list: only the rows in view exist -----------------------
    var rendered = {};
    function renderRows() {
      var h = rows.clientHeight || 600;
      var first = Math.max(0, Math.floor(rows.scrollTop / ROW) - 10);
      var last = Math.min(shown.length, Math.ceil((rows.scrollTop + h) / ROW) + 10);
      var keep = {};
      for (var i = first; i < last; i++) {
        keep[i] = true;
        if (rendered[i]) continue;
        var node = rowFor(shown[i]);
        node.style.top = (i * ROW) + "px";
        node.setAttribute("data-i", i);
        rendered[i] = node;
        spacer.appendChild(node);
      }
      Object.keys(rendered).forEach(function (k) {
        if (!keep[k]) { spacer.removeChild(rendered[k]); delete rendered[k]; }
      });
    }
    function rowFor(it) {
      var e = entryOf(it) || {};
      var r = el("div", "row" + (state.sel === it.key ? " sel" : ""));
      r.setAttribute("data-key", it.key);
      r.setAttribute("role", "button");
      var b, score, why;
      if (it.c) {
        b = badge(it.c.change);
        var bs = it.c.base, ns = it.c.new;
        score = (bs ? fmtScore(bs.score) : "–") + " → " + (ns ? fmtScore(ns.score) : "–");
        why = (bs ? bs.verdict : "absent") + " → " + (ns ? ns.verdict : "absent") + (it.c.noise ? " · " + it.c.noise : "") + (ns && e.why ? " · " + e.why : "");
      } else {
        b = badge(e.v);
        score = fmtScore(e.s) + (e.tn ? " · " + e.tp + "/" + e.tn : "");
        why = e.why || [e.suite, e.turns ? e.turns + " turns" : "", fmtMS(e.ms)].filter(Boolean).join(" · ");
      }
      r.appendChild(b);
      // The target goes first, where a long id cannot clip it.
      r.appendChild(el("span", "id", multi ? el("span", "target", it.target || "(no target)") : null, it.id));
      r.appendChild(el("span", "score", score));
      r.appendChild(el("span", "why", why));
      r.title = multi ? it.id + " · target " + (it.target || "(none)") : it.id;
      r.addEventListener("click", function () { select(it.key, true); });
      return r;
    }
    rows.addEventListener("scroll", function () { window.requestAnimationFrame(renderRows); });
    window.addEventListener("resize", function () { renderSummary(); renderRows(); });
    rows.addEventListener("keydown", function (ev) {
      if (ev.key !== "ArrowDown" && ev.key !== "ArrowUp" && ev.key !== "j" && ev.key !== "k") return;
      ev.preventDefault();
      var i = indexOfSel();
      i = ev.key === "ArrowDown" || ev.key === "j" ? Math.min(shown.length - 1, i + 1) : Math.max(0, i - 1);
      if (shown[i]) { select(shown[i].key, true); scrollTo(i); }
    });
    function indexOfSel() {
      for (var i = 0; i < shown.length; i++) if (shown[i].key === state.sel) return i;
      return -1;
    }
    function scrollTo(i) {
      var top = i * ROW;
      if (top < rows.scrollTop) rows.scrollTop = top;
      else if (top + ROW > rows.scrollTop + rows.clientHeight) rows.scrollTop = top + ROW - rows.clientHeight;
    }

    function select(k, push) {
      var it = null;
      for (var i = 0; i < items.length; i++) if (items[i].key === k) { it = items[i]; break; }
      var parts = k ? k.split("\u001f") : [];
      if (!it && parts.length === 2) {
        // A link made before tests were keyed by target (suite, id): the
        // test on its first target.
        for (var j = 0; j < items.length; j++) if ((items[j].suite || "") === parts[0] && items[j].id === parts[1]) { it = items[j]; break; }
        if (it) k = it.key;
      }
      state.sel = k;
      Object.keys(rendered).forEach(function (i) {
        rendered[i].className = "row" + (rendered[i].getAttribute("data-key") === k ? " sel" : "");
      });
      renderDetail(it);
      if (push) {
        var h = "#t=" + encodeURIComponent(k);
        if (location.hash !== h) history.replaceState(null, "", h);
      }
    }

    // ---- a test --------------------------------------------------------------
    var shownSeq = 0;
    function renderDetail(it) {
      var seq = ++shownSeq;
      if (!it) {
        clear(detail);
        detail.appendChild(el("p", "hint", "Pick a test to see its conversation, turn by turn, with the graders' reasons."));
        return;
      }
      var a = it.a !== undefined ? runs[0].detail(it.a) : Promise.resolve(null);
      var b = it.b !== undefined && runs[1] ? runs[1].detail(it.b) : Promise.resolve(null);
      Promise.all([a, b]).then(function (ds) {
        if (seq !== shownSeq) return; // another test was picked meanwhile
        clear(detail);
        detail.scrollTop = 0;
        if (it.c) renderCompared(it, ds[0], ds[1]);
        else renderTest(detail, ds[0], 0);
      }, function (err) {
        clear(detail);
        detail.appendChild(el("div", "errbox", "This test could not be read: " + err + (typeof DecompressionStream === "undefined" ? " (this browser cannot inflate the report's data; use a current Chrome, Edge, Firefox or Safari)" : "")));
      });
    }

    function renderTest(box, d, trialPick) {
      var r = d.result;
      var head = el("div", "test-head", el("h2", null, r.test_id));
      var facts = el("div", "facts", badge(r.verdict), el("span", null, "score " + fmtScore(r.score)));
      if (r.suite) add(facts, el("span", null, "suite " + r.suite));
      if (r.target) add(facts, el("span", null, "target " + r.target));
      add(facts, el("span", null, fmtMS(r.duration_ms)));
      if (r.usage) add(facts, el("span", null, fmtInt((r.usage.input_tokens || 0) + (r.usage.output_tokens || 0)) + " tokens · " + fmtCost(r.usage.cost_usd)));
      if (r.tags && r.tags.length) add(facts, r.tags.map(function (t) { return el("span", "tag", t); }));
      head.appendChild(facts);
      box.appendChild(head);
      if (r.error) box.appendChild(el("div", "errbox", r.error));
      var body = el("div");
      var trials = r.trials || [];
      if (trials.length > 1) {
        var passed = trials.filter(function (t) { return t.verdict === "pass"; }).length;
        var tb = el("div", "trials", el("span", null, passed + " of " + trials.length + " trials passed"));
        if (r.pass_at_k) add(tb, el("span", "noise", r.pass_at_k.map(function (p) { return "pass@" + p.k + " " + pct(p.pass_at_k) + ", pass^" + p.k + " " + pct(p.pass_hat_k); }).join(" · ")));
        trials.forEach(function (t, i) {
          var b = el("button", i === trialPick ? "on" : "", "trial " + t.trial + " ", badge(t.verdict));
          b.type = "button";
          b.addEventListener("click", function () { clear(box); renderTest(box, d, i); });
          tb.appendChild(b);
        });
        box.appendChild(tb);
        var t = trials[trialPick] || trials[0];
        if (t.error) body.appendChild(el("div", "errbox", t.error));
        renderConversation(body, t.output || [], t.scores || [], (d.trial_turns || [])[trialPick] || [], t.simulation);
      } else {
        renderConversation(body, r.output || [], r.scores || [], d.turns || [], r.simulation);
      }
      box.appendChild(body);
    }

    // renderConversation lays the transcript out turn by turn: each turn's
    // messages, then its checks; then the checks of the whole conversation.
    function renderConversation(box, out, scores, starts, sim) {
      if (sim) {
        box.appendChild(el("div", "sim", "Simulated user: " + (sim.model || "?") + " · " + sim.turns + " turns · ended: " + sim.end_reason + (sim.detail ? " (" + sim.detail + ")" : "")));
      }
      var conv = el("div", "conv");
      var turnScores = {}, rest = [];
      scores.forEach(function (s) {
        var m = /^turn-(\d+)$/.exec(s.name);
        if (m) turnScores[+m[1]] = s; else rest.push(s);
      });
      // Tool results are shown under the call that asked for them.
      var results = {};
      out.forEach(function (m) { if (m.role === "tool" && m.tool_call_id) results[m.tool_call_id] = m; });
      var used = {};
      function msgNode(m) {
        if (m.role === "tool" && m.tool_call_id && used[m.tool_call_id]) return null;
        if (m.role === "system") {
          var det = el("details", "msg system", el("summary", null, "system prompt"));
          det.appendChild(el("div", null, m.content || ""));
          return det;
        }
        var who = m.role === "user" ? "user" : m.role === "assistant" ? "agent" : "tool" + (m.name ? " · " + m.name : "");
        var n = el("div", "msg " + (m.role === "assistant" || m.role === "user" || m.role === "tool" ? m.role : "system"), el("span", "who", who));
        if (m.content) n.appendChild(document.createTextNode(m.content));
        (m.tool_calls || []).forEach(function (c) {
          var args = c.args ? JSON.stringify(c.args, null, 2) : (c.raw_args || "");
          var call = el("div", "call", el("div", "name", "→ " + c.name), el("pre", null, args));
          var res = c.id ? results[c.id] : null;
          if (res) {
            used[c.id] = true;
            call.appendChild(el("div", "res", el("div", "lbl", "← result"), el("pre", null, res.content || "")));
          }
          n.appendChild(call);
        });
        return n;
      }
      var turnAt = {};
      starts.forEach(function (idx, k) { turnAt[idx] = k + 1; });
      var cur = conv, curTurn = 0;
      function closeTurn() {
        if (curTurn && turnScores[curTurn]) cur.appendChild(checks([turnScores[curTurn]]));
      }
      out.forEach(function (m, i) {
        if (turnAt[i]) {
          closeTurn();
          curTurn = turnAt[i];
          var s = turnScores[curTurn];
          cur = el("div", "turn " + (s ? s.verdict : ""), el("div", "turn-head", "Turn " + curTurn, s ? badge(s.verdict) : null, s ? el("span", "score", fmtScore(s.score)) : null));
          cur.setAttribute("data-turn", curTurn);
          conv.appendChild(cur);
        }
        var n = msgNode(m);
        if (n) cur.appendChild(n);
      });
      closeTurn();
      // Turns that never ran (skipped after a failure).
      Object.keys(turnScores).map(Number).sort(function (a, b) { return a - b; }).forEach(function (k) {
        if (k <= starts.length) return;
        var s = turnScores[k];
        var t = el("div", "turn " + s.verdict, el("div", "turn-head", "Turn " + k, badge(s.verdict)));
        t.setAttribute("data-turn", k);
        t.appendChild(checks([s]));
        conv.appendChild(t);
      });
      if (rest.length) {
        var whole = el("div", "turn whole", el("div", "turn-head", starts.length ? "Whole conversation" : "Checks"));
        whole.appendChild(checks(rest));
        conv.appendChild(whole);
      }
      box.appendChild(conv);
    }

    // checks lists scores with their reasons and assertions; a composite
    // turn score shows the graders under it.
    function checks(scores) {
      var box = el("div", "checks");
      scores.forEach(function (s) {
        // A turn's composite score is in the turn's head: list its graders.
        if (/^turn-\d+$/.test(s.name) && s.scores && s.scores.length) s.scores.forEach(function (c) { box.appendChild(check(c)); });
        else box.appendChild(check(s));
      });
      return box;
    }
    function check(s) {
      var nested = s.scores && s.scores.length;
      var n = el("div", "check " + s.verdict, el("span", "mark", mark(s.verdict)));
      var body = el("div", null, el("div", "title", s.name, el("span", "score", fmtScore(s.score) + (s.required ? " · required" : ""))));
      if (s.reason) body.appendChild(el("div", "reason", s.reason));
      var sub = el("div", "sub");
      if (nested) s.scores.forEach(function (c) { sub.appendChild(check(c)); });
      else (s.assertions || []).forEach(function (a) {
        var ev = a.evidence && a.evidence !== s.reason ? el("span", "ev", a.evidence) : null;
        sub.appendChild(el("div", "assert " + (a.passed ? "ok" : "no"), el("span", "mark", a.passed ? "✓" : "✗"), el("span", null, a.text), ev));
      });
      if (s.details && s.details.user_goal) sub.appendChild(el("div", "assert", el("span", "mark", "·"), el("span", null, "inferred goal: " + s.details.user_goal)));
      if (sub.firstChild) body.appendChild(sub);
      n.appendChild(body);
      return n;
    }

    // ---- two runs side by side -----------------------------------------------
    function renderCompared(it, da, db) {
      var c = it.c;
      var head = el("div", "test-head", el("h2", null, it.id));
      var facts = el("div", "facts", badge(c.change));
      if (multi || c.base_target) add(facts, el("span", null, "target " + (c.base_target ? c.base_target + " → " : "") + (it.target || "(none)")));
      if (c.base) add(facts, el("span", null, "base " + c.base.verdict + " " + fmtScore(c.base.score)));
      if (c.new) add(facts, el("span", null, "new " + c.new.verdict + " " + fmtScore(c.new.score)));
      if (c.delta) add(facts, deltaSpan(c.delta, fmtScore, true));
      if (c.noise) add(facts, el("span", "noise", c.noise));
      head.appendChild(facts);
      detail.appendChild(head);
      if (c.checks && c.checks.length) {
        var t = el("table", "changes", el("tr", null, el("th", null, "check"), el("th", null, "base"), el("th", null, "new")));
        c.checks.forEach(function (k) {
          var side = function (s) { return s ? el("td", "r", badge(s.verdict), " " + fmtScore(s.score), s.reason ? el("div", null, s.reason) : null) : el("td", null, "–"); };
          t.appendChild(el("tr", null, el("td", null, k.path), side(k.base), side(k.new)));
        });
        detail.appendChild(t);
      }
      var sides = el("div", "sides");
      [[0, da, "base"], [1, db, "new"]].forEach(function (x) {
        var col = el("div", null, el("h3", null, x[2] + " · run " + (runs[x[0]].header.run_id || "")));
        if (!x[1]) col.appendChild(el("p", "hint", "This test is not in the " + x[2] + " run."));
        else renderTest(col, x[1], 0);
        sides.appendChild(col);
      });
      detail.appendChild(sides);
    }

    // ---- a run in progress (the viewer) --------------------------------------
    var liveEnded = false;
    function follow() {
      if (!meta.live || typeof EventSource === "undefined") return;
      var es = new EventSource(meta.live);
      es.addEventListener("result", function (ev) {
        var m = JSON.parse(ev.data);
        runs[0].push(m.index, JSON.stringify(m.detail));
        buildItems();
        refreshChoices();
        refilter();
        renderSummary();
      });
      es.addEventListener("end", function (ev) {
        liveEnded = true;
        try { runs[0].summary = JSON.parse(ev.data).summary || runs[0].summary; } catch (e) { /* keep what we have */ }
        es.close();
        renderTop();
        renderSummary();
      });
    }

    // ---- the viewer's list of runs ---------------------------------------------
    function renderRunsPage() {
      clear(app);
      var top = el("header", "top", el("span", "brand", "agenteval"), el("h1", null, "Runs"));
      var page = el("div", "runs-page");
      var bar = el("div", "bar");
      var btn = el("button", null, "Compare");
      btn.type = "button";
      btn.disabled = true;
      var note = el("span", "noise", "Pick two runs to compare: the older is the base.");
      bar.appendChild(btn);
      bar.appendChild(note);
      page.appendChild(bar);
      var picked = []; // ids, oldest pick first
      var byID = {};
      var table = el("table", "runs-table");
      var hint = el("p", "hint", "No runs are stored yet. agenteval run records each run.");
      function draw(list) {
        clear(table);
        byID = {};
        table.appendChild(el("tr", null, ["", "run", "started", "suites", "target", "passed", "failed", "errors", "tokens", "cost", "duration", "status"].map(function (h) { return el("th", null, h); })));
        hint.style.display = list.length ? "none" : "";
        picked = picked.filter(function (id) { return list.some(function (r) { return r.id === id; }); });
        list.forEach(function (r) {
          byID[r.id] = r;
          var cb = el("input");
          cb.type = "checkbox";
          cb.checked = picked.indexOf(r.id) >= 0;
          cb.setAttribute("aria-label", "pick " + r.id);
          cb.setAttribute("data-id", r.id);
          cb.addEventListener("change", function () {
            if (cb.checked) picked.push(r.id); else picked = picked.filter(function (x) { return x !== r.id; });
            while (picked.length > 2) { var old = picked.shift(); table.querySelector('input[data-id="' + CSS.escape(old) + '"]').checked = false; }
            btn.disabled = picked.length !== 2;
          });
          var a = el("a", null, r.id);
          a.setAttribute("href", "/runs/" + encodeURIComponent(r.id));
          var idCell = el("td", null, a, " ", (r.tags || []).map(function (t) { return el("span", "tag", t); }));
          table.appendChild(el("tr", null, el("td", null, cb), idCell, el("td", null, when(r.started)),
            el("td", null, r.suites), el("td", null, r.target || ""), el("td", "num", r.passed), el("td", "num", r.failed), el("td", "num", r.errored),
            el("td", "num", fmtInt(r.tokens)), el("td", "num", r.used ? fmtCost(r.cost) : "–"), el("td", "num", fmtMS(r.duration_ms)),
            el("td", null, r.status === "running" ? el("span", "live", "● running") : r.status)));
        });
        btn.disabled = picked.length !== 2;
      }
      btn.addEventListener("click", function () {
        // The older run is the base. Times are compared as times: their
        // text drops trailing zeros of the fraction, so "…12.3Z" is later
        // than "…12.31Z" as text but not as a time.
        var p = picked.map(function (id) { return byID[id]; }).sort(function (x, y) { return Date.parse(x.started) - Date.parse(y.started); });
        location.href = "/compare?base=" + encodeURIComponent(p[0].id) + "&new=" + encodeURIComponent(p[1].id);
      });
      draw(meta.runs_list || []);
      page.appendChild(hint);
      page.appendChild(table);
      app.appendChild(top);
      app.appendChild(page);
      // New runs, and the totals of running ones, show without a reload.
      var last = JSON.stringify(meta.runs_list || []);
      if (typeof fetch === "function" && location.protocol !== "file:") {
        setInterval(function () {
          fetch("/api/runs").then(function (r) { return r.ok ? r.text() : null; }).then(function (t) {
            if (t === null || t === last) return;
            last = t;
            draw(JSON.parse(t) || []);
          }, function () { /* the viewer stopped: keep what is shown */ });
        }, 2000);
      }
      window.__agentevalReady = performance.now();
    }

    // ---- start -----------------------------------------------------------------
    buildItems();
    renderTop();
    renderSummary();
    renderFilters();
    refilter();
    // A link to a test (#t=suite%1Fid) opens it, on load and when followed.
    function fromHash() {
      var want = location.hash.indexOf("#t=") === 0 ? decodeURIComponent(location.hash.slice(3)) : null;
      if (!want) { renderDetail(null); return; }
      select(want, false);
      var at = indexOfSel();
      if (at >= 0) scrollTo(at);
    }
    window.addEventListener("hashchange", fromHash);
    fromHash();
    follow();
    // The browser tests read these: the page is drawn and answers clicks.
    window.__agentevalReady = performance.now();
    window.__agentevalScript = window.__agentevalReady - startedAt;
  }
})();
