// The query workbench: an editor that completes and marks mistakes (CodeMirror 5), result views
// (a sortable, filterable table; bar, line and timeline charts with Vega-Lite; a node-link graph
// with Cytoscape.js; a tree with Vega), permalinks, examples and recent queries.
// Without JavaScript the page still works: the form submits and the table is rendered by the server.
(() => {
  "use strict";
  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];
  const STATIC = document.documentElement.dataset.static || "/static/";
  const RECENT = "iclr-kg:recent";
  let editor = null;
  let vocabulary = { prefixes: {}, keywords: [], terms: [], kinds: [] };
  let marks = [];

  // ---------------------------------------------------------------------------------------
  // Loading the chart libraries only when a view needs them (the page stays light)

  const loaded = {};
  function script(path) {
    loaded[path] = loaded[path] || new Promise((resolve, reject) => {
      const tag = document.createElement("script");
      tag.src = `${STATIC}${path}?v=${document.documentElement.dataset.staticVersion || ""}`; // cached for a year
      tag.onload = resolve;
      tag.onerror = () => reject(new Error(`could not load ${path}`));
      document.head.appendChild(tag);
    });
    return loaded[path];
  }
  async function vega() {
    await script("vendor/vega/vega.min.js");
    await script("vendor/vega-lite/vega-lite.min.js");
    await script("vendor/vega-embed/vega-embed.min.js");
    await script("vendor/vega-interpreter/vega-interpreter.min.js");
  }
  // Vega compiles expressions with eval unless given an interpreter; our pages forbid eval (CSP).
  const EMBED = () => ({ actions: false, renderer: "svg", ast: true, expr: window.vega.expressionInterpreter });

  // ---------------------------------------------------------------------------------------
  // Editor

  function debounce(fn, ms) {
    let timer = null;
    return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
  }

  function run() {
    editor.save();
    remember(editor.getValue());
    const form = $("#query").form;
    const view = $("#view-kind");
    // A `# view:` line in the text wins: whoever typed it last meant it.
    if (view && form.elements.view) form.elements.view.value = viewLineOf(editor.getValue()) || currentView();
    form.requestSubmit();
  }

  function initEditor() {
    const area = $("#query");
    if (!area || !window.CodeMirror) return;
    editor = CodeMirror.fromTextArea(area, {
      mode: "application/sparql-query",
      lineNumbers: true,
      matchBrackets: true,
      autoCloseBrackets: true,
      extraKeys: {
        // Tab and Shift-Tab leave the editor, as from any field (WCAG 2.1.2: no keyboard trap);
        // indent with Ctrl-] and Ctrl-[, CodeMirror's own keys for it
        Tab: false,
        "Shift-Tab": false,
        "Ctrl-Enter": run,
        "Cmd-Enter": run,
        "Ctrl-Space": (cm) => cm.showHint({ hint: complete, completeSingle: false }),
      },
    });
    editor.on("inputRead", (cm, change) => {
      const typed = change.text.join("");
      const line = cm.getLine(cm.getCursor().line).slice(0, cm.getCursor().ch);
      if (/[:?$]$/.test(typed) || /\w/.test(typed) && /[\w:]{2,}$/.test(line) || typed === " " && /(;|\ba)\s$/.test(line)) {
        cm.showHint({ hint: complete, completeSingle: false });
      }
    });
    editor.on("change", debounce(lint, 350));
  }

  function entityCompletions(kind, text) {
    const params = new URLSearchParams({ q: text, format: "json", limit: "20" });
    if (kind) params.set("kind", kind);
    return fetch(`/search?${params}`).then((r) => r.json()).then((found) => found.results.map((hit) => {
      const key = hit.url.split("/").pop();
      return { text: `${hit.kind}:${key}`, displayText: `${hit.label} (${hit.kind}:${key})`, title: hit.facts };
    })).catch(() => []);
  }

  function complete(cm, callback) {
    const cursor = cm.getCursor();
    const line = cm.getLine(cursor.line);
    let start = cursor.ch;
    while (start > 0 && /[\w:?$.-]/.test(line[start - 1])) start -= 1;
    const word = line.slice(start, cursor.ch);
    const before = cm.getRange({ line: 0, ch: 0 }, { line: cursor.line, ch: start });
    const previous = (before.match(/(\S+)\s*$/) || ["", ""])[1];
    const range = { from: CodeMirror.Pos(cursor.line, start), to: cursor };
    const answer = (list) => callback({ list: list.slice(0, 80), ...range });
    const lower = word.toLowerCase();
    if (word.startsWith("?") || word.startsWith("$")) {
      const names = [...new Set(cm.getValue().match(/[?$]\w+/g) || [])].filter((v) => v !== word && v.startsWith(word));
      return answer(names);
    }
    const colon = word.indexOf(":");
    if (colon >= 0) {
      const prefix = word.slice(0, colon);
      const local = word.slice(colon + 1).toLowerCase();
      if (prefix === "iclr") {
        const wantClass = previous === "a" || previous === "rdf:type";
        const terms = vocabulary.terms
          .filter((t) => t.name.slice(5).toLowerCase().startsWith(local) || (t.label || "").toLowerCase().startsWith(local))
          .sort((a, b) => ((a.kind === "class") !== wantClass) - ((b.kind === "class") !== wantClass) || a.name.localeCompare(b.name));
        return answer(terms.map((t) => ({ text: t.name, displayText: `${t.name} — ${t.label}`, title: t.comment })));
      }
      if (vocabulary.kinds.includes(prefix) && local.length > 0) {
        return entityCompletions(prefix, local).then(answer);
      }
      return answer([]);
    }
    const afterSemicolon = /;$/.test(previous);
    const properties = vocabulary.terms.filter((t) => t.kind === "property" && t.name.slice(5).toLowerCase().startsWith(lower))
      .map((t) => ({ text: t.name, displayText: `${t.name} — ${t.label}`, title: t.comment }));
    if (afterSemicolon) return answer(properties);
    const prefixes = Object.keys(vocabulary.prefixes).filter((p) => p.startsWith(lower)).map((p) => `${p}:`);
    const keywords = vocabulary.keywords.filter((k) => k.toLowerCase().startsWith(lower) && k.toLowerCase() !== lower);
    const local = [...keywords, ...prefixes];
    if (word.length >= 2 && !/^[A-Z]+$/.test(word)) return entityCompletions(null, word).then((found) => answer([...local, ...found]));
    return answer(local);
  }
  complete.async = true;

  async function lint() {
    if (!editor) return;
    const text = editor.getValue();
    const body = new URLSearchParams({ query: text });
    let problems = [];
    try {
      problems = (await (await fetch("/api/check", { method: "POST", body })).json()).problems;
    } catch (error) {
      return;
    }
    if (text !== editor.getValue()) return; // typed on meanwhile: the next check will say
    marks.forEach((m) => m.clear());
    marks = problems.map((p) => {
      const lineText = editor.getLine(p.line - 1) || "";
      let from = Math.min(p.column - 1, lineText.length);
      let to = Math.min(from + Math.max(p.length, 1), lineText.length);
      if (from === to && from > 0) from -= 1; // at the end of a line: mark its last character
      return editor.markText({ line: p.line - 1, ch: from }, { line: p.line - 1, ch: to },
        { className: `cm-problem-${p.severity}`, attributes: { title: p.message } });
    });
    const list = $("#problems");
    if (list) {
      list.replaceChildren(...problems.map((p) => {
        const item = document.createElement("li");
        item.className = p.severity;
        item.textContent = p.shown; // in the page's language, with where it is
        return item;
      }));
    }
  }

  // ---------------------------------------------------------------------------------------
  // Prefixes, examples, recent queries, permalinks

  function insert(text) {
    if (!editor) return;
    editor.replaceSelection(text);
    editor.focus();
  }

  function initTools() {
    $$("[data-insert]").forEach((button) => button.addEventListener("click", () => insert(button.dataset.insert)));
    const dialog = $("#examples");
    const open = $("#open-examples");
    if (dialog && open) {
      open.hidden = false;
      open.addEventListener("click", () => dialog.showModal());
      $$("[data-example]", dialog).forEach((link) => link.addEventListener("click", (event) => {
        event.preventDefault();
        if (editor) editor.setValue(link.dataset.example);
        const view = $("#view-kind");
        if (view) { view.value = link.dataset.view.split(" ")[0]; view.dataset.spec = link.dataset.view; }
        const form = $("#query").form;
        if (form.elements.view) form.elements.view.value = link.dataset.view;
        dialog.close();
      }));
    }
    const recent = $("#recent");
    if (recent) {
      const items = JSON.parse(localStorage.getItem(RECENT) || "[]");
      recent.hidden = items.length === 0;
      items.forEach((item, i) => {
        const option = document.createElement("option");
        option.value = String(i);
        option.textContent = item.text.replace(/\s+/g, " ").slice(0, 90);
        recent.appendChild(option);
      });
      recent.addEventListener("change", () => {
        const item = items[Number(recent.value)];
        if (item && editor) editor.setValue(item.text);
      });
    }
    const share = $("#share");
    if (share) {
      share.hidden = false;
      share.addEventListener("click", async () => {
        if (editor) editor.save();
        const body = new URLSearchParams({ query: $("#query").value, view: currentView() });
        const answer = await fetch("/q", { method: "POST", body, headers: { Accept: "application/json" } });
        const out = $("#permalink");
        if (answer.ok) {
          out.value = (await answer.json()).url;
          out.hidden = false;
          out.select();
          const copy = $("#copy-permalink");
          if (copy) copy.hidden = false;
        }
      });
    }
    const copy = $("#copy-permalink");
    if (copy) {
      copy.addEventListener("click", async () => {
        const link = $("#permalink").value;
        try { // a browser that neither grants nor refuses (a pending permission) gets the fallback
          const late = new Promise((_, reject) => setTimeout(() => reject(new Error("no answer")), 500));
          await Promise.race([navigator.clipboard.writeText(link), late]);
        } catch {
          $("#permalink").select();
          document.execCommand("copy"); // where the Clipboard API is refused (plain http)
        }
        copy.textContent = copy.dataset.done;
      });
    }
  }

  function remember(text) {
    const items = JSON.parse(localStorage.getItem(RECENT) || "[]").filter((item) => item.text !== text);
    items.unshift({ text, at: new Date().toISOString() });
    localStorage.setItem(RECENT, JSON.stringify(items.slice(0, 20)));
  }

  // ---------------------------------------------------------------------------------------
  // Result views

  function parseView(spec) {
    const [kind, ...pairs] = (spec || "table").trim().split(/\s+/);
    const options = Object.fromEntries(pairs.map((pair) => pair.split("=")));
    return { kind, options };
  }

  const VIEW_LINE = /^#\s*view:\s*(\S.*?)\s*$/;
  const CHARTS = ["bar", "line", "timeline"];

  function viewLineOf(text) {
    const line = text.split(/\r?\n/).find((l) => VIEW_LINE.test(l));
    return line ? VIEW_LINE.exec(line)[1] : null;
  }

  // The editor's `# view:` line says how the result is drawn, so a shared or saved text keeps
  // its chart: the pickers rewrite that one line (or add it first), and "table" removes it.
  function writeViewLine(spec) {
    if (!editor) return;
    let at = -1;
    for (let i = 0; i < editor.lineCount(); i += 1) {
      if (VIEW_LINE.test(editor.getLine(i))) { at = i; break; }
    }
    if (spec === "table") {
      if (at >= 0) editor.replaceRange("", { line: at, ch: 0 }, { line: at + 1, ch: 0 });
    } else if (at >= 0) {
      editor.replaceRange(`# view: ${spec}`, { line: at, ch: 0 }, { line: at, ch: editor.getLine(at).length });
    } else {
      editor.replaceRange(`# view: ${spec}\n`, { line: 0, ch: 0 });
    }
  }

  // One place where a chosen view is written: the picker, the address, the form, the editor.
  function setView(spec) {
    const select = $("#view-kind");
    select.dataset.spec = spec;
    select.value = parseView(spec).kind;
    const url = new URL(location.href);
    url.searchParams.set("view", spec);
    history.replaceState(null, "", url);
    const form = $("#query") && $("#query").form;
    if (form && form.elements.view) form.elements.view.value = spec;
    writeViewLine(spec);
    renderView().catch(showViewError);
  }

  function specOf(kind, axes) {
    const pairs = Object.entries(axes).filter(([, value]) => value).map(([name, value]) => `${name}=${value}`);
    return [kind, ...pairs].join(" ");
  }

  // x / y / series pickers for the charts, filled with the result's columns and showing what the
  // chart uses (the spec's choice, else the guess); a change writes the spec.
  function showAxes(kind, columns, chosen) {
    const axes = $("#view-axes");
    if (!axes) return;
    axes.hidden = !CHARTS.includes(kind);
    if (axes.hidden) return;
    const titles = JSON.parse($("#view")?.dataset.titles || "{}"); // each column named as the axes name it
    const fill = (select, value, blank) => {
      const options = blank ? [...select.options].slice(0, 1) : [];
      select.replaceChildren(...options, ...columns.map((c) => new Option(titles[c] || c, c)));
      select.value = value || "";
    };
    fill($("#view-x"), chosen.x);
    fill($("#view-y"), chosen.y);
    fill($("#view-series"), chosen.series, true);
    $("#view-series").parentElement.hidden = kind === "timeline"; // a timeline's rows are its series
    const write = () => {
      const second = kind === "timeline" ? "label" : "y";
      setView(specOf(kind, { x: $("#view-x").value, [second]: $("#view-y").value, series: kind === "timeline" ? "" : $("#view-series").value }));
    };
    ["#view-x", "#view-y", "#view-series"].forEach((id) => { $(id).onchange = write; });
  }

  function currentView() {
    const select = $("#view-kind");
    if (!select) return "table";
    const spec = select.dataset.spec || "table";
    return select.value === parseView(spec).kind ? spec : select.value;
  }

  function rowsOf(results) {
    const numeric = /#(integer|decimal|double|float|int|long|short|nonNegativeInteger|gYear)$/;
    return results.results.bindings.map((binding) => Object.fromEntries(Object.entries(binding).map(([name, term]) => {
      const number = term.type === "literal" && numeric.test(term.datatype || "");
      return [name, number ? Number(term.value) : term.value];
    })));
  }

  function guess(columns, rows, options) {
    const isNumber = (c) => rows.length > 0 && rows.every((r) => r[c] === undefined || typeof r[c] === "number");
    const numbers = columns.filter(isNumber);
    const others = columns.filter((c) => !numbers.includes(c) && !rows.some((r) => String(r[c] || "").startsWith("http")));
    const x = options.x || others[0] || columns[0];
    const y = options.y || numbers[numbers.length - 1] || columns[1];
    // Two label columns and a number (organization, year, papers), axes not chosen: the second
    // label is the series, or the years stack into one unlabelled bar. A label: not a number, or
    // a year. Axes chosen without a series (the pickers' "none") keep none.
    // One that varies where x does not (a name beside its IRI does not).
    const isYear = (c) => rows.every((r) => Number.isInteger(r[c]) && r[c] >= 1900 && r[c] <= 2100);
    const varies = (c) => {
      const first = new Map();
      return rows.some((r) => (first.has(r[x]) ? first.get(r[x]) !== r[c] : (first.set(r[x], r[c]), false)));
    };
    const label = columns.find((c) => c !== x && c !== y && (!numbers.includes(c) || isYear(c)) && varies(c));
    const chosen = options.x || options.y || options.series !== undefined;
    return { x, y, series: chosen ? options.series : label };
  }

  // A chart says what it shows in words (role=img with a summary a screen reader reads) and
  // links the same rows as a table.
  function describeChart(box, chart, kind, rows, x, y) {
    const zh = document.documentElement.lang === "zh";
    const [xName, yName] = [x, y]; // the query's own names
    const pairs = rows.slice(0, 12).map((r) => `${r[x]}: ${r[y]}`).join(zh ? "；" : "; ");
    chart.setAttribute("role", "img");
    if (zh) {
      const kinds = { bar: "柱状图", line: "折线图", timeline: "时间线" };
      const more = rows.length > 12 ? `；另有 ${rows.length - 12} 行` : "";
      chart.setAttribute("aria-label", `${kinds[kind] || kind}：按${xName}的${yName}，${rows.length} 行：${pairs}${more}`);
    } else {
      const more = rows.length > 12 ? `; and ${rows.length - 12} more` : "";
      chart.setAttribute("aria-label", `${kind} chart of ${yName} by ${xName}, ${rows.length} rows: ${pairs}${more}`);
    }
    const query = new URL(box.dataset.results, location.href).searchParams.get("query");
    if (!query || box.querySelector(".as-table")) return;
    const link = document.createElement("a");
    link.className = "as-table";
    link.href = `/query?${new URLSearchParams({ query, view: "table" })}`;
    link.textContent = document.documentElement.lang === "zh" ? "以表格查看" : "as a table";
    box.appendChild(link);
  }

  // A result is fetched once per page: another view or axis redraws the same rows (each fetch
  // asked the endpoint again, and a few quick changes of a picker were a burst of queries).
  const fetched = new Map();
  function resultsOf(url) {
    if (!fetched.has(url)) {
      fetched.set(url, fetch(url, { headers: { Accept: "application/sparql-results+json" } }).then((answer) => {
        if (!answer.ok) throw new Error(`the endpoint answered ${answer.status}`);
        return answer.json();
      }));
      fetched.get(url).catch(() => fetched.delete(url)); // a failure is asked again next time
    }
    return fetched.get(url);
  }

  // A view being drawn says so (aria-busy, until its last drawing is done): a screen reader
  // waits for the finished view, and so can a test.
  const drawing = new WeakMap();
  async function renderView(box = $("#view")) {
    if (!box) return;
    const token = {};
    drawing.set(box, token);
    box.setAttribute("aria-busy", "true");
    try {
      await drawView(box);
    } finally {
      if (drawing.get(box) === token) box.removeAttribute("aria-busy");
    }
  }

  async function drawView(box) {
    const select = box.id === "view" ? $("#view-kind") : null;
    const { kind, options } = parseView(select ? currentView() : box.dataset.spec);
    const table = select ? $("#results-table") : null;
    if (table) table.hidden = kind !== "table";
    box.hidden = kind === "table";
    box.replaceChildren();
    if (select && !CHARTS.includes(kind)) showAxes(kind, [], {});
    if (kind === "table") return enhanceTable();
    const results = await resultsOf(box.dataset.results);
    const columns = results.head.vars;
    let rows = rowsOf(results);
    if (kind === "bar" || kind === "line" || kind === "timeline") {
      const names = await labels(rows.flatMap((r) => Object.values(r))); // entities by name on the axes
      rows = rows.map((r) => Object.fromEntries(Object.entries(r).map(([c, v]) => [c, names[v] || v])));
    }
    if (rows.length === 0) { // nothing to draw: said, as the view picker says it
      const note = document.createElement("p");
      note.className = "note";
      note.textContent = document.documentElement.lang === "zh" ? "没有可绘制的结果" : "no rows to draw";
      box.appendChild(note);
      return;
    }
    const chart = document.createElement("div");
    chart.className = "chart";
    box.appendChild(chart);
    if (kind === "bar" || kind === "line" || kind === "timeline") {
      await vega();
      const titles = JSON.parse(box.dataset.titles || "{}"); // each column's words, in the page's language
      const title = (column) => titles[column] || column;
      const percent = JSON.parse(box.dataset.percent || "[]"); // shares of a whole: 28.7%, not 0.287
      const { x, y, series } = guess(columns, rows, options);
      if (select) showAxes(kind, columns, kind === "timeline" ? { x: options.x || x, y: options.label || series || x } : { x, y, series });
      if (kind !== "timeline" && rows.every((r) => r[y] === undefined || r[y] === "")) {
        box.replaceChildren(nothingToDraw(y)); // an empty frame with one "0" tick said nothing
        if (table) { table.hidden = false; enhanceTable(); }
        return;
      }
      let spec;
      if (kind === "timeline") {
        spec = { mark: { type: "point", filled: true }, encoding: {
          x: { field: options.x || x, type: "temporal", title: title(options.x || x) },
          y: { field: options.label || series || x, type: "nominal", title: title(options.label || series || x) },
          tooltip: columns.map((c) => ({ field: c })) } };
      } else {
        // Years and other numbers on x keep the query's order; names are ranked by their bars.
        // Counts get whole-number ticks (no "0.5 papers").
        const xNumeric = rows.length > 0 && rows.every((r) => typeof r[x] === "number");
        const yWhole = rows.every((r) => r[y] === undefined || Number.isInteger(r[y]));
        // Without a series, rows sharing an x stack into one bar: the axis must reach their sum.
        const heights = new Map();
        rows.forEach((r, i) => { const key = series ? i : r[x]; heights.set(key, (heights.get(key) || 0) + (Number(r[y]) || 0)); });
        const yMax = Math.max(0, ...heights.values());
        const wholeTicks = yMax <= 10 ? { values: Array.from({ length: yMax + 1 }, (_, i) => i) } : { tickMinStep: 1 };
        spec = { mark: { type: kind, tooltip: true }, encoding: {
          x: { field: x, title: title(x), type: kind === "line" ? "ordinal" : "nominal", sort: kind === "bar" && !xNumeric ? "-y" : null },
          y: { field: y, title: title(y), type: "quantitative",
            ...(percent.includes(y) ? { axis: { format: ".0%" } } : yWhole ? { axis: { format: "d", ...wholeTicks } } : {}) } } };
        // the tooltip names each field as the axes do, a share in percent
        spec.encoding.tooltip = [x, y, series].filter(Boolean).map((c) =>
          ({ field: c, title: title(c), ...(percent.includes(c) ? { format: ".1%" } : {}) }));
        if (series) {
          spec.encoding.color = { field: series, title: title(series), type: "nominal" };
          if (kind === "bar") spec.encoding.xOffset = { field: series, type: "nominal" };
        }
        // Names on a phone: bars lie down, one row per name, read across (upright names under
        // narrow bars were unreadable at 400 px); a series stacks within its name's bar.
        if (kind === "bar" && !xNumeric && chart.clientWidth < 600) spec = lying(spec);
      }
      spec = { $schema: "https://vega.github.io/schema/vega-lite/v5.json", data: { values: rows }, width: "container",
        height: 320, ...spec };
      await vegaEmbed(chart, spec, EMBED());
      describeChart(box, chart, kind, rows, options.x || x, y);
    } else if (kind === "graph") {
      await script("vendor/cytoscape/cytoscape.min.js");
      const source = options.source || columns[0];
      const target = options.target || columns[1];
      const names = await labels(rows.flatMap((r) => [r[source], r[target]]));
      const nodes = new Map();
      rows.forEach((r) => [r[source], r[target]].forEach((id) => nodes.set(id, { data: { id, label: names[id] || id.split("/").pop() } })));
      const edges = rows.map((r, i) => ({ data: { id: `e${i}`, source: r[source], target: r[target], weight: Number(r[options.weight] || 1) } }));
      chart.classList.add("graph");
      const graph = cytoscape({
        container: chart, elements: [...nodes.values(), ...edges],
        style: [
          { selector: "node", style: { label: "data(label)", "font-size": 11, "background-color": "#4a78a8", width: 14, height: 14,
            "text-background-color": "#fff", "text-background-opacity": 0.85, "text-background-padding": 1 } },
          { selector: "edge", style: { width: "mapData(weight, 1, 5, 1, 6)", "line-color": "#9ab" } },
        ],
        layout: { name: "circle" }, // distinct places to start from: the same rows draw the same graph (cose parts nodes sharing a place at random)
        maxZoom: 1.5,
      });
      // each node as wide as its name, so that names keep apart ("Brian McWilliamsDan Berenberg")
      graph.layout({ name: "cose", animate: false, nodeDimensionsIncludeLabels: true, idealEdgeLength: () => 80, randomize: false }).run();
      keepNamesApart(graph);
      graph.fit(undefined, 30);
      window.lastGraph = graph;
      graph.on("tap", "node", (event) => {
        // Follow only our own entities: compare parsed origins, since a prefix test passes
        // "http://HOST:PORT@evil.example/" (user info) for "http://HOST:PORT".
        let target;
        try { target = new URL(event.target.id()); } catch { return; }
        if (target.origin === location.origin) {
          location.href = target.pathname + target.search;
        } else if (target.origin === "https://w3id.org" && target.pathname.startsWith("/iclr-kg/resource/")) {
          location.href = target.pathname.slice("/iclr-kg".length) + target.search;
        }
      });
    } else if (kind === "tree") {
      await vega();
      const node = options.node || columns[0];
      const parent = options.parent || columns[1];
      const [column, value] = (options.where || ":").split(":");
      const kept = rows.filter((r) => !column || String(r[column]) === value);
      const names = await labels(kept.flatMap((r) => [r[node], r[parent]]));
      const ids = new Set(kept.map((r) => r[node]));
      const tree = [{ id: "root", parent: null, name: "" }];
      const seen = new Set();
      kept.forEach((r) => { if (!seen.has(r[node])) { seen.add(r[node]); tree.push({ id: r[node], parent: r[parent], name: names[r[node]] || r[node] }); } });
      kept.forEach((r) => { if (!ids.has(r[parent]) && !seen.has(r[parent])) { seen.add(r[parent]); tree.push({ id: r[parent], parent: "root", name: names[r[parent]] || r[parent] }); } });
      const spec = treeSpec(tree);
      await vegaEmbed(chart, spec, EMBED());
    }
  }

  // Cose keeps names apart only by a soft force, and it takes a node's width for its height
  // (cytoscape's cose.mjs: `height = nbb.w, width = nbb.h`): side by side, names could still
  // cover each other (one layout in about twenty, "Ian Gemp" over "Luke Marris"). Afterwards,
  // each pair of boxes (a node and its name) that still meet moves apart along the axis where
  // the shorter move parts them, until none meet.
  function keepNamesApart(graph, gap = 2, rounds = 200) {
    const nodes = graph.nodes().toArray();
    const boxes = nodes.map((node) => {
      const { x, y } = node.position();
      const b = node.boundingBox({ includeEdges: false });
      return { at: [x, y], before: [x - b.x1, y - b.y1], after: [b.x2 - x, b.y2 - y] };
    });
    // how far apart a and b must move on an axis, the first of them to the lower side
    const parting = (a, b, axis) => {
      const [low, high] = a.at[axis] <= b.at[axis] ? [a, b] : [b, a];
      return [low.at[axis] + low.after[axis] - (high.at[axis] - high.before[axis]) + gap, low === a ? 1 : -1];
    };
    for (let round = 0; round < rounds; round++) {
      let moved = false;
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          const [a, b] = [boxes[i], boxes[j]];
          const [[dx, sx], [dy, sy]] = [parting(a, b, 0), parting(a, b, 1)];
          if (dx <= 0 || dy <= 0) continue;
          const [axis, distance, side] = dx <= dy ? [0, dx, sx] : [1, dy, sy];
          a.at[axis] -= (side * distance) / 2;
          b.at[axis] += (side * distance) / 2;
          moved = true;
        }
      }
      if (!moved) break;
    }
    nodes.forEach((node, i) => node.position({ x: boxes[i].at[0], y: boxes[i].at[1] }));
  }

  // The y column has no value in any row: said, and the rows shown as a table instead.
  function nothingToDraw(y) {
    const note = document.createElement("p");
    note.className = "note";
    note.id = "view-empty";
    note.textContent = document.documentElement.lang === "zh"
      ? `${y} 列在每一行都没有值，无可绘制：以表格显示`
      : `${y} has no value in any row, so there is nothing to draw: shown as a table`;
    return note;
  }

  // A bar chart's spec turned on its side: names down the y axis, each a row of its own.
  function lying(spec) {
    const { x, y, color, tooltip } = spec.encoding;
    const encoding = { y: { ...x, sort: "-x", axis: { labelLimit: 150, title: null } }, x: y, tooltip };
    if (color) encoding.color = { ...color, legend: { orient: "bottom", columns: 4 } };
    return { ...spec, encoding, height: { step: 18 } };
  }

  async function labels(iris) {
    const unique = [...new Set(iris.filter((i) => typeof i === "string" && i.startsWith("http")))];
    if (unique.length === 0) return {};
    const answer = await fetch("/api/labels", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ iris: unique }) });
    return answer.ok ? answer.json() : {};
  }

  function treeSpec(values) {
    const height = Math.max(200, values.length * 18);
    return {
      $schema: "https://vega.github.io/schema/vega/v5.json", width: 700, height, padding: 5,
      data: [
        { name: "tree", values, transform: [
          { type: "stratify", key: "id", parentKey: "parent" },
          { type: "tree", method: "tidy", size: [{ signal: "height" }, { signal: "width - 200" }], as: ["y", "x", "depth", "children"] },
        ] },
        { name: "links", source: "tree", transform: [{ type: "treelinks" }, { type: "linkpath", orient: "horizontal", shape: "diagonal" }] },
      ],
      marks: [
        { type: "path", from: { data: "links" }, encode: { update: { path: { field: "path" }, stroke: { value: "#9ab" } } } },
        { type: "symbol", from: { data: "tree" }, encode: { enter: { size: { value: 60 }, fill: { value: "#4a78a8" } },
          update: { x: { field: "x" }, y: { field: "y" } } } },
        { type: "text", from: { data: "tree" }, encode: { enter: { text: { field: "name" }, fontSize: { value: 11 }, baseline: { value: "middle" } },
          update: { x: { field: "x" }, y: { field: "y" }, dx: { value: 7 } } } },
      ],
    };
  }

  function enhanceTable() {
    const table = $("#results-table table");
    if (!table || table.dataset.enhanced) return;
    table.dataset.enhanced = "1";
    const body = table.tBodies[0];
    const filter = $("#filter");
    if (filter) {
      filter.hidden = false;
      filter.addEventListener("input", () => {
        const text = filter.value.toLowerCase();
        [...body.rows].forEach((row) => { row.hidden = text && !row.textContent.toLowerCase().includes(text); });
      });
    }
    $$("th", table).forEach((header, column) => {
      header.tabIndex = 0;
      header.setAttribute("aria-sort", "none");
      const sort = () => {
        const ascending = header.getAttribute("aria-sort") !== "ascending";
        $$("th", table).forEach((h) => h.setAttribute("aria-sort", "none"));
        header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const value = (row) => row.cells[column].textContent.trim().replace(/^-?[\d,]+(\.\d+)?$/, (n) => n.replace(/,/g, "")); // 19,797
        const rows = [...body.rows].sort((a, b) => {
          const [x, y] = [value(a), value(b)];
          const order = !isNaN(x) && !isNaN(y) && x !== "" && y !== "" ? Number(x) - Number(y) : x.localeCompare(y);
          return ascending ? order : -order;
        });
        body.append(...rows);
      };
      header.addEventListener("click", sort);
      header.addEventListener("keydown", (event) => { if (event.key === "Enter") sort(); });
    });
  }

  // Returns when the result's first view is drawn (or could not be).
  async function initViews() {
    const select = $("#view-kind");
    if (!select) return;
    select.hidden = false;
    select.addEventListener("change", () => {
      // Another chart keeps the axes chosen for the last one; any other view starts afresh.
      const { kind, options } = parseView(select.dataset.spec);
      const kept = CHARTS.includes(kind) && CHARTS.includes(select.value) ? options : {};
      setView(specOf(select.value, kept));
    });
    await renderView().catch(showViewError);
  }

  function showViewError(error, box = $("#view")) {
    if (box) box.textContent = `This view could not be drawn: ${error.message}`;
  }

  document.addEventListener("DOMContentLoaded", async () => {
    initEditor();
    initTools();
    // The first check of the text waits for the result's rows: a client gets its share of the
    // query workers (half of them), and the two at once were one too many for the rows.
    initViews().finally(lint);
    try {
      vocabulary = await (await fetch("/api/vocabulary")).json();
    } catch (error) {
      /* completion falls back to nothing; the editor still works */
    }
  });
})();
