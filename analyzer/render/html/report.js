/*
 * memtrace html: the page's script.  It reads the data of
 * <script type="application/json" id="memtrace-data"> (mt_html.h says
 * what it holds) and draws everything from it: it must fetch nothing and
 * refer to nothing outside the page, so it names no URL at all (even the
 * SVG namespace is read off an <svg> the HTML parser made).
 */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('memtrace-data').textContent);
  var STR = D.strings;
  var HEAP = '#1f5fa8', BLOCKS = '#c05a00';
  var FIGURES = [
    { key: 'calls', label: 'allocation calls', unit: count },
    { key: 'bytes_allocated', label: 'bytes allocated', unit: size },
    { key: 'peak', label: 'live at the peak', unit: size },
    { key: 'leaked', label: 'leaked (live at the end)', unit: size }
  ];

  /* ---- formats ---- */
  function count(n) { return Number(n).toLocaleString('en-US'); }
  function size(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    b = Number(b);
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(b < 10 ? 2 : b < 100 ? 1 : 0) : String(b)) + ' ' + u[i];
  }
  function dur(ns) {
    ns = Number(ns);
    if (ns < 1e3) return ns + ' ns';
    if (ns < 1e6) return (ns / 1e3).toPrecision(3) + ' \u00b5s';
    if (ns < 1e9) return (ns / 1e6).toPrecision(3) + ' ms';
    return (ns / 1e9).toPrecision(4) + ' s';
  }
  function xfmt(x) { return D.series.x === 'ns' ? dur(x) : 'seq ' + count(Math.round(x)); }
  /* A time axis's labels: one unit for the whole axis, the largest that
   * the span (x1 - x0) holds once, and no more decimals than the step
   * needs, trailing zeros dropped ("0 s", "0.5 s", "1 s"); a seq axis's
   * as xfmt. */
  var TIME_UNITS = [[1, 'ns'], [1e3, '\u00b5s'], [1e6, 'ms'], [1e9, 's']];
  function axisFmt(x0, x1, step) {
    if (D.series.x !== 'ns') return xfmt;
    var u = TIME_UNITS[0], d = 0;
    TIME_UNITS.forEach(function (t) { if (t[0] <= x1 - x0) u = t; });
    while (d < 9 && Math.abs(step / u[0] * Math.pow(10, d) - Math.round(step / u[0] * Math.pow(10, d))) > 1e-6) d++;
    return function (v) {
      var s = (v / u[0]).toFixed(d);
      if (d) s = s.replace(/\.?0+$/, '');
      return (s === '-0' ? '0' : s) + ' ' + u[1];
    };
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c];
    });
  }
  function pct(v, t) { return t ? (100 * v / t).toFixed(1) + ' %' : '-'; }

  /* ---- the page's skeleton ---- */
  var T = D.totals, V = D.verdict;
  var complete = V.status === 'complete';
  var html = '<h1 id="program">memtrace: ' + esc(D.program || D.name) +
    (D.program ? ' <span class="note" id="trace-name">(' + esc(D.name) + ')</span>' : '') + '</h1>';
  html += '<div id="verdict" class="verdict ' + (complete ? 'complete' : 'caveated') + '">';
  if (complete) {
    html += '<b>Integrity: complete</b> \u2014 the trace starts and stops, with no gap, no ' +
      'malformed event and nothing dropped: the figures below are the whole run.';
  } else {
    html += '<b>Integrity: CAVEATED (' + esc(V.status) + ')</b> \u2014 the trace may not hold ' +
      'the whole run: every figure below covers only what it recorded.<ul>';
    V.caveats.forEach(function (c) {
      html += '<li>' + esc(c.name) + ': ' + esc(c.message) + '</li>';
    });
    html += '</ul>';
  }
  html += '</div>';
  if (T.sample_bytes)
    html += '<div id="sampled" class="verdict caveated"><b>Sampled</b> \u2014 one allocation ' +
      'recorded per ' + esc(String(T.sample_bytes)) + ' bytes allocated, on average ' +
      '(MEMTRACE_SAMPLE): every count and size below is an estimate, each total followed ' +
      'by its standard error (+-).</div>';
  html += '<h2>Totals</h2><div class="totals" id="totals"></div>';
  if (D.left_out)
    html += '<div class="note" id="left-out">Leaked figures: ' + esc(D.left_out) + '.</div>';
  html += '<h2>Live heap over time</h2><div class="controls"><span id="range-info" class="note">' +
    'Drag across the chart to select a range.</span><button id="range-reset">Whole run</button></div>' +
    '<div class="chart"><svg id="chart" width="1160" height="320"></svg></div>' +
    '<div class="readout" id="readout"></div>';
  html += '<h2>Flame graph</h2><div class="controls">By <select id="metric">';
  FIGURES.forEach(function (f, i) { html += '<option value="' + i + '">' + f.label + '</option>'; });
  html += '</select><input id="search" size="28" placeholder="search functions (regexp)">' +
    '<span id="search-info" class="note"></span><button id="flame-reset">Reset zoom</button></div>' +
    '<svg id="flame" width="1160" height="40"></svg><div class="readout" id="flame-readout">' +
    'Click a frame to zoom in, the top bar to zoom out.</div>';
  if (D.flame.left_out)
    html += '<div class="note">' + count(D.flame.left_out) + ' smaller frames, under 0.1 % of ' +
      'every figure, are left out of this page; their figures stay in their callers\u2019.</div>';
  html += '<h2>Top sites</h2><div class="note">The top sites by each figure (' +
    count(D.sites.length) + ' of ' + count(D.sites_total) + '); click a column to sort, a row ' +
    'to see its stack.</div><div class="tablewrap"><table class="sites" id="sites"></table></div>' +
    '<div id="site" hidden></div>';
  var main = document.createElement('main');
  main.innerHTML = html;
  document.body.appendChild(main);
  var NS = document.getElementById('chart').namespaceURI;

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  /* ---- totals ---- */
  /* A sampled trace's figure, then its standard error: "18.5 MiB +- 1.0 MiB". */
  function pm(key, fmt) {
    var e = T[key + '_stderr'];
    return fmt(T[key]) + (e === undefined ? '' : ' +- ' + fmt(e));
  }
  var tot = [
    ['peak live', pm('peak_live_bytes', size) + ' in ' + pm('peak_live_allocations', count) +
      ' blocks'],
    ['live at the end', pm('live_bytes', size) + ' in ' + pm('live_allocations', count) + ' blocks'],
    ['allocations', pm('allocations', count)], ['frees', pm('frees', count)],
    ['resizes + remaps', pm('resizes', count) + ' + ' + pm('remaps', count)],
    ['bytes allocated', pm('bytes_allocated', size)], ['bytes freed', pm('bytes_freed', size)],
    ['temporary allocations', count(T.temporary_allocations)],
    ['failed allocations', count(T.failed_allocations)],
    ['unknown frees', count(T.unknown_frees)], ['threads', count(T.threads)],
    ['events', count(T.events)], ['duration', T.duration_ns ? dur(T.duration_ns) : '-']
  ];
  document.getElementById('totals').innerHTML = tot.map(function (p) {
    return '<div><span class="k">' + esc(p[0]) + '</span><span class="v">' + esc(p[1]) + '</span></div>';
  }).join('');

  /* ---- axes ---- */
  function ticks(max, n) {
    if (!(max > 0)) return { step: 1, end: 1 };
    var raw = max / n, mag = Math.pow(10, Math.floor(Math.log10(raw))), step = mag;
    [1, 2, 2.5, 5, 10].some(function (m) { step = m * mag; return m * mag >= raw; });
    return { step: step, end: Math.ceil(max / step) * step };
  }
  function bytesTicks(max, n) {
    /* Powers of two for bytes, so labels come out round in KiB, MiB. */
    if (!(max > 0)) return { step: 1, end: 1 };
    var raw = max / n, step = Math.pow(2, Math.ceil(Math.log2(raw)));
    if (step / 2 >= raw * 0.75) step /= 2;
    return { step: step, end: Math.ceil(max / step) * step };
  }

  /* A step curve of samples [x, y, ...] over [x0, x1]: the vertices,
   * each sample's value holding until the next. */
  function steps(pts, x0, x1) {
    var out = [], y = 0;
    for (var i = 0; i < pts.length; i += 2) {
      var x = pts[i], v = pts[i + 1];
      if (x < x0) { y = v; continue; }
      if (x > x1) break;
      if (!out.length) out.push([x0, y]);
      out.push([x, y], [x, v]);
      y = v;
    }
    if (!out.length) out.push([x0, y]);
    out.push([x1, y]);
    return out;
  }
  function valueAt(pts, x) {
    var y = 0;
    for (var i = 0; i < pts.length && pts[i] <= x; i += 2) y = pts[i + 1];
    return y;
  }
  function maxIn(pts, x0, x1) {
    var m = valueAt(pts, x0);
    for (var i = 0; i < pts.length; i += 2)
      if (pts[i] >= x0 && pts[i] <= x1 && pts[i + 1] > m) m = pts[i + 1];
    return m;
  }

  /* ---- the chart: live bytes (left axis) and blocks (right) ---- */
  var S = D.series, chart = document.getElementById('chart');
  var CW = 1160, CH = 320, L = 78, R = 70, TOP = 12, B = 32, PW = CW - L - R, PH = CH - TOP - B;
  var range = [0, Math.max(S.x_end, 1)];

  function drawChart() {
    while (chart.firstChild) chart.removeChild(chart.firstChild);
    var x0 = range[0], x1 = range[1];
    var yb = bytesTicks(Math.max(T.peak_live_bytes, 1), 5);
    var yk = ticks(Math.max(T.peak_live_allocations, 1), 5);
    var xt = ticks(x1 - x0, 8), xlabel = axisFmt(x0, x1, xt.step);
    function px(x) { return L + (x - x0) / (x1 - x0) * PW; }
    function py(v, ax) { return TOP + PH - v / ax.end * PH; }
    el('rect', { x: L, y: TOP, width: PW, height: PH, fill: 'none', stroke: '#999' }, chart);
    for (var v = 0; v <= yb.end + 1e-9; v += yb.step) {
      var y = py(v, yb);
      if (v) el('line', { x1: L, x2: L + PW, y1: y, y2: y, stroke: '#e6e6e6' }, chart);
      el('text', { x: L - 6, y: y + 4, 'text-anchor': 'end' }, chart).textContent = size(v);
    }
    for (v = 0; v <= yk.end + 1e-9; v += yk.step)
      el('text', { x: L + PW + 6, y: py(v, yk) + 4 }, chart).textContent = count(v);
    for (v = Math.ceil(x0 / xt.step) * xt.step; v <= x1; v += xt.step) {
      var x = px(v);
      el('line', { x1: x, x2: x, y1: TOP + PH, y2: TOP + PH + 4, stroke: '#999' }, chart);
      el('text', { x: x, y: TOP + PH + 17, 'text-anchor': 'middle', 'class': 'xtick' }, chart).textContent = xlabel(v);
    }
    if (!S.heap_events) {
      el('text', { x: L + PW / 2, y: TOP + PH / 2, 'text-anchor': 'middle' }, chart).textContent =
        'no allocation or free in this trace';
      return;
    }
    /* Every shape in pixels, no transform (see `memtrace plot`). */
    var vb = steps(S.bytes, x0, x1), pb = vb.map(function (p) {
      return px(p[0]).toFixed(2) + ',' + py(p[1], yb).toFixed(2);
    });
    el('polygon', { id: 'live-bytes-area', fill: HEAP, 'fill-opacity': 0.25, stroke: 'none',
      points: px(x0).toFixed(2) + ',' + (TOP + PH) + ' ' + pb.join(' ') + ' ' +
        px(x1).toFixed(2) + ',' + (TOP + PH) }, chart);
    el('polyline', { id: 'live-blocks', fill: 'none', stroke: BLOCKS, 'stroke-width': 1,
      points: steps(S.blocks, x0, x1).map(function (p) {
        return px(p[0]).toFixed(2) + ',' + py(p[1], yk).toFixed(2);
      }).join(' ') }, chart);
    el('polyline', { id: 'live-bytes', fill: 'none', stroke: HEAP, 'stroke-width': 2,
      'stroke-linejoin': 'round', points: pb.join(' ') }, chart);
    el('text', { x: L + 4, y: TOP + 14, fill: HEAP }, chart).textContent = '\u2014 live heap (left)';
    el('text', { x: L + 130, y: TOP + 14, fill: BLOCKS }, chart).textContent = '\u2014 live blocks (right)';
    cursor = el('line', { id: 'cursor', y1: TOP, y2: TOP + PH, stroke: '#555',
      'stroke-dasharray': '3,3', visibility: 'hidden' }, chart);
    sel = el('rect', { id: 'selection', y: TOP, height: PH, fill: '#888', 'fill-opacity': 0.2,
      visibility: 'hidden' }, chart);
  }
  var cursor, sel, dragFrom = null;
  function xOfEvent(e) {
    var r = chart.getBoundingClientRect();
    var p = (e.clientX - r.left) * CW / r.width;
    return Math.min(Math.max(p, L), L + PW);
  }
  function valueOfPx(p) { return range[0] + (p - L) / PW * (range[1] - range[0]); }
  chart.addEventListener('mousemove', function (e) {
    if (!S.heap_events) return;
    var p = xOfEvent(e), x = valueOfPx(p);
    cursor.setAttribute('x1', p); cursor.setAttribute('x2', p);
    cursor.setAttribute('visibility', 'visible');
    document.getElementById('readout').textContent = 'at ' + xfmt(x) + ': ' +
      size(valueAt(S.bytes, x)) + ' live in ' + count(valueAt(S.blocks, x)) + ' blocks';
    if (dragFrom !== null) {
      sel.setAttribute('x', Math.min(dragFrom, p));
      sel.setAttribute('width', Math.abs(p - dragFrom));
      sel.setAttribute('visibility', 'visible');
    }
  });
  chart.addEventListener('mouseleave', function () {
    if (cursor) cursor.setAttribute('visibility', 'hidden');
  });
  chart.addEventListener('mousedown', function (e) {
    if (S.heap_events) { dragFrom = xOfEvent(e); e.preventDefault(); }
  });
  window.addEventListener('mouseup', function (e) {
    if (dragFrom === null) return;
    var p = xOfEvent(e), a = Math.min(dragFrom, p), b = Math.max(dragFrom, p);
    dragFrom = null;
    if (b - a < 3) { sel.setAttribute('visibility', 'hidden'); return; }
    setRange(valueOfPx(a), valueOfPx(b));
  });
  function setRange(a, b) {
    range = [a, b];
    var info = document.getElementById('range-info');
    if (a <= 0 && b >= S.x_end) {
      info.textContent = 'Drag across the chart to select a range.';
    } else {
      var s0 = valueAt(S.bytes, a), s1 = valueAt(S.bytes, b);
      info.textContent = 'range ' + xfmt(a) + ' \u2013 ' + xfmt(b) + ': live ' + size(s0) +
        ' \u2192 ' + size(s1) + ' (' + (s1 >= s0 ? '+' : '\u2212') + size(Math.abs(s1 - s0)) +
        '), highest ' + size(maxIn(S.bytes, a, b));
    }
    drawChart();
  }
  document.getElementById('range-reset').addEventListener('click', function () {
    setRange(0, Math.max(S.x_end, 1));
  });
  drawChart();

  /* ---- the flame graph: an icicle, the callers on top ---- */
  var F = D.flame, FW = 1160, ROW = 18;
  var root = { name: 'all', v: F.total, kids: [], parent: null, depth: 0 };
  var nodes = [root];
  F.nodes.forEach(function (n) {
    var p = nodes[n[1]] || root;
    if (!n[1]) p = root;
    var node = { name: STR[n[0]], v: n.slice(2, 6), kids: [], parent: p, depth: p.depth + 1 };
    p.kids.push(node);
    nodes.push(node);
  });
  var flame = document.getElementById('flame'), metric = 0, focus = root, pattern = null;
  function colour(name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return 'hsl(' + (10 + h % 40) + ',' + (70 + h % 20) + '%,' + (55 + (h >> 8) % 15) + '%)';
  }
  function drawFlame() {
    while (flame.firstChild) flame.removeChild(flame.firstChild);
    var total = focus.v[metric], deepest = 0, matched = 0;
    var chain = [];
    for (var a = focus; a; a = a.parent) chain.unshift(a);
    function box(n, x, w, depth) {
      var g = el('g', {}, flame);
      var r = el('rect', { class: 'node', x: x.toFixed(2), y: depth * ROW, width: Math.max(w, 0.5).toFixed(2),
        height: ROW - 1, fill: n === root ? '#d8d8d8' : colour(n.name) }, g);
      r.__node = n;
      r.setAttribute('data-name', n.name);
      if (pattern && n !== root && pattern.test(n.name)) r.classList.add('match');
      if (w > 28) {
        var t = el('text', { x: x + 3, y: depth * ROW + 13 }, g);
        var s = n === root ? 'all (' + FIGURES[metric].unit(n.v[metric]) + ')' : n.name;
        var fit = Math.floor((w - 6) / 6.5);
        t.textContent = s.length > fit ? s.slice(0, Math.max(fit - 1, 1)) + '\u2026' : s;
      }
      if (depth > deepest) deepest = depth;
    }
    chain.forEach(function (n, d) { box(n, 0, FW, d); });
    function lay(n, x, depth) {
      var kids = n.kids.filter(function (k) { return k.v[metric] > 0; });
      kids.sort(function (p, q) { return q.v[metric] - p.v[metric]; });
      kids.forEach(function (k) {
        var w = total ? k.v[metric] / total * FW : 0;
        if (w >= 0.3) { box(k, x, w, depth); lay(k, x, depth + 1); }
        x += w;
      });
    }
    if (total) lay(focus, 0, chain.length);
    flame.setAttribute('height', (deepest + 1) * ROW + 2);
    if (pattern) {
      /* The share of the figure under the outermost matching frames. */
      (function sum(n, inside) {
        var hit = n !== root && pattern.test(n.name);
        if (hit && !inside) matched += n.v[metric];
        n.kids.forEach(function (k) { sum(k, inside || hit); });
      })(root, false);
      document.getElementById('search-info').textContent =
        (function (n) { return n + (n === 1 ? ' frame' : ' frames'); })(
          flame.querySelectorAll('rect.match').length) + ' drawn match: ' +
        pct(matched, root.v[metric]) + ' of all ' + FIGURES[metric].label;
    } else {
      document.getElementById('search-info').textContent = '';
    }
  }
  flame.addEventListener('click', function (e) {
    var n = e.target.__node;
    if (!n) return;
    focus = n === focus && n.parent ? n.parent : n;
    drawFlame();
  });
  flame.addEventListener('mousemove', function (e) {
    var n = e.target.__node;
    if (!n) return;
    document.getElementById('flame-readout').textContent = n.name + ': ' +
      FIGURES.map(function (f, i) { return f.unit(n.v[i]) + ' ' + f.label; }).join(', ') +
      ' (' + pct(n.v[metric], root.v[metric]) + ' of the ' + FIGURES[metric].label + ')';
  });
  document.getElementById('metric').addEventListener('change', function (e) {
    metric = Number(e.target.value);
    focus = root;
    drawFlame();
  });
  document.getElementById('flame-reset').addEventListener('click', function () {
    focus = root;
    drawFlame();
  });
  document.getElementById('search').addEventListener('input', function (e) {
    var q = e.target.value;
    try { pattern = q ? new RegExp(q, 'i') : null; } catch (err) {
      pattern = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
    }
    drawFlame();
  });
  drawFlame();

  /* ---- the sites ---- */
  var COLS = [
    { key: 'fn', label: 'site (its first frame in the program\u2019s own code)' },
    { key: 'calls', label: 'calls', f: count },
    { key: 'bytes_allocated', label: 'bytes allocated', f: size },
    { key: 'peak', label: 'at the peak', f: size },
    { key: 'leaked', label: 'leaked', f: size },
    { key: 'peak_live_bytes', label: 'own peak', f: size },
    { key: 'temporary_allocations', label: 'temporary', f: count }
  ];
  var sites = D.sites.map(function (s, i) {
    s.index = i;
    /* The site's label: its first frame in the program's own code,
     * past the allocator, told apart from every other site's. */
    s.fn = STR[s.label];
    return s;
  });
  var sortKey = 'peak', sortDown = true, chosen = -1;
  var table = document.getElementById('sites');
  function drawTable() {
    sites.sort(function (a, b) {
      var x = a[sortKey], y = b[sortKey];
      var c = typeof x === 'string' ? x.localeCompare(y) : x - y;
      return (sortDown ? -c : c) || a.stack_id - b.stack_id;
    });
    var h = '<thead><tr>' + COLS.map(function (c) {
      return '<th data-key="' + c.key + '" class="' + (c.key === 'fn' ? 'fn ' : '') +
        (c.key === sortKey ? 'sorted' : '') + '">' + esc(c.label) + '</th>';
    }).join('') + '</tr></thead><tbody>';
    sites.forEach(function (s) {
      h += '<tr data-site="' + s.index + '"' + (s.index === chosen ? ' class="chosen"' : '') + '>' +
        COLS.map(function (c) {
          return c.key === 'fn' ? '<td class="fn">' + esc(s.fn) + '</td>' : '<td>' + esc(c.f(s[c.key])) + '</td>';
        }).join('') + '</tr>';
    });
    table.innerHTML = h + '</tbody>';
  }
  table.addEventListener('click', function (e) {
    var th = e.target.closest('th');
    if (th) {
      var k = th.getAttribute('data-key');
      sortDown = k === sortKey ? !sortDown : k !== 'fn';
      sortKey = k;
      drawTable();
      return;
    }
    var tr = e.target.closest('tr[data-site]');
    if (tr) showSite(Number(tr.getAttribute('data-site')));
  });
  function showSite(i) {
    var s = D.sites[i], box = document.getElementById('site');
    chosen = i;
    drawTable();
    var h = '<b>Site ' + s.stack_id + '</b>: ' + count(s.calls) + ' calls, ' + size(s.bytes_allocated) +
      ' allocated, ' + size(s.peak) + ' at the peak, ' + size(s.leaked) + ' leaked in ' +
      count(s.live_allocations) + ' blocks, its own peak ' + size(s.peak_live_bytes) + '.<ol>';
    s.stack.forEach(function (f) {
      h += '<li>' + esc(STR[f[0]]) + (STR[f[1]] ? ' <span class="where">at ' + esc(STR[f[1]]) +
        '</span>' : '') + '</li>';
    });
    if (s.truncated) h += '<li>[truncated: the stack was cut at the depth limit]</li>';
    h += '</ol>';
    if (s.series) {
      h += '<div>Its live bytes over time:</div><svg id="site-chart" width="1100" height="140"></svg>';
    } else {
      h += '<div class="note">No series of its own: ' + (typeof D.site_series === 'string' ?
        esc(D.site_series) : 'only the ' + 'top sites by their own peak have one') + '.</div>';
    }
    box.innerHTML = h;
    box.hidden = false;
    if (s.series) drawSiteSeries(document.getElementById('site-chart'), s);
  }
  function drawSiteSeries(svg, s) {
    var W = 1100, H = 140, l = 78, r = 20, t = 8, b = 24, pw = W - l - r, ph = H - t - b;
    var P = D.site_points, xe = S.x_end + 1, max = 1, pts = [];
    for (var k = 0; k < P; k++) max = Math.max(max, s.series[2 * k]);
    var ax = bytesTicks(max, 3);
    function px(x) { return l + x / xe * pw; }
    function py(v) { return t + ph - v / ax.end * ph; }
    var prev = 0;
    for (k = 0; k < P; k++) {
      var a = k * xe / P, z = (k + 1) * xe / P;
      pts.push([a, prev], [a, s.series[2 * k]], [z, s.series[2 * k + 1]]);
      prev = s.series[2 * k + 1];
    }
    el('rect', { x: l, y: t, width: pw, height: ph, fill: 'none', stroke: '#999' }, svg);
    for (var v = 0; v <= ax.end + 1e-9; v += ax.step)
      el('text', { x: l - 6, y: py(v) + 4, 'text-anchor': 'end' }, svg).textContent = size(v);
    /* Both ends in the chart's unit; the end with three digits. */
    var xl = axisFmt(0, S.x_end, Math.pow(10, Math.floor(Math.log10(Math.max(S.x_end, 1))) - 2));
    el('text', { x: l, y: H - 6 }, svg).textContent = xl(0);
    el('text', { x: l + pw, y: H - 6, 'text-anchor': 'end' }, svg).textContent = xl(S.x_end);
    var line = pts.map(function (p) { return px(p[0]).toFixed(2) + ',' + py(p[1]).toFixed(2); });
    el('polygon', { fill: HEAP, 'fill-opacity': 0.25, points: px(0) + ',' + (t + ph) + ' ' +
      line.join(' ') + ' ' + px(xe) + ',' + (t + ph) }, svg);
    el('polyline', { id: 'site-live-bytes', fill: 'none', stroke: HEAP, 'stroke-width': 1.5,
      points: line.join(' ') }, svg);
  }
  drawTable();
  document.documentElement.setAttribute('data-drawn', 'yes');
})();
