// Independent-client interop tests: nostr-tools (a client agentnode does not
// control) talks to a running agentnode relay over a real websocket.
//
// Environment:
//   RELAY_URL      ws://host:port of a running `agentnode serve`
//   AGENTNODE_BIN  path to the agentnode binary (used to publish a lesson
//                  from the CLI while nostr-tools listens)
//
// interop_test.go (TestNostrToolsInterop) sets both and runs this file; by
// hand: RELAY_URL=ws://127.0.0.1:7447 AGENTNODE_BIN=./agentnode npm test

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import WebSocket from 'ws'
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay'
import { finalizeEvent, generateSecretKey, getPublicKey, verifyEvent } from 'nostr-tools/pure'

useWebSocketImplementation(WebSocket)

const RELAY_URL = process.env.RELAY_URL
const AGENTNODE_BIN = process.env.AGENTNODE_BIN
if (!RELAY_URL || !AGENTNODE_BIN) {
  throw new Error(
    'RELAY_URL and AGENTNODE_BIN must be set (got RELAY_URL=' +
      JSON.stringify(RELAY_URL) + ', AGENTNODE_BIN=' + JSON.stringify(AGENTNODE_BIN) +
      '); run `go test -tags libsecp256k1 ./interop` to have them set for you'
  )
}

// DEADLINE bounds every wait on the relay or the CLI: nothing sleeps.
const DEADLINE = 15_000

// ---- helpers ---------------------------------------------------------------

/** connect opens a nostr-tools Relay that is closed when test t ends. */
async function connect(t) {
  const relay = await Relay.connect(RELAY_URL, { timeout: DEADLINE })
  relay.onnotice = (msg) => t.diagnostic(`NOTICE from relay: ${msg}`)
  t.after(() => relay.close())
  return relay
}

/** key is a fresh keypair: sk (bytes), hex (sk as hex), pk (hex pubkey). */
function key() {
  const sk = generateSecretKey()
  return { sk, hex: Buffer.from(sk).toString('hex'), pk: getPublicKey(sk) }
}

/** sign finalizes a template (created_at defaults to now) with k. */
function sign(k, { kind, tags = [], content = '', created_at = now() }) {
  return finalizeEvent({ kind, tags, content, created_at }, k.sk)
}

const now = () => Math.floor(Date.now() / 1000)

/** word is a random lower-case word (letters only), unique per run. */
function word(prefix = '') {
  const letters = 'bcdfghjklmnpqrstvwxz'
  return prefix + Array.from(randomBytes(10), (b) => letters[b % letters.length]).join('')
}

/** plain strips non-JSON state (nostr-tools caches verification in a symbol). */
const plain = (evt) => JSON.parse(JSON.stringify(evt))

/** within rejects when p does not settle in ms. */
function within(p, ms, what) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)
  })
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}

/** publish sends evt and requires OK true. */
async function publish(relay, evt) {
  try {
    return await relay.publish(evt)
  } catch (err) {
    assert.fail(`relay refused kind ${evt.kind} ${evt.id}: ${err.message}\nsent: ${JSON.stringify(evt)}`)
  }
}

/** refusal sends evt, requires OK false and returns the relay's message. */
async function refusal(relay, evt) {
  let reason
  try {
    reason = await relay.publish(evt)
  } catch (err) {
    return err.message
  }
  assert.fail(`relay accepted kind ${evt.kind} (OK true, ${JSON.stringify(reason)}) but must refuse it\nsent: ${JSON.stringify(evt)}`)
}

/**
 * query runs a REQ until EOSE and returns the stored events. The relay must
 * send a real EOSE within the deadline (nostr-tools' own EOSE timeout is
 * pushed past it), and every event must match the filters and verify.
 */
