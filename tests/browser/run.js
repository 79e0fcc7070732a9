#!/usr/bin/env node
/*
 * The browser tests (make browser-check): memtrace's pages opened in
 * Debian's Chromium, driven by puppeteer-core, offline.
 *
 *   node run.js BUILD_DIR [--screenshot PNG]
 *
 * Traces come from a real run of tests/workloads/wl_demo under the
 * preload, and from a generated 4.1 s trace (long in nanoseconds, where
 * a plot drawn in raw figures stopped filling).  The tests:
 *
 *   - `memtrace html`: the page loads with no console error; the chart
 *     and the flame graph are drawn; the readout follows the pointer; a
 *     drag selects a range; a click zooms the flame graph; a search
 *     highlights; a site's row shows its stack and its own series; and a
 *     screenshot has the heap's colour under the curve across the whole
 *     run;
 *     a sampled trace's totals show their standard errors (+-), a full
 *     trace's none;
 *   - `memtrace plot`: the same screenshot check on its SVG;
 *   - `memtrace flamegraph`: its SVG opened as a file; a click on a frame
 *     makes it the full width (its callers stay, the frames beside it
 *     go), Reset zoom and a click on the root give the widths back; a
 *     search paints exactly the matching frames and gives their share;
 *   - `memtrace export speedscope`: its four profiles, summing to the
 *     summary's peak, leaked, allocated bytes and calls, valid under
 *     speedscope's JSON schema
 *     (its package's file-format-schema.json, by the small validator
 *     below: the keywords that schema uses), and speedscope's own app (npm speedscope,
 *     its release index.html from a file:// URL, the profile handed over
 *     as its CLI does, #localProfilePath= a script that calls
 *     speedscope.loadFileFromBase64) draws the profile without error;
 *   - `memtrace export dhat`: Valgrind's dh_view.html loads the file
 *     through its file input and shows the tree without error, with the
 *     summary's totals, peak and end, blocks at the peak, an average
 *     lifetime that is not 0, and no "∞" (bytes in 0 blocks).
 *
 * With --screenshot PNG it also saves the HTML report of the real run
 * (the README's picture).  Prints one line a test ("ok - NAME" or
 * "not ok - NAME: why") and exits 1 when any failed.
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');
const { execFileSync } = require('child_process');
const puppeteer = require('puppeteer-core');

const ROOT = path.resolve(__dirname, '../..');
const args = process.argv.slice(2);
const BUILD = path.resolve(ROOT, args[0] || 'build');
const SHOT = args.indexOf('--screenshot') >= 0 ? path.resolve(args[args.indexOf('--screenshot') + 1]) : null;
const MEMTRACE = path.join(BUILD, 'memtrace');
const CHROMIUM = process.env.MEMTRACE_CHROMIUM || '/usr/bin/chromium';
const DH_VIEW = '/usr/libexec/valgrind/dh_view.html';
const SPEEDSCOPE = path.join(__dirname, 'node_modules/speedscope/dist/release/index.html');
const SPEEDSCOPE_SCHEMA = path.join(__dirname, 'node_modules/speedscope/dist/release/file-format-schema.json');

/*
 * The JSON Schema keywords speedscope's schema uses (type, properties,
 * required, items, const, enum, anyOf, $ref into definitions): the
 * first place v breaks schema, as "path: why", or null.  A library
 * (ajv) would be one more package for eleven keywords' worth of code.
 */
function schemaError(schema, v, root, at) {
  if (schema.$ref) {
    const name = decodeURIComponent(schema.$ref.replace(/^#\/definitions\//, ''));
    if (!root.definitions || !root.definitions[name]) return at + ': unknown $ref ' + schema.$ref;
    return schemaError(root.definitions[name], v, root, at);
  }
  if (schema.anyOf) {
    const errs = schema.anyOf.map((s) => schemaError(s, v, root, at));
    if (errs.every((e) => e)) return errs.join(' | ');
  }
  if (schema.type) {
    const types = [].concat(schema.type);
    const kind = v === null ? 'null' : Array.isArray(v) ? 'array' :
      Number.isInteger(v) ? 'integer' : typeof v;
    if (!types.some((t) => t === kind || (t === 'number' && kind === 'integer')))
      return at + ': ' + kind + ', not ' + types.join(' or ');
  }
  if ('const' in schema && v !== schema.const) return at + ': not ' + JSON.stringify(schema.const);
  if (schema.enum && !schema.enum.includes(v)) return at + ': not one of ' + JSON.stringify(schema.enum);
  for (const k of schema.required || [])
    if (!(k in v)) return at + ': no ' + k;
  for (const [k, s] of Object.entries(schema.properties || {}))
    if (v && typeof v === 'object' && k in v) {
      const e = schemaError(s, v[k], root, at + '.' + k);
      if (e) return e;
    }
  if (schema.items && Array.isArray(v))
    for (let i = 0; i < v.length; i++) {
      const e = schemaError(schema.items, v[i], root, at + '[' + i + ']');
      if (e) return e;
    }
  return null;
}
const WAIT = 20000;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'memtrace-browser-'));
function file(name) { return path.join(tmp, name); }
function memtrace(...argv) { execFileSync(MEMTRACE, argv, { stdio: ['ignore', 'ignore', 'inherit'] }); }

