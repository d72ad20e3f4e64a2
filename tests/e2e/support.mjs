// What every end-to-end test file shares: paths, the static server for dist/, a headless
// Chromium with the project's flags, a fresh page, and the UI helpers (stats, cells, presets).
// Every wait is on a DOM condition; nothing sleeps.
import { before, after } from 'node:test';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../..');
/** The built app under test: dist/ (trunk build), or HASSEFLOW_DIST (the release bundle that
 * scripts/release.sh builds; scripts/test.sh runs part of the suite against it). */
export const DIST = process.env.HASSEFLOW_DIST ? path.resolve(ROOT, process.env.HASSEFLOW_DIST) : path.join(ROOT, 'dist');
/** The built files' names: trunk writes its 64-bit content hash in hex without leading zeros,
 * usually 16 digits, sometimes fewer (a build named hasseflow-app-873e79382d8ddee_bg.wasm failed a
 * {16} pattern). */
export const HASHED_WASM = /^hasseflow-app-[0-9a-f]{1,16}_bg\.wasm$/;
export const HASHED_JS = /^hasseflow-app-[0-9a-f]{1,16}\.js$/;
export const HASHED_CSS = /^style-[0-9a-f]{1,16}\.css$/;
export const ART = path.join(ROOT, 'target', 'e2e-artifacts');
export const FIX = path.join(HERE, 'fixtures');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
/** The CLI built by ./scripts/test.sh (cargo build -p hasseflow-cli): the oracle for the app
 * (HASSEFLOW_CLI overrides the path, for a build in another target directory). */
export const CLI = process.env.HASSEFLOW_CLI || path.join(ROOT, 'target', 'debug', 'hasseflow');

/** The headless flags of TOOLCHAIN.md (WebGPU is added by the caller that wants it). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A free TCP port on 127.0.0.1. */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForServer(url) {
  for (let i = 0; i < 200; i++) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 50)); // polling the server's readiness, not a test sleep
  }
  throw new Error(`server at ${url} did not start`);
}

/** Serves dist/ on 127.0.0.1; `stop()` kills the server by its PID. */
export async function startServer() {
  mkdirSync(ART, { recursive: true });
  const port = await freePort();
  const server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', DIST], {
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${port}/`;
  await waitForServer(base);
  return { base, stop: () => process.kill(server.pid) };
}

/** A persistent headless Chromium context on a fresh profile, with `extraArgs` added. */
export async function launch(extraArgs = []) {
  const profile = mkdtempSync(path.join(tmpdir(), 'hasseflow-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1280, height: 800 },
    args: [...CHROMIUM_ARGS, ...extraArgs],
  });
  context.closeAll = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return context;
}

/** A page on a fresh app: empty localStorage, no dialogs allowed (an alert would mean injected markup). */
export async function openFresh(context, url) {
  const page = await context.newPage();
  page.on('dialog', (d) => {
    d.dismiss();
    throw new Error(`unexpected dialog: ${d.message()}`);
  });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.errors = errors;
  // Clear the origin's storage from a page where the app does not run (the THEORY.md the build
  // ships): cleared under a booting app, an autosave it had already read could be written back.
  await page.goto(new URL('THEORY.md', url).href);
  await page.evaluate(() => localStorage.clear());
  await page.goto(url);
  await page.waitForSelector('#grid');
  return page;
}

/** The files of the lazily loaded module `name` (`hasseflow-lazy`, `hasseflow-formats`,
 * `hasseflow-designer`) that `page` fetches from now on, in order (a list that grows). */
export function moduleFetches(page, name) {
  const fetched = [];
  page.on('request', (r) => {
    const file = path.basename(new URL(r.url()).pathname);
    if (file.startsWith(`${name}-`)) fetched.push(file);
  });
  return fetched;
}

/** Holds every fetch of module `name`'s wasm until `release()`, then refuses it (a load that
 * fails); `restore()` lets it load again. */
export async function holdModule(page, name) {
  let release;
  const held = new Promise((r) => { release = r; });
  const wasm = new RegExp(`${name}-[0-9a-f]+_bg\\.wasm$`);
  await page.route(wasm, async (route) => {
    await held;
    await route.abort();
  });
  return { release, restore: () => page.unroute(wasm) };
}

/** The status line's message, without its close button. */
export const messageText = async (page) => (await page.locator('#message').innerText()).replace(/\s*×$/, '');

export const stat = (page, id) => page.locator(`#stat-${id}`).innerText();

export async function waitStat(page, id, value) {
  await page.waitForFunction(
    ([id, value]) => document.querySelector(`#stat-${id}`)?.textContent === value,
    [id, String(value)],
  );
}

/** Canvas coordinates (page pixels) of the centre of cell (q, k) at zoom 1. */
export async function cellCentre(page, q, k) {
  const box = await page.locator('#grid').boundingBox();
  const n = Number(await stat(page, 'n'));
  // The grid draws in 520 units scaled into the canvas' content box (inside a 1 px border).
  const unit = (box.width - 2) / 520;
  const ruler = 30;
  const s = (520 - ruler) / n;
  return { x: box.x + 1 + (ruler + (k + 0.5) * s) * unit, y: box.y + 1 + (ruler + (q + 0.5) * s) * unit };
}

export async function loadPreset(page, name, n, params = {}) {
  await page.selectOption('#preset', name);
  await page.fill('#preset-n', String(n));
  await page.locator('#preset-n').dispatchEvent('change');
  for (const [k, v] of Object.entries(params)) {
    const el = page.locator(`#param-${k}`);
    const tag = await el.evaluate((e) => e.tagName + (e.type ? ':' + e.type : ''));
    if (tag.startsWith('SELECT')) await el.selectOption(String(v));
    else if (tag === 'INPUT:checkbox') await el.setChecked(Boolean(v));
    else {
      await el.fill(String(v));
      await el.dispatchEvent('change');
    }
  }
  await page.click('#preset-load');
  await page.waitForFunction((name) => document.querySelector('#message')?.textContent.includes(`preset ${name}`), name);
}

export async function setSize(page, n) {
  await page.fill('#size', String(n));
  await page.locator('#size').dispatchEvent('change');
  await waitStat(page, 'n', n);
}

export async function paintCausal(page, n) {
  await page.click('#op-clear');
  await waitStat(page, 'entries', 0);
  await page.click('#tool-draw');
  for (let q = 0; q < n; q++) {
    const a = await cellCentre(page, q, 0);
    const b = await cellCentre(page, q, q);
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move(b.x, b.y, { steps: Math.max(1, q * 2) });
    await page.mouse.up();
  }
}

export async function shot(page, name, options = {}) {
  await page.screenshot({ path: path.join(ART, `${name}.png`), ...options });
}

/**
 * Registers the usual hooks of a test file: before its tests, serve dist/ and launch one
 * Chromium; after them, close both. Returns an object whose `server` and `context` are set by then.
 */
export function servedApp(extraArgs = []) {
  const app = {};
  before(async () => {
    app.server = await startServer();
    app.context = await launch(extraArgs);
  });
  after(async () => {
    if (app.context) await app.context.closeAll();
    if (app.server) app.server.stop();
  });
  return app;
}

/** Waits until the Flow panel shows a finished run of the current revision. */
export async function flowDone(page, timeout = 60000) {
  await page.waitForFunction(
    () => {
      const p = document.querySelector('#flow-panel');
      return p?.dataset.state === 'done' && p.dataset.revision === document.querySelector('main')?.dataset.revision;
    },
    null,
    { timeout },
  );
}
