// strfry-compatible NIP-77 exchange: hoytech's reference negentropy
// (negentropy/Negentropy.cjs, protocol version 0x61 — the implementation
// strfry speaks) reconciles with a running agentnode relay the way
// `strfry sync` does (src/apps/mesh/cmd_sync.cpp): NEG-OPEN "N" with the
// filter and the initiator's first message, NEG-MSG until the reference
// says it is done, NEG-CLOSE; then the needs are fetched by REQ "R" with
// 50 ids at a time and the haves uploaded by EVENT, up to 100 in flight.
// Both sides hold events the other lacks, and the ids reported (have and
// need) must be exactly those.
//
// Environment:
//   RELAY_URL  ws://host:port of a running `agentnode serve`
//
// interop/negentropy_test.go (TestReferenceNegentropyInterop) sets it and
// runs this file.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import WebSocket from 'ws'
import { finalizeEvent, generateSecretKey, getPublicKey, verifyEvent } from 'nostr-tools/pure'

const require = createRequire(import.meta.url)
const { Negentropy, NegentropyStorageVector } = require('./negentropy/Negentropy.cjs')

const RELAY_URL = process.env.RELAY_URL
if (!RELAY_URL) {
  throw new Error('RELAY_URL must be set; run `go test -tags libsecp256k1 -run TestReferenceNegentropyInterop ./interop`')
}

// DEADLINE bounds every wait on the relay: nothing sleeps.
const DEADLINE = 60_000

// ---- a raw NIP-01 connection, as strfry's client is --------------------

/** connect opens a websocket to the relay; frames are queued until read. */
async function connect(t) {
  const ws = new WebSocket(RELAY_URL)
  const queue = []
  let waiter = null
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString())
    if (waiter) { const w = waiter; waiter = null; w(msg) } else queue.push(msg)
  })
  await new Promise((resolve, reject) => {
    ws.once('open', resolve)
    ws.once('error', reject)
  })
  t.after(() => ws.close())
  const conn = {
    send: (msg) => ws.send(JSON.stringify(msg)),
    /** next is the next frame from the relay, or an error at DEADLINE. */
    next: () => {
      if (queue.length) return Promise.resolve(queue.shift())
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => { waiter = null; reject(new Error(`no frame from the relay within ${DEADLINE} ms`)) }, DEADLINE)
        waiter = (msg) => { clearTimeout(timer); resolve(msg) }
      })
    },
  }
  return conn
}

/** nextOf reads frames until one whose label is in labels; NOTICEs are logged. */
async function nextOf(t, conn, ...labels) {
  for (;;) {
    const msg = await conn.next()
    if (labels.includes(msg[0])) return msg
    if (msg[0] === 'NOTICE') { t.diagnostic(`NOTICE: ${msg[1]}`); continue }
    throw new Error(`unexpected frame ${JSON.stringify(msg).slice(0, 300)} while waiting for ${labels}`)
  }
}

/** publish sends events with up to 100 EVENTs in flight (strfry's highWaterUp) and returns the OK frames by id. */
async function publish(t, conn, events) {
  const oks = new Map()
  let sent = 0
  while (oks.size < events.length) {
    while (sent < events.length && sent - oks.size < 100) conn.send(['EVENT', events[sent++]])
    const ok = await nextOf(t, conn, 'OK')
    oks.set(ok[1], ok)
  }
  return oks
}

// ---- the events ----------------------------------------------------------

const key = () => { const sk = generateSecretKey(); return { sk, pk: getPublicKey(sk) } }

/** notes makes n kind-1 notes by k: created_at spread over the last days, with runs sharing one second (ties are ordered by id). */
function notes(k, n, tag) {
  const base = Math.floor(Date.now() / 1000) - 3 * 86400
  const out = []
  for (let i = 0; i < n; i++) {
    const created_at = base + Math.floor(i / 3) * 97 + (i % 7)
    out.push(finalizeEvent({ kind: 1, tags: [['t', 'neg-interop']], content: `${tag} ${i}`, created_at }, k.sk))
  }
  return out
}

