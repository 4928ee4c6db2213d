// chromium.mjs: Debian's headless chromium through puppeteer-core, as the
// browser tests (browser.mjs, console.mjs) launch it: no sandbox (root),
// nothing that reaches the network by itself, a fresh profile removed at
// the end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

// withChromium launches chromium at executablePath, runs fn(browser) and
// always closes the browser and removes its profile.
export async function withChromium(executablePath, fn) {
  const profile = mkdtempSync(join(tmpdir(), 'agentnode-chromium-'));
  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      `--user-data-dir=${profile}`],
  });
  try {
    return await fn(browser);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
