// The page `./scripts/serve.sh` serves (`trunk serve`) loads with a clean console: no CSP
// violation (trunk's inline autoreload script is off, Trunk.toml [serve] no_autoreload), no error
// and no warning. The test starts `trunk serve` itself on a free port with its own dist folder
// (so dist/ of the e2e build is left alone), waits for the page, and stops trunk by its PID.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, freePort, launch } from './support.mjs';

let trunk;
let dist;
let context;
let base;
let log = '';

before(async () => {
  const port = await freePort();
  dist = mkdtempSync(path.join(tmpdir(), 'hasseflow-serve-'));
  trunk = spawn('trunk', ['serve', '--locked', '--port', String(port), '--dist', dist], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  trunk.stdout.on('data', (d) => (log += d));
  trunk.stderr.on('data', (d) => (log += d));
  base = `http://127.0.0.1:${port}/`;
  // trunk builds first (a no-op cargo build after ./scripts/test.sh's, then wasm-bindgen), then serves.
  const deadline = Date.now() + 10 * 60 * 1000;
  for (;;) {
    if (trunk.exitCode !== null) throw new Error(`trunk serve exited (${trunk.exitCode}):\n${log}`);
    try {
      const r = await fetch(base);
      if (r.ok && (await r.text()).includes('boot.js')) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`trunk serve did not come up:\n${log}`);
    await new Promise((r) => setTimeout(r, 250)); // polling the server's readiness, not a test sleep
  }
  context = await launch();
});

after(async () => {
  if (context) await context.closeAll();
  if (trunk && trunk.exitCode === null) {
    const exited = new Promise((r) => trunk.once('exit', r));
    process.kill(trunk.pid, 'SIGTERM');
    await exited;
  }
  if (dist) rmSync(dist, { recursive: true, force: true });
});

test('trunk serve: the page loads and its console stays clean (no CSP violation, error or warning)', async () => {
  const page = await context.newPage();
  const messages = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') messages.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => messages.push(`pageerror: ${e}`));
  await page.goto(base);
  await page.waitForSelector('#grid');
  await page.waitForSelector('#hasse .node');
  // A reload too: the second load is the one a user sees after a rebuild.
  await page.reload();
  await page.waitForSelector('#hasse .node');
  assert.deepEqual(messages, [], 'console messages under trunk serve');
  const html = await (await fetch(base)).text();
  assert.ok(!/<script(?![^>]*\bsrc=)[^>]*>/.test(html), `an inline script is served:\n${html}`);
  await page.close();
});