/** storageOf seals a reference storage vector over events. */
function storageOf(events) {
  const s = new NegentropyStorageVector()
  for (const e of events) s.insert(e.created_at, e.id)
  s.seal()
  return s
}

// ---- strfry's sync -------------------------------------------------------

/**
 * reconcile runs the negentropy exchange of `strfry sync`: the reference
 * initiator over events, NEG-OPEN / NEG-MSG until done, NEG-CLOSE. It
 * returns the distinct have and need ids, the rounds and the bytes sent.
 */
async function reconcile(t, conn, filter, events, frameSizeLimit) {
  const ne = new Negentropy(storageOf(events), frameSizeLimit)
  let msg = await ne.initiate()
  const have = new Set(), need = new Set()
  let rounds = 0, bytes = 0
  conn.send(['NEG-OPEN', 'N', filter, msg])
  bytes += msg.length / 2
  for (;;) {
    const reply = await nextOf(t, conn, 'NEG-MSG', 'NEG-ERR')
    assert.equal(reply[0], 'NEG-MSG', `relay answered ${JSON.stringify(reply)}`)
    assert.equal(reply[1], 'N')
    rounds++
    const [next, haves, needs] = await ne.reconcile(reply[2])
    haves.forEach((id) => have.add(id))
    needs.forEach((id) => need.add(id))
    if (next === null) break
    assert.ok(next.length / 2 <= frameSizeLimit, `reference frame of ${next.length / 2} bytes over ${frameSizeLimit}`)
    conn.send(['NEG-MSG', 'N', next])
    bytes += next.length / 2
  }
  conn.send(['NEG-CLOSE', 'N'])
  return { have, need, rounds, bytes }
}

/** download fetches ids by REQ "R", 50 at a time, reusing the id as strfry does; every event must verify. */
async function download(t, conn, ids) {
  const got = new Map()
  const list = [...ids]
  for (let i = 0; i < list.length; i += 50) {
    conn.send(['REQ', 'R', { ids: list.slice(i, i + 50) }])
    for (;;) {
      const msg = await nextOf(t, conn, 'EVENT', 'EOSE', 'CLOSED')
      assert.notEqual(msg[0], 'CLOSED', `REQ by ids closed: ${msg[2]}`)
      if (msg[0] === 'EOSE') break
      assert.ok(verifyEvent(msg[2]), `event ${msg[2].id} does not verify`)
      got.set(msg[2].id, msg[2])
    }
  }
  conn.send(['CLOSE', 'R'])
  return got
}

const sorted = (ids) => [...ids].sort()

/** wire is the NIP-01 fields of an event (nostr-tools adds a symbol). */
const wire = ({ id, pubkey, created_at, kind, tags, content, sig }) => ({ id, pubkey, created_at, kind, tags, content, sig })

// ---- the tests -----------------------------------------------------------