/* ---- the traces ---- */

/* A real run of wl_demo under the preload. */
function realTrace() {
  const out = file('demo.jsonl.zst');
  execFileSync(path.join(BUILD, 'workloads/wl_demo'), ['20000'], {
    env: Object.assign({}, process.env, {
      LD_PRELOAD: path.join(BUILD, 'libmtpreload.so'), MEMTRACE_OUTPUT: out
    }),
    stdio: ['ignore', 'ignore', 'inherit']
  });
  return out;
}

/* A 4.1 s run in nanoseconds whose heap never empties after its first
 * allocation: it grows, falls back a little, and holds to the end. */
function longTrace() {
  const lines = [];
  let seq = 1;
  const ev = (o) => lines.push(JSON.stringify(Object.assign({ v: 1, seq: seq++ }, o)));
  ev({ kind: 'trace.start', pid: 7, exe: '/usr/bin/long', stack_depth: 32 });
  ev({ kind: 'allocator', allocator_id: 0, name: 'libc' });
  ev({ kind: 'frame', frame_id: 1, ip: '0x401000', symbol: 'main', offset: '0x10' });
  ev({ kind: 'frame', frame_id: 2, ip: '0x402000', symbol: 'grow_table', offset: '0x20' });
  ev({ kind: 'frame', frame_id: 3, ip: '0x403000', symbol: 'scratch', offset: '0x30' });
  ev({ kind: 'stack', stack_id: 1, frames: [2, 1] });
  ev({ kind: 'stack', stack_id: 2, frames: [3, 1] });
  const end = 4100000000, n = 400;
  /* A table made first and kept to the end: the heap stands high from the start. */
  ev({ kind: 'alloc', allocator_id: 0, ptr: '0x10000', size: 2 << 20, fn: 'malloc', stack: 1, tid: 7, t: 500 });
  for (let i = 0; i < n; i++) {
    const t = 1000 + Math.floor(i * (end - 2000) / n);
    ev({ kind: 'alloc', allocator_id: 0, ptr: '0x' + (0x100000 + i * 0x1000).toString(16), size: 4096 + i * 64,
      fn: 'malloc', stack: 1 + (i % 2), tid: 7, t: t });
    if (i % 2 && i > 1)
      ev({ kind: 'free', allocator_id: 0, ptr: '0x' + (0x100000 + (i - 2) * 0x1000).toString(16), fn: 'free',
        tid: 7, t: t + 500 });
  }
  ev({ kind: 'trace.stop', reason: 'exit', dropped: 0, t: end });
  const out = file('long.jsonl');
  fs.writeFileSync(out, lines.join('\n') + '\n');
  return out;
}

/* ---- PNG pixels (8-bit RGB or RGBA, not interlaced: Chromium's) ---- */

function decodePng(buf) {
  buf = Buffer.from(buf);
  let pos = 8, width = 0, height = 0, type = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos), kind = buf.toString('ascii', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (kind === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[12] !== 0) throw new Error('PNG: not 8-bit non-interlaced');
      type = data[9];
    } else if (kind === 'IDAT') {
      idat.push(data);
    }
    pos += 12 + len;
  }
  const bpp = type === 6 ? 4 : type === 2 ? 3 : 0;
  if (!bpp) throw new Error('PNG: colour type ' + type);
  const raw = zlib.inflateSync(Buffer.concat(idat)), stride = width * bpp;
  const px = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? px[y * stride + x - bpp] : 0, b = y ? px[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y ? px[(y - 1) * stride + x - bpp] : 0;
      let v = line[x];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[y * stride + x] = v & 255;
    }
  }
  return { width, height, at: (x, y) => { const i = y * stride + x * bpp; return [px[i], px[i + 1], px[i + 2]]; } };
}

