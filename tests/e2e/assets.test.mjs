// Cache-safe assets: the built dist/ names the wasm, its JS glue and the stylesheet after a hash
// of their contents (Trunk.toml filehash), index.html carries the hashed names (preload links that
// static/boot.js reads, no inline script), and the page loads from those files: the wasm URL the
// browser fetches contains the hash, it is fetched once (the preload is used), and the console
// stays clean.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DIST, HASHED_CSS, HASHED_JS, HASHED_WASM, servedApp } from './support.mjs';

const app = servedApp();

test('dist/ names the wasm, the JS glue and the stylesheet by content hash, and index.html points at them', () => {
  const files = readdirSync(DIST);
  for (const re of [HASHED_WASM, HASHED_JS, HASHED_CSS]) {
    assert.equal(files.filter((f) => re.test(f)).length, 1, `one file matching ${re} in ${files.join(', ')}`);
  }
  for (const stale of ['hasseflow-app_bg.wasm', 'hasseflow-app.js', 'style.css']) assert.ok(!files.includes(stale), `unhashed ${stale} in dist/`);
  const html = readFileSync(path.join(DIST, 'index.html'), 'utf8');
  const wasm = files.find((f) => HASHED_WASM.test(f));
  const js = files.find((f) => HASHED_JS.test(f));
  assert.match(html, new RegExp(`<link rel="preload" href="\\./${wasm}"[^>]*data-hasseflow="wasm"`));
  assert.match(html, new RegExp(`<link rel="modulepreload" href="\\./${js}"[^>]*data-hasseflow="js"`));
  assert.ok(!/<script(?![^>]*\bsrc=)[^>]*>/.test(html), 'no inline script in index.html');
});

test('the page loads its hashed wasm once, through boot.js, with a clean console', async () => {
  const page = await app.context.newPage();
  const requests = [];
  const messages = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') messages.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => messages.push(`pageerror: ${e}`));
  await page.goto(app.server.base);
  await page.waitForSelector('#hasse .node');
  const wasm = requests.filter((p) => p.endsWith('.wasm'));
  assert.equal(wasm.length, 1, `wasm requests: ${wasm.join(', ')}`);
  assert.match(path.basename(wasm[0]), HASHED_WASM);
  assert.ok(requests.some((p) => HASHED_JS.test(path.basename(p))), `the hashed JS glue is loaded: ${requests.join(', ')}`);
  assert.ok(requests.includes('/boot.js'));
  assert.deepEqual(messages, []);
  await page.close();
});
