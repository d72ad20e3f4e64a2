// End-to-end tests of the Models view: gallery models at long contexts through the structured
// reach engine in the browser, checked against the CLI (`hasseflow model ... --json`), every
// gallery entry at 4096 against the CLI (figures, per-layer table, layer-kind legend, notes),
// encoder-decoders and the newer layer kinds from dropped configs, the page's responsiveness
// during a 1M-token run, refused configs, zoom and the scaled copy. Timings go to
// target/e2e-artifacts/models-measurements.json; screenshots at 1440x900.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ART, CLI, holdModule, launch, messageText, moduleFetches, openFresh, shot, startServer, waitStat } from './support.mjs';

let server;
let context;
const measurements = {};

before(async () => {
  server = await startServer();
  context = await launch();
});

after(async () => {
  writeFileSync(path.join(ART, 'models-measurements.json'), JSON.stringify(measurements, null, 2) + '\n');
  console.log('models timings (ms):', JSON.stringify(measurements));
  if (context) await context.closeAll();
  if (server) server.stop();
});

const cli = (name, n) => JSON.parse(execFileSync(CLI, ['model', name, '--context', String(n), '--json'], { encoding: 'utf8' }));

async function openModels() {
  const page = await openFresh(context, server.base);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.click('#tab-models');
  await done(page);
  return page;
}

/** Waits until the view shows the finished run of the current settings and range. */
async function done(page, timeout = 120000) {
  await page.waitForFunction(() => document.querySelector('#models-view')?.dataset.state === 'done'
    && document.querySelector('#model-verdict'), null, { timeout });
}

/** Picks a gallery model and a context, and waits for the run. */
async function run(page, name, n) {
  await page.selectOption('#model-gallery', name);
  await page.fill('#model-n', String(n));
  await page.locator('#model-n').dispatchEvent('change');
  await page.waitForFunction(([n]) => document.querySelector('#model-verdict')?.dataset.n === n
    && document.querySelector('#models-view')?.dataset.state === 'done', [String(n)], { timeout: 120000 });
}

const verdict = (page) => page.locator('#model-verdict').evaluate((e) => ({ ...e.dataset, text: e.textContent }));