function query(relay, filters) {
  return new Promise((resolve, reject) => {
    const events = []
    const invalid = []
    let done = false
    const finish = (err) => {
      if (done) return
      done = true
      clearTimeout(timer)
      sub.close()
      if (err) reject(err)
      else resolve(events)
    }
    const timer = setTimeout(() => finish(new Error(`no EOSE within ${DEADLINE} ms for ${JSON.stringify(filters)}`)), DEADLINE)
    const sub = relay.subscribe(filters, {
      eoseTimeout: DEADLINE * 2,
      onevent: (evt) => events.push(evt),
      oninvalidevent: (evt) => invalid.push(evt),
      oneose: () => {
        if (invalid.length > 0) {
          finish(new Error(`relay sent ${invalid.length} event(s) that fail the filter ${JSON.stringify(filters)} or verification: ${JSON.stringify(invalid)}`))
          return
        }
        finish()
      },
      onclose: (reason) => finish(new Error(`subscription ${JSON.stringify(filters)} closed before EOSE: ${reason}`)),
    })
  })
}

/** readBack fetches evt by id and asserts the relay returns it unchanged. */
async function readBack(relay, evt) {
  const got = await query(relay, [{ ids: [evt.id] }])
  assert.equal(got.length, 1, `REQ ids [${evt.id}] (kind ${evt.kind}) returned ${got.length} events`)
  assert.deepEqual(plain(got[0]), plain(evt), `kind ${evt.kind} came back changed`)
  assert.equal(verifyEvent(plain(got[0])), true, `kind ${evt.kind} read back does not verify`)
}

/** definition publishes an old-shape 4199 by k and returns it. */
async function definition(relay, k, { title = word('Agent '), description = 'Reviews code.' } = {}) {
  const def = sign(k, {
    kind: 4199,
    tags: [
      ['title', title],
      ['role', 'Careful senior reviewer'],
      ['instructions', 'Read the diff, then comment.'],
      ['use-criteria', 'When a pull request needs review'],
      ['description', description],
      ['tool', 'read_file'],
      ['tool', 'grep'],
      ['ver', '1'],
      ['image', 'https://example.com/reviewer.png'],
    ],
  })
  await publish(relay, def)
  return def
}

/** lesson builds (unpublished) a 4129 by agent k about definition defID. */
function lesson(k, defID, n = 0) {
  return sign(k, {
    kind: 4129,
    tags: [['e', defID], ['title', `Lesson ${n}`], ['category', 'testing'], ['t', 'interop']],
    content: `Lesson number ${n}: run the tests before pushing.`,
  })
}

/** run executes the agentnode binary and resolves with its output. */
function run(args) {
  return new Promise((resolve, reject) => {
    execFile(AGENTNODE_BIN, args, { timeout: DEADLINE }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`agentnode ${args.join(' ')}: ${err.message}\nstdout: ${stdout}\nstderr: ${stderr}`))
        return
      }
      resolve({ stdout, stderr })
    })
  })
}

// ---- tests -----------------------------------------------------------------

test('every agent kind round-trips unchanged and verifies', async (t) => {
  const relay = await connect(t)
  const author = key()
  const agent = key()
  const owner = key()

  const oldDef = await definition(relay, author)
  const newDef = sign(author, {
    kind: 4199,
    tags: [
      ['d', 'code-reviewer'],
      ['title', 'Code Reviewer'],
      ['description', 'Reviews pull requests and explains its findings.'],
      ['tool', 'read_file'],
      ['ver', '2'],
      ['e', oldDef.id, RELAY_URL, 'fork'],
    ],
    content: '# Code Reviewer\n\nYou review code.\n\n## Rules\n\n- Be kind.\n- Be *precise*.\n',
  })
  const nudge = sign(author, {
    kind: 4201,
    tags: [['title', 'read-only'], ['allow-tool', 'grep'], ['deny-tool', 'write_file'], ['only-tool', 'read_file']],
    content: 'Never modify files; only read them.',
  })
  const les = lesson(agent, newDef.id, 1)
  const comment = sign(owner, {
    kind: 1111,
    tags: [
      ['E', les.id, RELAY_URL, agent.pk],
      ['K', '4129'],
      ['P', agent.pk],
      ['e', les.id, RELAY_URL, agent.pk],
      ['k', '4129'],
      ['p', agent.pk],
    ],
    content: 'Also run the linter.',
  })
  const profile = sign(agent, {
    kind: 0,
    tags: [['bot'], ['e', newDef.id], ['p', owner.pk]],
    content: JSON.stringify({ name: 'Code Reviewer', about: 'an agent' }),
  })
  const claims = sign(owner, { kind: 14199, tags: [['p', agent.pk], ['p', key().pk]] })

  for (const evt of [newDef, nudge, les, comment, profile, claims]) {
    await publish(relay, evt)
  }
  for (const evt of [oldDef, newDef, nudge, les, comment, profile, claims]) {
    const shape = evt.kind === 4199 ? (evt.tags[0][0] === 'd' ? ' (new shape)' : ' (old shape)') : ''
    await t.test(`kind ${evt.kind}${shape}`, () => readBack(relay, evt))
  }
})