/* The heap's colour (#1f5fa8): the line's, or thinned over white, the
 * area's; not white, grey, nor the blocks' orange. */
function heapish(rgb) { return rgb[2] >= 150 && rgb[2] - rgb[0] >= 12 && rgb[2] > rgb[1]; }

/* The curve's y at x: the points ("x,y x,y ...", pixels) of a step
 * curve, the last one at or left of x. */
function curveY(points, x) {
  let y = null;
  for (const p of points.trim().split(/\s+/)) {
    const [px, py] = p.split(',').map(Number);
    if (px > x) break;
    y = py;
  }
  return y;
}

/*
 * In the image, the plot area box (x, y, w, h in its pixels) must have
 * the heap's colour just above its bottom at every column where the
 * live-bytes curve (its points) stands clearly above the bottom, at 50
 * columns from 1 % to 99 % of the run.  Returns the columns that do not
 * and how many were checked.
 */
function unfilledColumns(img, box, points) {
  const bad = [];
  let checked = 0;
  for (let k = 1; k <= 99; k += 2) {
    const x = Math.round(box.x + box.w * k / 100), y = Math.round(box.y + box.h);
    const cy = curveY(points, x);
    if (cy === null || cy > y - 10) continue;
    checked++;
    if (![3, 5, 8].some((d) => heapish(img.at(x, y - d))))
      bad.push(k + ' % (' + img.at(x, y - 3).join(',') + ')');
  }
  return { bad, checked };
}

/* ---- the runner ---- */

const results = [];
async function test(name, fn) {
  try {
    await fn();
    results.push(true);
    console.log('ok - ' + name);
  } catch (e) {
    results.push(false);
    console.log('not ok - ' + name + ': ' + (e && e.message ? e.message : e));
  }
}
function assert(cond, why) { if (!cond) throw new Error(why); }

/* A fresh page that records its console errors and uncaught errors. */
async function openPage(browser, url) {
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('requestfailed', (r) => errors.push('request failed: ' + r.url()));
  await page.setViewport({ width: 1240, height: 1000, deviceScaleFactor: 1 });
  if (url) await page.goto(url, { waitUntil: 'load', timeout: WAIT });
  return { page, errors };
}

