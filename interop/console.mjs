// console.mjs: signs in to a running agentnode's owner console with
// Debian's headless chromium (puppeteer-core), approves one pending
// request by clicking its button, and prints what a person saw as one JSON
// object on stdout; console_test.go decides whether that is right.
//
// Usage: node console.mjs '<json>' where json is
//   {"chromium": "/usr/bin/chromium", "shots": "<dir>", "base": "http://127.0.0.1:7447",
//    "token": "<API token>", "wrong": "<a wrong token>", "approval": "<approval id>"}
import { join } from 'node:path';
import { withChromium } from './chromium.mjs';

const spec = JSON.parse(process.argv[2]);
const report = { console: [] };
await withChromium(spec.chromium, async (browser) => {
  const page = await browser.newPage();
  page.on('console', (m) => report.console.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => report.console.push(`pageerror: ${e.message}`));
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(spec.base + '/console', { waitUntil: 'load' });
  report.signInForm = (await page.$('#login')) !== null;

  report.wrong = await signIn(page, spec.wrong);
  report.wrongError = await text(page, '.error');
  report.afterWrongPending = (await page.$('#pending')) !== null;

  report.right = await signIn(page, spec.token);
  const row = `tr.approval[data-id="${spec.approval}"]`;
  report.rowBefore = (await page.$(row)) !== null;
  report.summaryText = await text(page, `${row} td:nth-child(4)`);
  report.summaryElements = await page.$$eval(`${row} td:nth-child(4) *`, (els) => els.length);
  await page.screenshot({ path: join(spec.shots, 'console-pending.png'), fullPage: true });

  const [resp] = await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click(`${row} button.approve`)]);
  report.approveStatus = resp ? resp.status() : 0;
  report.notice = await text(page, '#notice');
  report.rowAfter = (await page.$(row)) !== null;
  report.decided = await text(page, '#decided');
  report.pwned = await page.evaluate(() => window.__pwned === true);
  await page.screenshot({ path: join(spec.shots, 'console-approved.png'), fullPage: true });
  await page.close();
});
process.stdout.write(JSON.stringify(report) + '\n');

async function signIn(page, token) {
  await page.goto(spec.base + '/console', { waitUntil: 'load' });
  await page.type('#token', token);
  const [resp] = await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('#login button')]);
  return resp ? resp.status() : 0;
}

async function text(page, sel) {
  const el = await page.$(sel);
  return el ? (await page.evaluate((e) => e.textContent, el)).trim() : '';
}