test('a lesson published by the agentnode CLI arrives live on a nostr-tools subscription', async (t) => {
  const relay = await connect(t)
  const author = key()
  const agent = key()
  const def = await definition(relay, author)
  const title = word('Live lesson ')

  const stored = []
  let cli
  const live = new Promise((resolve, reject) => {
    const sub = relay.subscribe([{ kinds: [4129], '#e': [def.id] }], {
      eoseTimeout: DEADLINE * 2,
      onevent: (evt) => {
        if (!sub.eosed) {
          stored.push(evt)
          return
        }
        resolve(evt)
      },
      oninvalidevent: (evt) => reject(new Error(`live event fails the filter or verification: ${JSON.stringify(evt)}`)),
      oneose: () => {
        cli = run([
          'lesson', 'publish',
          '--relay', RELAY_URL,
          '--key', agent.hex,
          '--definition', def.id,
          '--title', title,
          '--category', 'interop',
          '--content', 'Lessons travel live.',
        ])
        cli.catch(reject)
      },
      onclose: (reason) => reject(new Error(`subscription closed: ${reason}`)),
    })
    t.after(() => sub.close())
  })

  const evt = await within(live, DEADLINE, 'live 4129 from `agentnode lesson publish`')
  await within(cli, DEADLINE, '`agentnode lesson publish` exit')
  assert.deepEqual(stored, [], 'no lesson should be stored before the CLI ran')
  assert.equal(evt.kind, 4129)
  assert.equal(evt.pubkey, agent.pk, 'lesson must be signed by --key')
  assert.equal(evt.content, 'Lessons travel live.')
  assert.deepEqual(evt.tags.filter((tag) => tag[0] === 'e').map((tag) => tag[1]), [def.id])
  assert.ok(evt.tags.some((tag) => tag[0] === 'title' && tag[1] === title), `no title tag ${title}: ${JSON.stringify(evt.tags)}`)
  assert.ok(evt.tags.some((tag) => tag[0] === 'category' && tag[1] === 'interop'), `no category tag: ${JSON.stringify(evt.tags)}`)
  assert.equal(verifyEvent(plain(evt)), true, 'CLI lesson does not verify')
})

test('malformed agent events are refused with invalid:', async (t) => {
  const relay = await connect(t)
  const k = key()
  const def = await definition(relay, k)
  const cases = {
    '4199 without a title tag': sign(k, {
      kind: 4199,
      tags: [['description', 'an agent with no name'], ['role', 'nobody']],
    }),
    '4129 whose e tag is not a 64-hex id': sign(k, {
      kind: 4129,
      tags: [['e', 'not-an-event-id'], ['title', 'Broken'], ['category', 'testing']],
      content: 'points nowhere',
    }),
    // (was '1111 with E but no K': NIP-22 readers resolve an undeclared root
    // kind from the root, so that comment is accepted now; docs/INTEROP.md)
    '1111 on a lesson whose E is not a 64-hex id': sign(k, {
      kind: 1111,
      tags: [['E', 'not-an-event-id'], ['K', '4129'], ['P', k.pk], ['e', def.id], ['k', '4129'], ['p', k.pk]],
      content: 'root points nowhere',
    }),
    '14199 whose p is not a 64-hex pubkey': sign(k, {
      kind: 14199,
      tags: [['p', 'npub1notapubkey']],
    }),
    'kind 0 with bot whose e is not a 64-hex id': sign(k, {
      kind: 0,
      tags: [['bot'], ['e', def.id.slice(0, 63)], ['p', key().pk]],
      content: '{"name":"broken bot"}',
    }),
  }
  for (const [name, evt] of Object.entries(cases)) {
    await t.test(name, async () => {
      const msg = await refusal(relay, evt)
      t.diagnostic(`${name}: ${msg}`)
      assert.match(msg, /^invalid: /, `want "invalid: <reason>", got ${JSON.stringify(msg)}`)
      assert.deepEqual(await query(relay, [{ ids: [evt.id] }]), [], 'refused event must not be stored')
    })
  }
})

