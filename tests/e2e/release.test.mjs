// The release bundle (scripts/release.sh; scripts/test.sh builds it into dist-release/ and runs
// this file, with most of the suite, against it through HASSEFLOW_DIST): its wasm is at most
// 450,000 bytes after `gzip -9` (issue 12's target, read in 1000-byte kilobytes; GNU gzip, the
// measure of every row in docs/BENCHMARKS.md), and it is the build release.sh makes, with no
// panic messages or source locations compiled in. That the app works from it is what the other
// test files check when run against the same folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { DIST, HASHED_WASM } from './support.mjs';

/** The target for the gzipped wasm, in bytes (450 KB, read as 1000-byte kilobytes: the stricter). */
const MAX_GZIPPED = 450_000;

function wasmPath() {
  const files = readdirSync(DIST).filter((f) => HASHED_WASM.test(f));
  assert.equal(files.length, 1, `one hashed wasm in ${DIST}: ${files.join(', ')}`);
  return path.join(DIST, files[0]);
}

/** The size of `file` after GNU gzip at `level`. */
function gzipped(file, level) {
  const r = spawnSync('gzip', [`-${level}`, '-c', file], { maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `gzip failed: ${r.stderr}`);
  return r.stdout.length;
}

test(`the release wasm is at most ${MAX_GZIPPED} bytes gzipped`, (t) => {
  assert.ok(process.env.HASSEFLOW_DIST, 'run against the release bundle: HASSEFLOW_DIST=dist-release (scripts/test.sh)');
  const file = wasmPath();
  const gz = gzipped(file, 9);
  t.diagnostic(`release wasm: ${readFileSync(file).length} bytes; gzip -9: ${gz} bytes, gzip -6: ${gzipped(file, 6)} bytes`);
  assert.ok(gz <= MAX_GZIPPED, `${gz} bytes after gzip -9, over ${MAX_GZIPPED}`);
});

test('the release wasm is built by release.sh: no panic messages, no source paths', () => {
  const text = readFileSync(wasmPath()).toString('latin1');
  // Both are in every build that links the prebuilt standard library with its panic machinery.
  for (const needle of ['panicked at', 'library/core/src', '.cargo/registry']) {
    assert.ok(!text.includes(needle), `the wasm contains "${needle}": not built by scripts/release.sh?`);
  }
});