test('the config reader is fetched when the Models view first needs a model, once; a failed fetch is one line, and the next pick loads it', async () => {
  const page = await openFresh(context, server.base);
  await page.setViewportSize({ width: 1440, height: 900 });
  const fetched = moduleFetches(page, 'hasseflow-formats');
  await page.waitForSelector('#grid');
  assert.deepEqual(fetched, [], 'the page and the editor fetch no config reader');
  // The module's wasm is held, then refused: the reading state shows, then the failure.
  const module = await holdModule(page, 'hasseflow-formats');
  await page.click('#tab-models');
  await page.waitForFunction(() => document.querySelector('#models-view')?.dataset.state === 'reading');
  assert.match(await page.locator('#models-reading').innerText(), /reading mistral-7b-v0\.1: loading the model reader/);
  module.release();
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('the model reader did not load'));
  const failed = await messageText(page);
  assert.match(failed, /Nothing was changed/);
  assert.equal(failed.includes('\n'), false, failed);
  assert.equal(await page.locator('#models-none').count(), 1, 'no model, and the view says how to get one');
  await module.restore();
  // The next pick loads it and runs; another pick fetches nothing more.
  const start = Date.now();
  await page.selectOption('#model-gallery', 'gpt2');
  await done(page);
  measurements['first model read: the formats module fetched, the config read, the run (ms, gpt2 @ 32768)'] = Date.now() - start;
  assert.equal((await verdict(page)).model, 'gpt2');
  const count = fetched.length;
  assert.ok(fetched.some((f) => /_bg\.wasm$/.test(f)) && fetched.some((f) => /\.js$/.test(f)), fetched.join(', '));
  await run(page, 'mistral-7b-v0.1', 8192);
  assert.equal(fetched.length, count, `fetched again: ${fetched.join(', ')}`);
  // Once fetched, the module is the page's: the view keeps working offline.
  await context.setOffline(true);
  await run(page, 'gemma-3-1b-it', 4096);
  await context.setOffline(false);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('Mistral 7B at 131072: 31 positions short at layer 32, every layer as the CLI counts it', async () => {
  const page = await openModels();
  await run(page, 'mistral-7b-v0.1', 131072);
  const v = await verdict(page);
  const expected = cli('mistral-7b-v0.1', 131072);
  assert.match(v.text, /31 of 131072 positions short at the last layer \(496 cells missing\)/);
  assert.match(v.text, /after layer 32 of 32/);
  assert.equal(v.short, '31');
  assert.equal(v.depth, '32');
  assert.equal(expected.verdict, '31 of 131072 positions short at the last layer (496 cells missing)');
  measurements['mistral-7b-v0.1 @ 131072'] = Number(v.ms);
  // The table's |R(l)| per layer equals the CLI's growth.
  const cells = await page.$$eval('#model-layers-table tbody tr', (rows) => rows.map((r) => Number(r.dataset.cells)));
  assert.deepEqual(cells, expected.growth.slice(1));
  // Layer 32 is 496 cells short of the limit: its coverage is rounded down, never "100.00%".
  const last = await page.locator('#model-layers-table tbody tr').last().locator('td').nth(3).innerText();
  assert.equal(last, '99.99%');
  // The slider picks a layer; the counts beside the map follow.
  await page.locator('#model-layer').fill('3');
  await page.waitForFunction(() => document.querySelector('#model-counts')?.dataset.layer === '3');
  assert.equal(Number(await page.locator('#model-counts').getAttribute('data-cells')), expected.growth[3]);
  await shot(page, 'models-mistral-131072');
  // The export is the CLI's object (timings aside).
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#model-export')]);
  const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
  for (const k of ['name', 'n', 'layers', 'types', 'pattern', 'growth', 'full_at', 'shortfall', 'limit_cells', 'leaks', 'verdict', 'per_layer', 'limit']) {
    assert.deepEqual(exported[k], expected[k], k);
  }
  // Zoom narrows the range and asks for the rows of that range.
  await page.click('#model-zoom-in');
  await page.waitForFunction(() => document.querySelector('#model-heat')?.getAttribute('aria-label').includes('queries 32768–98303')
    && document.querySelector('#models-view')?.dataset.state === 'done', null, { timeout: 60000 });
  await page.locator('#model-heat').hover({ position: { x: 480, y: 10 } });
  await page.waitForFunction(() => document.querySelector('#model-heat-hover')?.textContent.startsWith('query '));
  await shot(page, 'models-mistral-zoomed');
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** Installs a 5 ms ticker recording the longest gap between ticks (a blocked main thread shows
 * as a long gap) and a record of the view's state when a click on the theme button is handled. */
async function watchMainThread(page) {
  await page.evaluate(() => {
    clearInterval(window.__ticker);
    window.__gap = 0;
    window.__clickedWhile = undefined;
    let last = performance.now();
    window.__ticker = setInterval(() => {
      const now = performance.now();
      window.__gap = Math.max(window.__gap, now - last);
      last = now;
    }, 5);
    if (!window.__listening) {
      window.__listening = true;
      document.querySelector('#theme').addEventListener('click', () => {
        window.__clickedWhile = document.querySelector('#models-view').dataset.state;
      });
    }
  });
}

const mainThread = (page) => page.evaluate(() => ({ gap: window.__gap, clickedWhile: window.__clickedWhile }));

async function setContext(page, n) {
  await page.fill('#model-n', String(n));
  await page.locator('#model-n').dispatchEvent('change');
}

async function finishedAt(page, n) {
  await page.waitForFunction((n) => document.querySelector('#model-verdict')?.dataset.n === n
    && document.querySelector('#models-view')?.dataset.state === 'done', String(n), { timeout: 180000 });
}

test('Llama 4 Scout at 1,048,576 completes while the page stays responsive', async () => {
  const page = await openModels();
  await page.selectOption('#model-gallery', 'llama-4-scout-17b-16e');
  await done(page);
  await watchMainThread(page);
  await setContext(page, 1048576);
  await finishedAt(page, 1048576);
  const scout = await mainThread(page);
  const v = await verdict(page);
  measurements['llama-4-scout-17b-16e @ 1048576'] = Number(v.ms);
  measurements['llama-4-scout @ 1M: longest main-thread gap'] = Math.round(scout.gap);
  assert.match(v.text, /everything the stack can reach is reached at layer 4 of 48/);
  const expected = cli('llama-4-scout-17b-16e', 1048576);
  const cells = await page.$$eval('#model-layers-table tbody tr', (rows) => rows.map((r) => Number(r.dataset.cells)));
  assert.deepEqual(cells, expected.growth.slice(1));
  // One step is one layer (or the limit) at 1M positions: the page never waits much longer.
  assert.ok(scout.gap < 500, `the main thread was blocked for ${scout.gap} ms`);
  await shot(page, 'models-llama4-scout-1m');

  // Mistral 7B at 1M never saturates (32 layers of window 4096 < n), so every layer is computed:
  // long enough to click another control mid-run.
  await page.selectOption('#model-gallery', 'mistral-7b-v0.1');
  await finishedAt(page, 1048576);
  measurements['mistral-7b-v0.1 @ 1048576'] = Number((await verdict(page)).ms);
  // The theme button's centre, found before the run: the click mid-run is then one input event
  // (page.click's checks take round trips). The release build's run is over in ~75 ms, too short
  // to click into reliably, so the CPU is throttled 6x (Chromium's DevTools emulation of a slow
  // machine) for this run and the next.
  const box = await page.locator('#theme').boundingBox();
  const devtools = await page.context().newCDPSession(page);
  await devtools.send('Emulation.setCPUThrottlingRate', { rate: 6 });
  await setContext(page, 1048575);
  await page.waitForSelector('#models-progress[data-total="32"]');
  await page.waitForFunction(() => Number(document.querySelector('#models-progress')?.dataset.done) >= 1);
  await watchMainThread(page);
  const theme = await page.evaluate(() => document.documentElement.dataset.theme);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForFunction((t) => document.documentElement.dataset.theme !== t, theme);
  await finishedAt(page, 1048575);
  const mistral = await mainThread(page);
  measurements['mistral-7b-v0.1 @ 1048575: longest main-thread gap'] = Math.round(mistral.gap);
  assert.equal(mistral.clickedWhile, 'running', 'the click was handled during the run');
  assert.equal((await verdict(page)).text.includes(cli('mistral-7b-v0.1', 1048575).verdict), true);

  // What is typed while a run is in flight stays typed when the run's report renders (yew sets an
  // input's value on every render: the context field put back the old figure, and the change that
  // followed ran the old context again).
  await setContext(page, 1048576);
  await page.waitForFunction(() => Number(document.querySelector('#models-progress')?.dataset.done) >= 1);
  const typedWhile = await page.evaluate(() => {
    const input = document.querySelector('#model-n');
    input.value = '131072';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    return document.querySelector('#models-view').dataset.state;
  });
  assert.equal(typedWhile, 'running', 'typed while the run was in flight');
  await finishedAt(page, 1048576);
  await devtools.send('Emulation.setCPUThrottlingRate', { rate: 1 });
  assert.equal(await page.locator('#model-n').inputValue(), '131072', 'the typed context survives the report');

  // Gemma 3 27B at 131072, for the timing table.
  await run(page, 'gemma-3-27b-it', 131072);
  measurements['gemma-3-27b-it @ 131072'] = Number((await verdict(page)).ms);
  assert.equal((await verdict(page)).text.includes(cli('gemma-3-27b-it', 131072).verdict), true);
  await shot(page, 'models-gemma3-27b-131072');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a bad config.json, pasted or dropped, shows a message and keeps the previous report', async () => {
  const page = await openModels();
  const before = await verdict(page);
  const settings = await page.locator('#models-view').getAttribute('data-settings');
  await page.click('#model-paste summary');
  await page.fill('#model-paste-text', '{"model_type": "mistral", "sliding_window": ');
  await page.click('#model-paste-load');
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent
    .includes('could not read pasted config.json: config: malformed JSON'));
  assert.deepEqual(await verdict(page), before);
  assert.equal(await page.locator('#models-view').getAttribute('data-settings'), settings);
  const drop = (name, text) => dropConfig(page, name, text);
  await drop('odd.json', '{"model_type": "no-such-model", "num_hidden_layers": 4}');
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent
    .includes('could not read odd.json: model_type: unknown model type "no-such-model"'));
  assert.deepEqual(await verdict(page), before);
  await shot(page, 'models-bad-config');
  // A context over the browser's limit is refused too.
  await page.fill('#model-n', '2000000');
  await page.locator('#model-n').dispatchEvent('change');
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('more than the 1048576'));
  assert.equal(await page.locator('#models-view').getAttribute('data-settings'), settings);
  // A good config dropped replaces the model.
  await drop('tiny.json', '{"model_type": "mistral", "num_hidden_layers": 6, "sliding_window": 1000}');
  await page.waitForFunction(() => document.querySelector('#model-verdict')?.textContent.includes('tiny.json'), null, { timeout: 60000 });
  await done(page);
  assert.match(await page.locator('#model-pattern').innerText(), /6 layers: 6 x sliding_attention\(1000\)/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('image spans: the field runs the CLI\'s --images, and a bad entry is refused in one line with nothing changed', async () => {
  const page = await openModels();
  await run(page, 'gemma-3-27b-it', 4096);
  await page.fill('#model-images', '100:256');
  await page.locator('#model-images').dispatchEvent('change');
  await page.waitForFunction(() => document.querySelector('#model-verdict')?.textContent.includes('Image span 100:256: each image')
    && document.querySelector('#models-view')?.dataset.state === 'done', null, { timeout: 120000 });
  const expected = JSON.parse(execFileSync(CLI, ['model', 'gemma-3-27b-it', '--context', '4096', '--images', '100:256', '--json'],
    { encoding: 'utf8' }));
  const cells = await page.$$eval('#model-layers-table tbody tr', (rows) => rows.map((r) => Number(r.dataset.cells)));
  assert.deepEqual(cells, expected.growth.slice(1));
  assert.notDeepEqual(expected.growth, cli('gemma-3-27b-it', 4096).growth);
  const before = await verdict(page);
  const settings = await page.locator('#models-view').getAttribute('data-settings');
  await page.fill('#model-images', '100:256,300:8');
  await page.locator('#model-images').dispatchEvent('change');
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent
    .includes('images: spans 100:256 and 300:8 overlap'));
  assert.equal(await page.locator('#models-view').getAttribute('data-settings'), settings);
  assert.deepEqual(await verdict(page), before);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('"Open a scaled copy" opens the model at 512 positions in the editor, with its layer stack', async () => {
  const page = await openModels();
  await run(page, 'mistral-7b-v0.1', 131072);
  assert.match(await page.locator('#model-scale').innerText(), /scaled 1:256: context 131072 → 512, window 4096 → 16/);
  await page.click('#model-open-scaled');
  await page.waitForFunction(() => document.querySelector('#tab-editor')?.getAttribute('aria-selected') === 'true');
  await waitStat(page, 'n', 512);
  assert.match(await page.locator('#message').innerText(), /scaled 1:256/);
  // Causal window 16: every row reads 16 keys (fewer at the start).
  assert.equal(await page.locator('#stat-entries').innerText(), String(512 * 16 - (15 * 16) / 2));
  await page.click('#side-flow');
  assert.match(await page.locator('.flow-stack').innerText(), /32-layer stack/);
  await shot(page, 'models-scaled-copy-editor');
  // One undo step brings the previous document back.
  await page.keyboard.press('Control+z');
  await waitStat(page, 'n', 8);
  assert.deepEqual(page.errors, []);
  await page.close();
});

// ---- The whole gallery, and the newer kinds from configs, against the CLI ----

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The CLI's report of `source` (a gallery name or a config file) at `args`. */
const cliRun = (source, args) => JSON.parse(execFileSync(CLI, ['model', source, ...args, '--json'], { encoding: 'utf8' }));

/** A layer type's family as the legend names it: `decoder sliding_attention(4096) + cross-attention` → sliding. */
const family = (type) => type.replace(/^(encoder|decoder) /, '').replace(/ \+ cross-attention$/, '').replace(/(_attention)?(\(.*)?$/, '');
const role = (type) => (type.startsWith('encoder ') ? 'encoder' : type.startsWith('decoder ') ? 'decoder' : 'plain');

/** Waits for the finished run of `name` over `n` positions (or a failure, reported by the caller). */
async function settled(page, name, n) {
  await page.waitForFunction(([name, n]) => {
    const view = document.querySelector('#models-view')?.dataset.state;
    const v = document.querySelector('#model-verdict')?.dataset;
    return view === 'failed' || (view === 'done' && v?.model === name && v?.n === n);
  }, [name, String(n)], { timeout: 60000 });
}

/** Selects `name` in the gallery (as a user's pick: one change event) and returns the
 * milliseconds from the selection to the frame that paints its report: the DOM shows the view
 * done with `name` at `n` (or the failure), then the next animation frame, which runs just
 * before that paint. */
async function switchTimed(page, name, n) {
  return page.evaluate(([name, n]) => new Promise((resolve, reject) => {
    const view = document.querySelector('#models-view');
    const select = document.querySelector('#model-gallery');
    const shows = () => {
      const state = document.querySelector('#models-view')?.dataset.state;
      const v = document.querySelector('#model-verdict')?.dataset;
      return state === 'failed' || (state === 'done' && v?.model === name && v?.n === n);
    };
    if (select.value === name && shows()) {
      // Already shown (the first entry may be the view's default): nothing to switch.
      const start = performance.now();
      requestAnimationFrame(() => resolve(performance.now() - start));
      return;
    }
    let timer;
    const observer = new MutationObserver(() => {
      if (!shows()) return;
      observer.disconnect();
      clearTimeout(timer);
      requestAnimationFrame(() => resolve(performance.now() - start));
    });
    observer.observe(view.parentElement, { subtree: true, childList: true, attributes: true, characterData: true });
    timer = setTimeout(() => { observer.disconnect(); reject(new Error(`${name} at ${n}: no report after 60 s`)); }, 60000);
    const start = performance.now();
    select.value = name;
    select.dispatchEvent(new Event('change', { bubbles: true }));
  }), [name, String(n)]);
}

/** What the view shows of its run: the verdict's figures, the table, the legend, the strip, the notes. */
const shown = (page) => page.evaluate(() => {
  const q = (s) => document.querySelector(s);
  const all = (s) => [...document.querySelectorAll(s)];
  const state = q('#models-view').dataset.state;
  if (state !== 'done') return { state, error: q('#models-error')?.textContent ?? q('#message')?.textContent };
  return {
    state: q('#models-view').dataset.state,
    error: q('#models-error')?.textContent,
    verdict: { ...q('#model-verdict').dataset, text: q('#model-verdict-text').textContent },
    heading: q('#model-verdict .verdict-line strong').textContent,
    pattern: q('#model-pattern').dataset.pattern,
    patternShown: q('#model-pattern').textContent,
    rows: all('#model-layers-table tbody tr').map((r) => ({
      cells: Number(r.dataset.cells), lookback: r.dataset.lookback, type: r.querySelector('td.type').textContent,
    })),
    legend: all('#model-kinds li').map((li) => ({ family: li.dataset.family, role: li.dataset.role, count: Number(li.dataset.count), text: li.textContent })),
    strip: Number(q('#model-kind-strip').dataset.layers),
    notes: all('#model-notes .model-note').map((p) => p.textContent),
  };
});

/** Asserts that the view's figures are the CLI's `expected` (a `hasseflow model --json` object). */
function assertSameAsCli(got, expected, label) {
  assert.equal(got.state, 'done', `${label}: the run failed in the app: ${got.error}`);
  const v = got.verdict;
  assert.equal(v.n, String(expected.n), `${label}: n`);
  assert.equal(v.fullAt, expected.full_at === null ? undefined : String(expected.full_at), `${label}: full_at`);
  assert.equal(v.depth, String(expected.per_layer.length), `${label}: depth`);
  assert.equal(v.limitCells, String(expected.limit_cells), `${label}: limit cells`);
  if (expected.shortfall) assert.equal(v.short, String(expected.shortfall.queries), `${label}: positions short`);
  assert.equal(v.leaks, String(expected.leaks), `${label}: leaks`);
  assert.equal(v.text, expected.verdict, `${label}: verdict`);
  assert.ok(got.pattern.includes(expected.pattern), `${label}: pattern ${got.pattern} lacks ${expected.pattern}`);
  assert.ok(got.patternShown.length <= 170, `${label}: the shown pattern is clipped (${got.patternShown.length} characters)`);
  if (expected.encoder) assert.ok(got.heading.includes(`encoder ${expected.encoder.context.toLocaleString('en').replaceAll(',', '\u202f')}`), `${label}: ${got.heading}`);
  // Every layer: |R(l)|, lookback and type, as the CLI prints them.
  assert.deepEqual(got.rows.map((r) => r.cells), expected.growth.slice(1), `${label}: |R(l)|`);
  assert.deepEqual(got.rows.map((r) => r.lookback), expected.per_layer.map((l) => `${l.lookback.min}/${l.lookback.median}/${l.lookback.max}`), `${label}: lookback`);
  assert.deepEqual(got.rows.map((r) => r.type), expected.types, `${label}: layer types`);
  // The legend: every kind present (by role and family), each with its layers counted; the strip has every layer.
  const want = {};
  for (const t of expected.types) want[`${role(t)} ${family(t)}`] = (want[`${role(t)} ${family(t)}`] || 0) + 1;
  const have = {};
  for (const e of got.legend) have[`${e.role} ${e.family}`] = (have[`${e.role} ${e.family}`] || 0) + e.count;
  assert.deepEqual(have, want, `${label}: legend`);
  assert.ok(got.legend.every((e) => /: \S/.test(e.text)), `${label}: every legend entry says what it reads`);
  assert.equal(got.strip, expected.layers, `${label}: strip`);
  // The reader's notes, one line each.
  assert.equal(got.notes.length, expected.notes.length, `${label}: notes ${JSON.stringify(got.notes)}`);
  expected.notes.forEach((n, i) => assert.ok(got.notes[i].includes(n.replace(/\.$/, '')), `${label}: note ${n}`));
}

/** Runs every axe rule; the violations, printable. */
async function axeViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE);
  const r = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Asserts the legend is on screen at 1440x900 with no axe violation, in both themes. */
async function legendReadsWell(page, label) {
  for (const theme of ['light', 'dark']) {
    if ((await page.evaluate(() => document.documentElement.dataset.theme)) !== theme) await page.click('#theme');
    await page.waitForFunction((t) => document.documentElement.dataset.theme === t, theme);
    const b = await page.locator('#model-kinds').boundingBox();
    assert.ok(b && b.y >= 0 && b.y + b.height <= 900, `${label} (${theme}): the legend at ${JSON.stringify(b)} is off the 1440x900 screen`);
    assert.deepEqual(await axeViolations(page), [], `${label} (${theme}): axe-core violations`);
  }
}

// Encoder-decoders run at context 1024 (2048 positions, the encoder's first): the engine's memory
// bound for their rows grows with the square of the positions (and with the layers and the 256
// rows the heatmap asks for), and the browser's 1 GiB holds about 4600 of T5's, 3800 of Whisper's.
test('every gallery model runs in the app at 4096 positions (encoder-decoders 2048) with the CLI\'s figures, layer types, legend and notes', async () => {
  const gallery = JSON.parse(execFileSync(CLI, ['model', '--list', '--json'], { encoding: 'utf8' }));
  assert.ok(gallery.length >= 15, `the gallery lists ${gallery.length} models`);
  const runs = gallery.map((e) => ({ name: e.name, expected: cliRun(e.name, ['--context', '4096']) }));
  for (const r of runs.filter((r) => r.expected.encoder)) r.expected = cliRun(r.name, ['--context', '1024']);
  // One page, no reload: the decoder-only and encoder-only models, then the encoder-decoders.
  runs.sort((a, b) => Number(Boolean(a.expected.encoder)) - Number(Boolean(b.expected.encoder)));
  const page = await openModels();
  await setContext(page, 4096);
  const start = Date.now();
  let appMs = 0;
  const offScreen = [];
  const switches = [];
  const reachMs = {};
  let shotEncoderDecoder = false;
  for (const { name, expected } of runs) {
    const entry = { name };
    if (expected.encoder && (await page.locator('#model-n').inputValue()) !== '1024') {
      // The context's own run first, so the switch is timed from a settled view (a pick within
      // 150 ms of another change is a burst, and waits for the debounce).
      await setContext(page, 1024);
      await finishedAt(page, 1024);
    }
    switches.push([entry.name, await switchTimed(page, entry.name, expected.n)]);
    const got = await shown(page);
    assertSameAsCli(got, expected, entry.name);
    appMs += Number(got.verdict.ms);
    reachMs[entry.name] = Math.round(Number(got.verdict.ms));
    // The legend is on the one screen (page coordinates at 1440x900).
    const bottom = await page.locator('#model-kinds').evaluate((e) => e.getBoundingClientRect().bottom + window.scrollY);
    if (bottom > 900) offScreen.push(`${entry.name}: the legend ends at ${Math.round(bottom)}`);
    if (entry.name === 'qwen3-next-80b-a3b') {
      await page.locator('#model-layers-table tbody tr').nth(3).click();
      await page.waitForFunction(() => document.querySelector('#model-counts')?.dataset.layer === '4');
      await shot(page, 'models-hybrid-qwen3-next-4096');
      await legendReadsWell(page, entry.name);
    }
    // Pictures of the other families as the gallery grows: Jamba, the first encoder-decoder.
    if (entry.name.startsWith('jamba') || (expected.encoder && !shotEncoderDecoder)) {
      shotEncoderDecoder ||= Boolean(expected.encoder);
      await shot(page, `models-gallery-${entry.name}`);
    }
  }
  assert.deepEqual(offScreen, [], 'the legend below the 1440x900 screen');
  measurements[`gallery (${gallery.length} models) @ 4096 positions: whole loop`] = Date.now() - start;
  measurements[`gallery (${gallery.length} models) @ 4096 positions: reach runs in the browser`] = Math.round(appMs);
  // Each switch, from the selection to its report on screen (issue 31: within 150 ms, the
  // debounce included, in the release bundle; a dev build's UI code is unoptimised, so there the
  // figures are recorded only).
  const ms = switches.map(([, t]) => t).sort((a, b) => a - b);
  measurements[`gallery @ 4096 positions: per switch, selection to report on screen (median)`] = Math.round(ms[ms.length >> 1]);
  measurements[`gallery @ 4096 positions: per switch, selection to report on screen (slowest)`] = Math.round(ms[ms.length - 1]);
  measurements[`gallery @ 4096 positions: per switch (ms)`] = Object.fromEntries(switches.map(([n, t]) => [n, Math.round(t)]));
  measurements[`gallery @ 4096 positions: per switch, the reach run inside it (ms)`] = reachMs;
  // In the release bundle every switch is gated at 150 ms.
  const slow = switches.filter(([, t]) => t > 150).map(([n, t]) => `${n}: ${Math.round(t)} ms`);
  measurements[`gallery @ 4096 positions: switches over 150 ms`] = slow;
  if (process.env.HASSEFLOW_DIST) assert.deepEqual(slow, [], 'gallery switches over 150 ms');
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** Drops a config file (written to the artifacts folder, for the CLI too) on the view. */
async function dropConfig(page, name, text) {
  const dir = path.join(ART, 'model-configs');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, name), text);
  const dt = await page.evaluateHandle(([name, text]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], name, { type: 'application/json' }));
    return dt;
  }, [name, text]);
  await page.dispatchEvent('#models-view', 'drop', { dataTransfer: dt });
  return path.join(dir, name);
}

test('an encoder-decoder runs its encoder first, with its own length, and conv, pointwise and composite configs read as the CLI reads them', async () => {
  const page = await openModels();
  await setContext(page, 2048);
  const t5 = '{"model_type": "t5", "num_layers": 6, "num_decoder_layers": 6, "d_model": 512, "num_heads": 8, "is_encoder_decoder": true}';
  const file = await dropConfig(page, 't5-small.json', t5);
  // The encoder gets the context's length by default: 2048 + 2048 positions.
  await settled(page, 't5-small.json', 4096);
  assertSameAsCli(await shown(page), cliRun(file, ['--context', '2048']), 't5 (default encoder length)');
  assert.equal(await page.locator('#model-docs').count(), 0, 'no document field for an encoder-decoder');
  assert.match(await page.locator('#model-encoder-hint').innerText(), /encoder's positions come first/);
  await page.fill('#model-encoder', '1000');
  await page.locator('#model-encoder').dispatchEvent('change');
  await settled(page, 't5-small.json', 3048);
  const got = await shown(page);
  assertSameAsCli(got, cliRun(file, ['--context', '2048', '--encoder-context', '1000']), 't5 (encoder 1000)');
  assert.deepEqual(got.legend.map((e) => e.text.split(':')[0]), ['encoder · full × 6', 'decoder · full + cross-attention × 6']);
  assert.match(await page.locator('#model-verdict').innerText(), /Positions 0–999 are the encoder's, 1000–3047 the decoder's/);
  // The heatmap's last row, a decoder query: in an encoder layer it reads only itself; from the
  // first decoder layer on, every encoder position and its own past (no cell left empty).
  const emptyInLastRow = () => page.locator('#model-heat').evaluate((c) => {
    const ctx = c.getContext('2d');
    const e = ctx.getImageData(c.width - 1, 0, 1, 1).data; // query 5, keys at the end: unreached
    const d = ctx.getImageData(0, c.height - 1, c.width, 1).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] === e[0] && d[i + 1] === e[1] && d[i + 2] === e[2]) n++;
    return n;
  });
  assert.equal(await emptyInLastRow(), 255);
  await page.locator('#model-layers-table tbody tr').nth(6).click();
  await page.waitForFunction(() => document.querySelector('#model-counts')?.dataset.layer === '7');
  assert.equal(await emptyInLastRow(), 0);
  await shot(page, 'models-encoder-decoder-t5');
  await legendReadsWell(page, 't5');
  // A convolution hybrid (LFM2), an SSM hybrid with MLP-only blocks (Nemotron-H) and a composite
  // whose text tower is read (with the reader's note).
  const configs = [
    ['lfm2.json', { model_type: 'lfm2', num_hidden_layers: 6, conv_L_cache: 3, layer_types: ['conv', 'conv', 'full_attention', 'conv', 'conv', 'full_attention'] }, ['conv', 'full']],
    ['nemotron-h.json', { model_type: 'nemotron_h', num_hidden_layers: 8, hybrid_override_pattern: 'M-M*M-M-' }, ['linear', 'pointwise', 'full']],
    ['llava.json', { model_type: 'llava', text_config: { model_type: 'llama', num_hidden_layers: 8 } }, ['full']],
  ];
  for (const [name, config, families] of configs) {
    const f = await dropConfig(page, name, JSON.stringify(config));
    await settled(page, name, 2048);
    const seen = await shown(page);
    assertSameAsCli(seen, cliRun(f, ['--context', '2048']), name);
    assert.deepEqual(seen.legend.map((e) => e.family), families, name);
    if (name === 'nemotron-h.json') await shot(page, 'models-nemotron-h-kinds');
  }
  assert.match((await shown(page)).notes[0], /^Note: the text tower was read: text_config \(llama\) of the llava config\.$/);
  assert.deepEqual(page.errors, []);
  await page.close();
});