test('a deleted event stays deleted', async (t) => {
  const relay = await connect(t)
  const author = key()
  const agent = key()
  const def = await definition(relay, author)
  const les = lesson(agent, def.id)
  await publish(relay, les)
  await readBack(relay, les)

  const deletion = sign(agent, { kind: 5, tags: [['e', les.id], ['k', '4129']], content: 'retracted' })
  await publish(relay, deletion)
  assert.deepEqual(await query(relay, [{ ids: [les.id] }]), [], 'deleted lesson is still served by id')
  assert.deepEqual(await query(relay, [{ kinds: [4129], '#e': [def.id] }]), [], 'deleted lesson is still served by #e')

  const msg = await refusal(relay, les)
  t.diagnostic(`re-published deleted lesson: ${msg}`)
  assert.match(msg, /^blocked: /, `re-publishing a deleted event: want "blocked: ...", got ${JSON.stringify(msg)}`)
  assert.deepEqual(await query(relay, [{ ids: [les.id] }]), [], 'deleted lesson came back after re-publishing')
})

test('COUNT returns the exact number of lessons of a definition', async (t) => {
  const relay = await connect(t)
  const author = key()
  const def = await definition(relay, author)
  const other = await definition(relay, author)
  const agents = [key(), key(), key()]

  const want = 7
  for (let i = 0; i < want; i++) {
    await publish(relay, lesson(agents[i % agents.length], def.id, i))
  }
  // Noise the filter must exclude: a lesson of another definition and a
  // non-lesson event that references the same definition.
  await publish(relay, lesson(agents[0], other.id, 99))
  await publish(relay, sign(agents[0], { kind: 0, tags: [['bot'], ['e', def.id], ['p', author.pk]], content: '{"name":"counter"}' }))

  const got = await within(relay.count([{ kinds: [4129], '#e': [def.id] }]), DEADLINE, 'COUNT')
  assert.equal(got, want)
  const stored = await query(relay, [{ kinds: [4129], '#e': [def.id] }])
  assert.equal(stored.length, want, 'REQ and COUNT disagree')
})

test('NIP-50 search finds a definition by a word only in its description', async (t) => {
  const relay = await connect(t)
  const k = key()
  const needle = word()
  const def = await definition(relay, k, { title: 'Needle finder', description: `Finds the ${needle} in any haystack.` })
  await definition(relay, k, { title: 'Decoy', description: 'Finds nothing at all.' })
  assert.ok(!def.content.includes(needle) && !def.tags.some((tag) => tag[0] !== 'description' && tag.includes(needle)))

  const got = await query(relay, [{ kinds: [4199], search: needle }])
  assert.deepEqual(got.map((evt) => evt.id), [def.id], `search ${JSON.stringify(needle)} over kinds [4199]`)
  assert.deepEqual(plain(got[0]), plain(def))
})

test('NIP-11 relay information document', async () => {
  const url = RELAY_URL.replace(/^ws(s?):\/\//, 'http$1://')
  const res = await within(fetch(url, { headers: { Accept: 'application/nostr+json' } }), DEADLINE, `GET ${url}`)
  assert.equal(res.status, 200)
  const doc = await res.json()
  for (const nip of [1, 9, 11, 40, 45, 50]) {
    assert.ok(doc.supported_nips?.includes(nip), `supported_nips ${JSON.stringify(doc.supported_nips)} lacks ${nip}`)
  }
  assert.equal(typeof doc.limitation?.max_message_length, 'number', `limitation: ${JSON.stringify(doc.limitation)}`)
})