async function main() {
  const demo = realTrace(), long = longTrace();
  const pages = {};
  for (const [name, trace] of [['demo', demo], ['long', long]]) {
    pages[name] = file(name + '.html');
    memtrace('html', trace, '-o', pages[name]);
    memtrace('plot', trace, '-o', file(name + '.svg'));
  }
  memtrace('export', 'speedscope', demo, '-o', file('demo.speedscope.json'));
  memtrace('export', 'dhat', demo, '-o', file('demo.dhat.json'));

  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: false, /* --headless is in args: puppeteer adds no headless flags of its own */
    userDataDir: file('chromium-profile'),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage', '--hide-scrollbars'],
    timeout: WAIT
  });
  try {
    const { page, errors } = await openPage(browser, 'file://' + pages.demo);
    await page.waitForSelector('html[data-drawn=yes]', { timeout: WAIT });

    await test('html_page_loads_without_console_errors', async () => {
      assert(!errors.length, errors.join('; '));
      const verdict = await page.$eval('#verdict', (e) => e.textContent);
      assert(/Integrity: complete/.test(verdict), 'verdict: ' + verdict);
      const first = await page.evaluate(() => document.querySelector('main').firstElementChild.nextElementSibling.id);
      assert(first === 'verdict', 'the verdict is not first under the title: ' + first);
    });

    await test('html_heading_names_the_program', async () => {
      const h1 = await page.$eval('h1#program', (e) => e.textContent);
      const exe = fs.realpathSync(path.join(BUILD, 'workloads/wl_demo'));
      const want = 'memtrace: ' + exe + ' 20000 (pid ';
      assert(h1.startsWith(want), 'heading: ' + h1 + ', want ' + want + '...');
      assert(/ \(pid \d+, parent \d+\) \(demo\.jsonl\.zst\)$/.test(h1), 'heading: ' + h1);
      const title = await page.title();
      assert(title === h1.replace(/ \(demo\.jsonl\.zst\)$/, ''), 'title: ' + title);
    });

    await test('html_chart_and_flame_graph_are_drawn', async () => {
      const points = await page.$eval('#live-bytes', (e) => e.getAttribute('points').trim().split(/\s+/).length);
      assert(points > 4, 'the live-bytes curve has ' + points + ' points');
      const area = await page.$eval('#live-bytes-area', (e) => e.getBBox().width);
      assert(area > 1000, 'the area is ' + area + ' px wide');
      const rects = await page.$$eval('#flame rect.node', (r) => r.length);
      assert(rects > 3, 'the flame graph has ' + rects + ' frames');
      const rows = await page.$$eval('#sites tbody tr', (r) => r.length);
      assert(rows > 2, 'the sites table has ' + rows + ' rows');
    });

    await test('html_readout_follows_the_pointer', async () => {
      const box = await page.$eval('#chart', (e) => { const r = e.getBoundingClientRect(); return [r.x, r.y]; });
      await page.mouse.move(box[0] + 600, box[1] + 150);
      const text = await page.$eval('#readout', (e) => e.textContent);
      assert(/^at .* live in .* blocks$/.test(text), 'readout: ' + text);
    });

    await test('html_drag_selects_a_range', async () => {
      const box = await page.$eval('#chart', (e) => { const r = e.getBoundingClientRect(); return [r.x, r.y]; });
      await page.mouse.move(box[0] + 300, box[1] + 150);
      await page.mouse.down();
      await page.mouse.move(box[0] + 700, box[1] + 150, { steps: 5 });
      await page.mouse.up();
      const text = await page.$eval('#range-info', (e) => e.textContent);
      assert(/^range .* live .*highest/.test(text), 'range: ' + text);
      await page.click('#range-reset');
      const after = await page.$eval('#range-info', (e) => e.textContent);
      assert(/^Drag/.test(after), 'after reset: ' + after);
    });

    await test('html_click_zooms_the_flame_graph', async () => {
      /* By the peak, the narrowest frame wide enough to click becomes
       * the whole width. */
      await page.select('#metric', '2');
      const target = await page.$$eval('#flame rect.node', (rs) => {
        const c = rs.map((r) => ({ name: r.getAttribute('data-name'), w: +r.getAttribute('width'),
          y: +r.getAttribute('y') })).filter((r) => r.w > 8 && r.w < 1000 && r.y > 0);
        c.sort((a, b) => a.w - b.w);
        return c[0] || null;
      });
      assert(target, 'no frame narrower than the graph');
      const handle = await page.evaluateHandle((t) => Array.from(document.querySelectorAll('#flame rect.node'))
        .find((r) => r.getAttribute('data-name') === t.name && +r.getAttribute('y') === t.y), target);
      await handle.click();
      const w = await page.$$eval('#flame rect.node', (rs, t) => Math.max(...rs
        .filter((r) => r.getAttribute('data-name') === t.name).map((r) => +r.getAttribute('width'))), target);
      assert(w >= 1159, target.name + ' is ' + w + ' px wide after the click, was ' + target.w);
      await page.click('#flame-reset');
    });

    await test('html_search_highlights_the_matching_frames', async () => {
      await page.type('#search', 'parse_config');
      const m = await page.$$eval('#flame rect.match', (rs) => rs.map((r) => [r.getAttribute('data-name'),
        getComputedStyle(r).fill]));
      assert(m.length > 0, 'nothing highlighted');
      assert(m.every((x) => /parse_config/.test(x[0])), 'a highlighted frame does not match: ' + m);
      assert(m.every((x) => x[1] === 'rgb(224, 64, 251)'), 'highlighted in ' + m[0][1]);
      const info = await page.$eval('#search-info', (e) => e.textContent);
      assert(/match/.test(info), 'search info: ' + info);
    });

    await test('html_site_row_shows_its_stack_and_series', async () => {
      await page.click('#sites tbody tr');
      const text = await page.$eval('#site', (e) => (e.hidden ? '' : e.textContent));
      assert(/wl_demo\.c:\d+/.test(text), 'no file:line in the site: ' + text.slice(0, 300));
      const pts = await page.$eval('#site-live-bytes', (e) => e.getAttribute('points').split(' ').length);
      assert(pts > 10, 'the site series has ' + pts + ' points');
      await page.click('#sites th[data-key=calls]');
      const calls = await page.$$eval('#sites tbody tr td:nth-child(2)', (t) => t.map((x) => +x.textContent.replace(/,/g, '')));
      assert(calls.every((c, i) => !i || calls[i - 1] >= c), 'not sorted by calls: ' + calls);
      assert(!errors.length, errors.join('; '));
    });

    if (SHOT) {
      await page.click('#sites th[data-key=peak]');
      await page.click('#sites tbody tr');
      await page.screenshot({ path: SHOT, fullPage: true });
    }
    await page.close();

    await test('html_area_covers_the_whole_run', async () => {
      const { page, errors } = await openPage(browser, 'file://' + pages.long);
      await page.waitForSelector('html[data-drawn=yes]', { timeout: WAIT });
      const chart = await page.$('#chart');
      const box = await chart.evaluate((e) => { const r = e.querySelector('rect'); return { x: +r.getAttribute('x'),
        y: +r.getAttribute('y'), w: +r.getAttribute('width'), h: +r.getAttribute('height') }; });
      const points = await page.$eval('#live-bytes', (e) => e.getAttribute('points'));
      const img = decodePng(await chart.screenshot());
      const { bad, checked } = unfilledColumns(img, box, points);
      assert(checked >= 45, 'the curve stands above the bottom at ' + checked + ' of 50 columns only');
      assert(!bad.length, 'no heap colour under the curve at ' + bad.join(', '));
      assert(!errors.length, errors.join('; '));
      await page.close();
    });

    await test('html_time_axis_has_one_unit_and_no_false_precision', async () => {
      const labels = (page) => page.$$eval('#chart text.xtick', (ts) => ts.map((t) => t.textContent));
      /* One unit, no trailing zero, no two alike. */
      const check = (what, ls) => {
        const m = ls.map((l) => /^(\d+(?:\.\d*[1-9])?) (ns|\u00b5s|ms|s)$/.exec(l));
        assert(ls.length >= 3 && m.every((x) => x), what + ': labels ' + ls.join(', '));
        assert(m.every((x) => x[2] === m[0][2]), what + ': more than one unit in ' + ls.join(', '));
        assert(new Set(ls).size === ls.length, what + ': two labels alike in ' + ls.join(', '));
      };
      for (const name of ['demo', 'long']) {
        const { page, errors } = await openPage(browser, 'file://' + pages[name]);
        await page.waitForSelector('html[data-drawn=yes]', { timeout: WAIT });
        const whole = await labels(page);
        check(name, whole);
        assert(whole[0] === '0 ' + whole[0].split(' ')[1], name + ': the axis starts at ' + whole[0]);
        if (name === 'long')
          assert(whole.join('|') === '0 s|1 s|2 s|3 s|4 s', 'long: ' + whole.join(', '));
        /* A range of a few percent of the run: a smaller unit, still one. */
        const box = await page.$eval('#chart', (e) => { const r = e.getBoundingClientRect(); return [r.x, r.y]; });
        await page.mouse.move(box[0] + 400, box[1] + 150);
        await page.mouse.down();
        await page.mouse.move(box[0] + 440, box[1] + 150, { steps: 4 });
        await page.mouse.up();
        const part = await labels(page);
        check(name + ' range', part);
        if (name === 'long')
          assert(/ ms$/.test(part[0]), 'long range: ' + part.join(', '));
        assert(!errors.length, errors.join('; '));
        await page.close();
      }
    });

    await test('html_gives_a_sampled_totals_standard_errors', async () => {
      /* Two blocks of 64 bytes at a mean of 4096, one freed: the
       * summary's standard errors (tests/check_sample.c) beside each total. */
      const sampled = file('sampled.jsonl');
      fs.writeFileSync(sampled, [
        '{"v":1,"seq":1,"kind":"trace.start","sample_bytes":4096}',
        '{"v":1,"seq":2,"kind":"allocator","allocator_id":0}',
        '{"v":1,"seq":3,"kind":"alloc","allocator_id":0,"ptr":"0x1000","size":64,"fn":"malloc","tid":1,"t":1000}',
        '{"v":1,"seq":4,"kind":"alloc","allocator_id":0,"ptr":"0x2000","size":64,"fn":"malloc","tid":1,"t":2000}',
        '{"v":1,"seq":5,"kind":"free","allocator_id":0,"ptr":"0x1000","tid":1,"t":3000}',
        '{"v":1,"seq":6,"kind":"trace.stop","reason":"exit","t":4000}', ''].join('\n'));
      memtrace('html', sampled, '-o', file('sampled.html'));
      const { page, errors } = await openPage(browser, 'file://' + file('sampled.html'));
      await page.waitForSelector('html[data-drawn=yes]', { timeout: WAIT });
      const totals = await page.$eval('#totals', (e) => e.innerText.replace(/\s+/g, ' '));
      for (const want of ['peak live 8.06 KiB +- 5.66 KiB in 128 +- 91 blocks',
        'live at the end 4.03 KiB +- 4.00 KiB in 64 +- 64 blocks', 'allocations 128 +- 91',
        'frees 64 +- 64', 'bytes allocated 8.06 KiB +- 5.66 KiB'])
        assert(totals.includes(want), 'no "' + want + '" in the totals: ' + totals);
      const demoTotals = await (async () => {
        const { page: p } = await openPage(browser, 'file://' + pages.demo);
        await p.waitForSelector('html[data-drawn=yes]', { timeout: WAIT });
        const t = await p.$eval('#totals', (e) => e.innerText);
        await p.close();
        return t;
      })();
      assert(!demoTotals.includes('+-'), 'a full trace with standard errors: ' + demoTotals);
      assert(!errors.length, errors.join('; '));
      await page.close();
    });

    await test('plot_area_covers_the_whole_run', async () => {
      for (const name of ['long', 'demo']) {
        const { page } = await openPage(browser, 'file://' + file(name + '.svg'));
        const box = await page.evaluate(() => {
          const r = document.querySelector('rect[fill=none]');
          return { x: +r.getAttribute('x'), y: +r.getAttribute('y'), w: +r.getAttribute('width'),
            h: +r.getAttribute('height') };
        });
        const points = await page.$eval('#live-bytes', (e) => e.getAttribute('points'));
        const img = decodePng(await page.screenshot({ fullPage: true }));
        const { bad, checked } = unfilledColumns(img, box, points);
        assert(checked >= (name === 'long' ? 45 : 20), name + ': the curve stands above the bottom at ' + checked +
          ' of 50 columns only');
        assert(!bad.length, name + ': no heap colour under the curve at ' + bad.join(', '));
        await page.close();
      }
    });

    /* `memtrace flamegraph`'s SVG, opened as a file. */
    const flameName = (g) => { const t = g.querySelector('title').textContent; return t.slice(0, t.lastIndexOf(' (')); };
    await test('flamegraph_click_zooms_a_frame_to_the_full_width', async () => {
      memtrace('flamegraph', demo, '--metric', 'peak', '-o', file('demo.flame.svg'));
      const { page, errors } = await openPage(browser, 'file://' + file('demo.flame.svg'));
      await page.waitForSelector('svg[data-ready=yes]', { timeout: WAIT });
      const frames = await page.$$eval('g.f', (gs, fn) => {
        const name = new Function('return ' + fn)();
        return gs.map((g, i) => { const r = g.querySelector('rect');
          return { i, name: name(g), x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y') }; });
      }, flameName.toString());
      const root = frames.reduce((a, b) => (b.y > a.y ? b : a));
      assert(root.name === 'all' && root.w === 1180, 'root ' + JSON.stringify(root));
      const target = frames.filter((f) => f.w > 8 && f.w < root.w - 1).sort((a, b) => a.w - b.w)[0];
      assert(target, 'no frame narrower than the graph');
      const g = (await page.$$('g.f'))[target.i];
      await g.click();
      const after = await page.$$eval('g.f', (gs) => gs.map((g) => ({ w: +g.querySelector('rect').getAttribute('width'),
        shown: getComputedStyle(g).display !== 'none' })));
      assert(after[target.i].w === 1180, target.name + ' is ' + after[target.i].w + ' px wide after the click, was ' + target.w);
      /* Its callers stay, full width; frames beside it go. */
      for (const f of frames) {
        const a = after[f.i];
        if (f.y > target.y && f.x <= target.x + 0.02 && f.x + f.w >= target.x + target.w - 0.02)
          assert(a.shown && a.w === 1180, 'caller ' + f.name + ' is ' + a.w + ' px wide, shown ' + a.shown);
        else if (f.x + f.w <= target.x - 0.02 || f.x >= target.x + target.w + 0.02)
          assert(!a.shown, f.name + ', beside the zoomed frame, is still shown');
      }
      const label = await page.$eval('#unzoom', (e) => getComputedStyle(e).display);
      assert(label !== 'none', 'no Reset zoom after the zoom');
      await page.click('#unzoom');
      const back = await page.$$eval('g.f rect', (rs) => rs.map((r) => +r.getAttribute('width')));
      assert(frames.every((f) => Math.abs(back[f.i] - f.w) < 0.006), 'the reset does not give back the widths');
      /* A click on the root zooms out as well. */
      await g.click();
      await (await page.$$('g.f'))[root.i].click();
      const w = await page.$$eval('g.f rect', (rs, i) => +rs[i].getAttribute('width'), target.i);
      assert(Math.abs(w - target.w) < 0.006, 'a click on the root leaves ' + target.name + ' ' + w + ' px wide');
      assert(!errors.length, errors.join('; '));
      await page.close();
    });

    await test('flamegraph_search_highlights_the_matching_frames', async () => {
      const { page, errors } = await openPage(browser, 'file://' + file('demo.flame.svg'));
      await page.waitForSelector('svg[data-ready=yes]', { timeout: WAIT });
      page.once('dialog', (d) => d.accept('parse_conf'));
      await page.click('#search');
      const frames = await page.$$eval('g.f', (gs, fn) => {
        const name = new Function('return ' + fn)();
        return gs.map((g) => ({ name: name(g), match: g.classList.contains('match'),
          fill: getComputedStyle(g.querySelector('rect')).fill, w: +g.querySelector('rect').getAttribute('width') }));
      }, flameName.toString());
      const hits = frames.filter((f) => f.match);
      assert(hits.length > 0, 'nothing highlighted');
      assert(frames.every((f) => f.match === /parse_conf/.test(f.name)), 'a frame highlighted wrongly');
      assert(hits.every((f) => f.fill === 'rgb(230, 0, 230)'), 'highlighted in ' + hits[0].fill);
      assert(frames.filter((f) => !f.match).every((f) => f.fill !== 'rgb(230, 0, 230)'), 'a frame painted that does not match');
      const info = await page.$eval('#matched', (e) => e.textContent);
      const want = (100 * hits.reduce((s, f) => s + f.w, 0) / 1180).toFixed(1);
      assert(info === 'Matched: ' + want + '%', 'matched: ' + info + ', want ' + want + '%');
      await page.click('#search');
      const left = await page.$$eval('g.f.match', (gs) => gs.length);
      assert(left === 0, left + ' frames still highlighted after the reset');
      assert(!errors.length, errors.join('; '));
      await page.close();
    });

    await test('speedscope_export_is_valid_under_speedscopes_schema', async () => {
      const schema = JSON.parse(fs.readFileSync(SPEEDSCOPE_SCHEMA, 'utf8'));
      const doc = JSON.parse(fs.readFileSync(file('demo.speedscope.json'), 'utf8'));
      const err = schemaError(schema, doc, schema, '$');
      assert(!err, 'the export breaks the schema: ' + err);
      const names = doc.profiles.map((p) => p.name).join(', ');
      assert(names === 'bytes live at the peak, bytes leaked, bytes allocated, allocation calls',
        'the profiles: ' + names);
      const sum = JSON.parse(execFileSync(MEMTRACE, ['summary', demo, '--top', '0']).toString());
      const totals = doc.profiles.map((p) => p.weights.reduce((a, b) => a + b, 0)).join(' ');
      const want = [sum.peak_live_bytes, sum.live_bytes, sum.bytes_allocated,
        sum.allocations + sum.resizes + sum.remaps].join(' ');
      assert(totals === want, 'the profiles sum to ' + totals + ', the summary ' + want);
      /* The validator refuses what the schema forbids. */
      const broken = JSON.parse(JSON.stringify(doc));
      delete broken.profiles[0].unit;
      assert(schemaError(schema, broken, schema, '$'), 'a profile without its unit passed');
      broken.profiles[0].unit = 'furlongs';
      assert(schemaError(schema, broken, schema, '$'), 'a profile with an unknown unit passed');
    });

    await test('speedscope_opens_the_speedscope_export', async () => {
      /* As `speedscope FILE` does: a script that hands the file over. */
      const data = fs.readFileSync(file('demo.speedscope.json'));
      const js = file('demo.speedscope.js');
      fs.writeFileSync(js, 'speedscope.loadFileFromBase64(' + JSON.stringify('demo.speedscope.json') + ', ' +
        JSON.stringify(data.toString('base64')) + ')');
      const { page, errors } = await openPage(browser, 'file://' + SPEEDSCOPE + '#localProfilePath=' + js);
      await page.waitForFunction(() => /bytes live at the peak/.test(document.body.innerText) &&
        document.querySelectorAll('canvas').length > 0, { timeout: WAIT });
      const text = await page.evaluate(() => document.body.innerText);
      assert(!/Something went wrong|Unrecognized format|failed/i.test(text), 'speedscope says: ' + text.slice(0, 300));
      assert(/main/.test(text) || (await page.$$('canvas')).length > 0, 'no frame drawn');
      assert(!errors.length, errors.join('; '));
      await page.close();
    });

    await test('dh_view_opens_the_dhat_export', async () => {
      const { page, errors } = await openPage(browser, 'file://' + DH_VIEW);
      const input = await page.waitForSelector('input[type=file]', { timeout: WAIT });
      await input.uploadFile(file('demo.dhat.json'));
      await page.waitForFunction(() => document.querySelector('pre') || document.querySelector('.error'),
        { timeout: WAIT });
      const err = await page.$eval('body', (b) => { const e = b.querySelector('.error'); return e ? e.textContent : ''; });
      assert(!err, 'dh_view: ' + err);
      const tree = await page.$eval('pre', (p) => p.textContent);
      const num = (s) => +s.replace(/,/g, '');
      const sum = JSON.parse(execFileSync(MEMTRACE, ['summary', demo, '--top', '0']).toString());
      const doc = JSON.parse(fs.readFileSync(file('demo.dhat.json'), 'utf8'));
      /* The root's figures, as dh_view prints them. */
      const m = /Total: +([\d,]+) bytes \(100%.* in ([\d,]+) blocks .*avg lifetime ([\d,.]+) ns/.exec(tree);
      assert(m, 'dh_view tree: ' + tree.slice(0, 600));
      const blocks = sum.allocations + sum.resizes + sum.remaps;
      assert(num(m[1]) === sum.bytes_allocated && num(m[2]) === blocks,
        'dh_view total ' + m[1] + ' bytes in ' + m[2] + ' blocks, summary ' + sum.bytes_allocated + ' in ' + blocks);
      assert(num(m[3]) > 0, 'dh_view avg lifetime ' + m[3] + ' ns');
      const g = /At t-gmax: ([\d,]+) bytes \(100%\) in ([\d,]+) blocks/.exec(tree);
      assert(g, 'no t-gmax line: ' + tree.slice(0, 600));
      const gbk = doc.pps.reduce((n, pp) => n + pp.gbk, 0);
      assert(num(g[1]) === sum.peak_live_bytes, 'dh_view t-gmax ' + g[1] + ' bytes, summary ' + sum.peak_live_bytes);
      assert(num(g[2]) > 0 && num(g[2]) === gbk && num(g[2]) <= sum.peak_live_allocations,
        'dh_view t-gmax ' + g[2] + ' blocks, the export ' + gbk + ', summary at most ' + sum.peak_live_allocations);
      const e = /At t-end: +([\d,]+) bytes \(100%\) in ([\d,]+) blocks/.exec(tree);
      assert(e && num(e[1]) === sum.live_bytes && num(e[2]) === sum.live_allocations,
        'dh_view t-end ' + (e ? e[1] + ' bytes in ' + e[2] : 'missing') + ', summary ' + sum.live_bytes + ' in ' +
        sum.live_allocations);
      const t = /t-gmax: ([\d,]+) ns .*\n\s*t-end: +([\d,]+) ns/.exec(tree);
      assert(t && num(t[1]) > 0 && num(t[1]) <= num(t[2]) && num(t[2]) === sum.duration_ns,
        'dh_view times: ' + (t ? t[0] : tree.slice(0, 300)));
      /* A figure of bytes in 0 blocks is an average of "∞". */
      assert(!/∞|NaN|Infinity/.test(tree), 'dh_view shows: ' + (/.*(∞|NaN|Infinity).*/.exec(tree) || [''])[0]);
      assert(/Max: +[\d,]+ bytes in [1-9][\d,]* blocks/.test(tree), 'no site max in blocks: ' + tree.slice(0, 600));
      assert(!errors.length, errors.join('; '));
      await page.close();
    });
  } finally {
    await browser.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const failed = results.filter((r) => !r).length;
  console.log(results.length - failed + ' of ' + results.length + ' browser tests passed');
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.log('not ok - browser tests: ' + (e && e.stack ? e.stack : e));
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
});