test('the reference negentropy (strfry sync) reconciles both ways, reporting exactly the differing ids', async (t) => {
  const k = key()
  const shared = notes(k, 400, 'shared')
  const onlyRelay = notes(k, 300, 'relay only').map((e, i) => i % 2 ? e : finalizeEvent({ ...e, created_at: e.created_at + 13 }, k.sk))
  const onlyClient = notes(k, 250, 'client only').map((e) => finalizeEvent({ ...e, created_at: e.created_at + 29 }, k.sk))
  const stranger = notes(key(), 20, 'another author') // outside the filter: never reported

  const conn = await connect(t)
  const oks = await publish(t, conn, [...shared, ...onlyRelay, ...stranger])
  for (const [id, ok] of oks) assert.equal(ok[2], true, `EVENT ${id} refused: ${ok[3]}`)

  const filter = { kinds: [1], authors: [k.pk] }
  const client = [...shared, ...onlyClient]

  // 4,096-byte frames (the reference's smallest) force several rounds;
  // 60,000 is strfry's default.
  for (const frameSizeLimit of [4096, 60_000]) {
    const r = await reconcile(t, conn, filter, client, frameSizeLimit)
    t.diagnostic(`frame limit ${frameSizeLimit}: ${r.rounds} rounds, ${r.bytes} bytes sent, have ${r.have.size}, need ${r.need.size}`)
    assert.deepEqual(sorted(r.have), sorted(onlyClient.map((e) => e.id)), 'have: exactly the client-only events')
    assert.deepEqual(sorted(r.need), sorted(onlyRelay.map((e) => e.id)), 'need: exactly the relay-only events')
    if (frameSizeLimit === 4096) assert.ok(r.rounds > 1, `one round only with 4 KiB frames (${r.rounds})`)
  }

  // --dir both: down by REQ ids, up by EVENT.
  const got = await download(t, conn, onlyRelay.map((e) => e.id))
  assert.deepEqual(sorted(got.keys()), sorted(onlyRelay.map((e) => e.id)), 'every needed event downloaded')
  for (const e of onlyRelay) {
    assert.deepEqual(wire(got.get(e.id)), wire(e), 'the relay serves the event as published')
  }
  const up = await publish(t, conn, onlyClient)
  for (const [id, ok] of up) assert.equal(ok[2], true, `upload ${id} refused: ${ok[3]}`)

  // Both sides now hold the same set: nothing to exchange.
  const again = await reconcile(t, conn, filter, [...client, ...got.values()], 60_000)
  assert.equal(again.have.size, 0, `have after the sync: ${[...again.have]}`)
  assert.equal(again.need.size, 0, `need after the sync: ${[...again.need]}`)
  assert.equal(again.rounds, 1)
})

test('an empty client set needs every matching event, and a filter matching nothing needs none', async (t) => {
  const k = key()
  const evts = notes(k, 60, 'empty client')
  const conn = await connect(t)
  await publish(t, conn, evts)
  const all = await reconcile(t, conn, { kinds: [1], authors: [k.pk] }, [], 4096)
  assert.deepEqual(sorted(all.need), sorted(evts.map((e) => e.id)))
  assert.equal(all.have.size, 0)

  const none = await reconcile(t, conn, { kinds: [1], authors: [key().pk] }, evts, 4096)
  assert.deepEqual(sorted(none.have), sorted(evts.map((e) => e.id)))
  assert.equal(none.need.size, 0)
})

test('a later protocol version is answered with the relay\'s own (0x61), as the reference server does', async (t) => {
  const conn = await connect(t)
  conn.send(['NEG-OPEN', 'V', { kinds: [1], limit: 1 }, '62'])
  const reply = await nextOf(t, conn, 'NEG-MSG', 'NEG-ERR')
  assert.deepEqual(reply, ['NEG-MSG', 'V', '61'])
  conn.send(['NEG-CLOSE', 'V'])
})

test('garbage in a NEG-MSG ends the session with NEG-ERR, and the connection stays usable', async (t) => {
  const k = key()
  const conn = await connect(t)
  await publish(t, conn, notes(k, 5, 'garbage'))
  const ne = new Negentropy(storageOf([]), 4096)
  conn.send(['NEG-OPEN', 'G', { kinds: [1], authors: [k.pk] }, await ne.initiate()])
  await nextOf(t, conn, 'NEG-MSG')
  conn.send(['NEG-MSG', 'G', '61ff'])
  const err = await nextOf(t, conn, 'NEG-ERR', 'NEG-MSG')
  assert.equal(err[0], 'NEG-ERR')
  assert.equal(err[1], 'G')
  assert.match(err[2], /^(invalid|closed|error): /)
  const r = await reconcile(t, conn, { kinds: [1], authors: [k.pk] }, [], 4096)
  assert.equal(r.need.size, 5)
})
