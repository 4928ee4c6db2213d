// console_owner.mjs: an owner signs in to a running agentnode's console
// with their own Nostr key, through a NIP-07 extension stand-in: a
// window.nostr injected before the page loads (as extensions do) whose
// getPublicKey and signEvent are answered by nostr-tools with a known
// key. It reports what the owner saw, approves one of their requests by
// clicking, tries to approve another owner's request with a hand-made
// form post, measures horizontal overflow at 1280 and 390 px, and prints
// one JSON object on stdout; console_owner_test.go decides.
//
// Usage: node console_owner.mjs '<json>' where json is
//   {"chromium": "/usr/bin/chromium", "shots": "<dir>", "base": "http://127.0.0.1:7447",
//    "sk": "<owner secret hex>", "stranger": "<a key owning nothing>",
//    "mine": "<approval id of the owner's agent>", "theirs": "<approval id of another owner's agent>"}
import { join } from 'node:path';
import { finalizeEvent, getPublicKey } from 'nostr-tools/pure';
import { hexToBytes } from 'nostr-tools/utils';
import { withChromium } from './chromium.mjs';

const spec = JSON.parse(process.argv[2]);
const report = { console: [] };
await withChromium(spec.chromium, async (browser) => {
  report.stranger = await signInAs(browser, spec.stranger, 'stranger');
  const page = await extensionPage(browser, spec.sk);
  report.owner = await clickSignIn(page);
  report.signedIn = await text(page, '#signed-in');
  report.myAgents = await page.$$eval('li.my-agent', (els) => els.map((e) => e.dataset.agent));
  report.pending = await page.$$eval('tr.approval', (els) => els.map((e) => e.dataset.id));
  report.overflow = {};
  for (const w of [1280, 390]) {
    await page.setViewport({ width: w, height: 900 });
    await page.goto(spec.base + '/console', { waitUntil: 'load' });
    report.overflow[w] = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await page.screenshot({ path: join(spec.shots, `console-owner-${w}.png`), fullPage: true });
  }
  await page.setViewport({ width: 1280, height: 900 });
  const row = `tr.approval[data-id="${spec.mine}"]`;
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click(`${row} button.approve`)]);
  report.approveNotice = await text(page, '#notice');
  report.forgedNotice = await forgeApprove(page, spec.theirs);
  await page.close();
});
process.stdout.write(JSON.stringify(report) + '\n');

// extensionPage opens a page whose window.nostr signs with sk.
async function extensionPage(browser, sk) {
  const page = await browser.newPage();
  page.on('console', (m) => report.console.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => report.console.push(`pageerror: ${e.message}`));
  const key = hexToBytes(sk);
  await page.exposeFunction('nip07PublicKey', () => getPublicKey(key));
  await page.exposeFunction('nip07Sign', (evt) => finalizeEvent(evt, key));
  await page.evaluateOnNewDocument(() => {
    window.nostr = { getPublicKey: () => window.nip07PublicKey(), signEvent: (evt) => window.nip07Sign(evt) };
  });
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(spec.base + '/console', { waitUntil: 'load' });
  return page;
}

// signInAs tries to sign in with sk and returns the status line shown.
async function signInAs(browser, sk, name) {
  const page = await extensionPage(browser, sk);
  await page.click('#nostr-login');
  await page.waitForFunction(() => document.getElementById('nostr-status').textContent.startsWith('Refused'), { timeout: 30000 });
  const seen = await text(page, '#nostr-status');
  await page.screenshot({ path: join(spec.shots, `console-${name}.png`), fullPage: true });
  await page.close();
  return seen;
}

// clickSignIn clicks "Sign in with Nostr" and waits for the console.
async function clickSignIn(page) {
  await Promise.all([page.waitForNavigation({ waitUntil: 'load', timeout: 30000 }), page.click('#nostr-login')]);
  return text(page, '#signed-in');
}

// forgeApprove posts the approve form of an approval the page does not
// list (another owner's), with the session's CSRF token, as a person
// editing the page could; it returns the notice the console shows.
async function forgeApprove(page, id) {
  await page.evaluate((id) => {
    const form = document.querySelector('form[action="/console/logout"]').cloneNode(true);
    form.action = `/console/approvals/${id}/approve`;
    document.body.appendChild(form);
    form.submit();
  }, id);
  await page.waitForNavigation({ waitUntil: 'load' });
  return text(page, '#notice');
}

async function text(page, sel) {
  const el = await page.$(sel);
  return el ? (await page.evaluate((e) => e.textContent, el)).trim() : '';
}
