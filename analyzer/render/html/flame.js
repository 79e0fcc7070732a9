/*
 * memtrace flamegraph: the SVG's script (mt_flamesvg.h says what the
 * document holds).  It reads every frame's place off its <rect> and its
 * name off its <title>, then zooms, searches and shows details in place.
 * It must fetch nothing and refer to nothing outside the document.
 */
(function () {
  'use strict';
  var CHAR_W = 12 * 0.59, MATCH = 'rgb(230,0,230)', EPS = 0.02;
  var frames = [].slice.call(document.querySelectorAll('g.f')).map(function (g) {
    var r = g.querySelector('rect'), title = g.querySelector('title').textContent;
    return { g: g, r: r, t: g.querySelector('text'), x: +r.getAttribute('x'),
      w: +r.getAttribute('width'), y: +r.getAttribute('y'), fill: r.getAttribute('fill'),
      title: title, name: title.slice(0, title.lastIndexOf(' (')) };
  });
  var details = document.getElementById('details'), matched = document.getElementById('matched');
  var unzoomCtl = document.getElementById('unzoom'), searchCtl = document.getElementById('search');
  var root = null, zoomed = null, query = null;
  frames.forEach(function (f) { if (!root || f.y > root.y) root = f; });

  /* The name cut to w pixels, as mt_flamesvg.c cuts it. */
  function label(name, w) {
    var chars = Array.from(name), n = w > 6 ? Math.floor((w - 6) / CHAR_W) : 0;
    if (n < 3) return '';
    return chars.length <= n ? name : chars.slice(0, n - 2).join('') + '..';
  }
  function place(f, x, w) {
    f.r.setAttribute('x', x.toFixed(2));
    f.r.setAttribute('width', w.toFixed(2));
    f.t.setAttribute('x', (x + 3).toFixed(2));
    f.t.textContent = label(f.name, w);
    f.g.classList.remove('gone');
  }

  /* Frame f fills the width; the frames above it spread in proportion,
   * its callers stay (full width, faded), every other frame goes. */
  function zoom(f) {
    if (!root || f === root) return unzoom();
    var scale = root.w / f.w;
    zoomed = f;
    frames.forEach(function (o) {
      o.g.classList.remove('parent');
      if (o.y > f.y) {
        if (o.x <= f.x + EPS && o.x + o.w >= f.x + f.w - EPS) {
          place(o, root.x, root.w);
          if (o !== root) o.g.classList.add('parent');
        } else {
          o.g.classList.add('gone');
        }
      } else if (o.x >= f.x - EPS && o.x + o.w <= f.x + f.w + EPS) {
        place(o, root.x + (o.x - f.x) * scale, Math.min(o.w * scale, root.w));
      } else {
        o.g.classList.add('gone');
      }
    });
    unzoomCtl.classList.remove('hidden');
  }
  function unzoom() {
    zoomed = null;
    frames.forEach(function (o) { o.g.classList.remove('parent'); place(o, o.x, o.w); });
    unzoomCtl.classList.add('hidden');
  }

  /* Paint the frames whose name matches re; the share they cover is the
   * union of their spans over the root's, so a frame and its caller that
   * both match count once. */
  function search(re) {
    var rx;
    try { rx = new RegExp(re); } catch (e) { matched.textContent = 'bad regular expression: ' + re; return; }
    var spans = [];
    frames.forEach(function (f) {
      var hit = rx.test(f.name);
      f.r.setAttribute('fill', hit ? MATCH : f.fill);
      f.g.classList.toggle('match', hit);
      if (hit) spans.push([f.x, f.x + f.w]);
    });
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var covered = 0, end = -Infinity;
    spans.forEach(function (s) {
      if (s[0] > end) { covered += s[1] - s[0]; end = s[1]; }
      else if (s[1] > end) { covered += s[1] - end; end = s[1]; }
    });
    query = re;
    matched.textContent = 'Matched: ' + (root ? (100 * covered / root.w).toFixed(1) : '0.0') + '%';
    searchCtl.textContent = 'Reset search';
  }
  function resetSearch() {
    query = null;
    frames.forEach(function (f) { f.r.setAttribute('fill', f.fill); f.g.classList.remove('match'); });
    matched.textContent = ' ';
    searchCtl.textContent = 'Search';
  }
  function ask() {
    var re = window.prompt('Search frames (regular expression):', query || '');
    if (re) search(re);
  }

  frames.forEach(function (f) {
    f.g.addEventListener('click', function () { zoom(f); });
    f.g.addEventListener('mouseover', function () { details.textContent = f.title; });
    f.g.addEventListener('mouseout', function () { details.textContent = ' '; });
  });
  unzoomCtl.addEventListener('click', unzoom);
  searchCtl.addEventListener('click', function () { if (query !== null) resetSearch(); else ask(); });
  window.addEventListener('keydown', function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); ask(); }
    else if (e.key === 'Escape') { resetSearch(); unzoom(); }
  });
  /* For a reader driving the page (the browser tests, a console). */
  window.memtraceFlame = { zoom: function (i) { zoom(frames[i]); }, unzoom: unzoom, search: search,
    resetSearch: resetSearch };
  document.documentElement.setAttribute('data-ready', 'yes');
})();
