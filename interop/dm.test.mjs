// NIP-17 DM interop: a person using nostr-tools (a client agentnode does not
// control) sends a direct message to an agent of a running agentnode and
// decrypts the agent's reply.
//
// Environment:
//   RELAY_URL         ws://host:port of a running `agentnode serve`
//   AGENT_PUBKEY      hex pubkey of an agent installed on that node; unset:
//                     the test is skipped (nothing to talk to)
//   DM_ANSWER_PREFIX  what the node's (scripted) model starts every answer
//                     with; unset: any non-empty reply passes
//   DM_REQUIRED       "true": fail instead of skip when the node publishes no
//                     kind 10050 DM relay list for the agent (it does not run
//                     the DM service, agentd/dm)
//
// interop/dm_test.go (TestNostrToolsDM) sets them all, with a scripted
// OpenAI-compatible model behind the node; by hand:
//   RELAY_URL=ws://127.0.0.1:7447 AGENT_PUBKEY=<hex> node --test dm.test.mjs

import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay'
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure'
import * as nip17 from 'nostr-tools/nip17'
import * as nip59 from 'nostr-tools/nip59'

useWebSocketImplementation(WebSocket)

const RELAY_URL = process.env.RELAY_URL
const AGENT = process.env.AGENT_PUBKEY
const PREFIX = process.env.DM_ANSWER_PREFIX ?? ''
const REQUIRED = process.env.DM_REQUIRED === 'true'
if (!RELAY_URL) {
  throw new Error('RELAY_URL must be set; run `go test -tags libsecp256k1 ./interop -run TestNostrToolsDM` to have it set for you')
}

// DEADLINE bounds every wait on the relay; the reply waits REPLY_DEADLINE
// (the node asks its model first). Nothing sleeps.
const DEADLINE = 15_000
const REPLY_DEADLINE = 20_000

/** connect opens a Relay that answers NIP-42 challenges as sk and is closed when t ends. */
async function connect(t, sk) {
  const relay = await Relay.connect(RELAY_URL, { timeout: DEADLINE })
  relay.onnotice = (msg) => t.diagnostic(`NOTICE from relay: ${msg}`)
  relay.onauth = async (tmpl) => finalizeEvent(tmpl, sk)
  t.after(() => relay.close())
  return relay
}

/** stored runs a REQ until EOSE and returns the events (no AUTH). */
function stored(relay, filter) {
  return new Promise((resolve, reject) => {
    const events = []
    let settled = false
    const finish = (err) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      sub.close()
      if (err) reject(err)
      else resolve(events)
    }
    const timer = setTimeout(() => finish(new Error(`no EOSE within ${DEADLINE} ms for ${JSON.stringify(filter)}`)), DEADLINE)
    const sub = relay.subscribe([filter], {
      eoseTimeout: DEADLINE * 2,
      onevent: (evt) => events.push(evt),
      oneose: () => finish(),
      onclose: (reason) => finish(new Error(`REQ ${JSON.stringify(filter)} closed before EOSE: ${reason}`)),
    })
  })
}

/**
 * awaitReply subscribes (authenticating as the reader when the relay asks:
 * kind 1059 is served only to its p-tagged reader) to the gift wraps to the
 * reader, unwraps each with nip17 and resolves with the first rumor by
 * `from` that replies (e tag) to rumorID.
 */
function awaitReply(t, relay, sk, from, rumorID) {
  const me = getPublicKey(sk)
  return new Promise((resolve, reject) => {
    let settled = false
    let sub
    const done = (fn, v) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      sub?.close()
      fn(v)
    }
    const timer = setTimeout(() => done(reject, new Error(`no reply from ${from} to ${rumorID} within ${REPLY_DEADLINE} ms`)), REPLY_DEADLINE)
    const open = (authed) => {
      sub = relay.subscribe([{ kinds: [1059], '#p': [me] }], {
        eoseTimeout: REPLY_DEADLINE + DEADLINE,
        onevent: (wrap) => {
          let rumor
          try {
            rumor = nip17.unwrapEvent(wrap, sk)
          } catch (err) {
            done(reject, new Error(`a gift wrap to me does not unwrap with nostr-tools: ${err.message}\n${JSON.stringify(wrap)}`))
            return
          }
          if (rumor.pubkey === from && rumor.tags.some((tag) => tag[0] === 'e' && tag[1] === rumorID)) {
            done(resolve, rumor)
          }
        },
        onclose: async (reason) => {
          clearTimeout(sub.eoseTimeoutHandle) // nostr-tools 2.25.2 leaves it running on CLOSED, holding node open
          if (settled) return
          if (authed || !reason.startsWith('auth-required:')) {
            done(reject, new Error(`subscription to my gift wraps closed: ${reason}`))
            return
          }
          t.diagnostic(`relay: ${reason}; authenticating (NIP-42)`)
          try {
            await relay.auth(relay.onauth)
          } catch (err) {
            done(reject, new Error(`NIP-42 AUTH failed: ${err.message}`))
            return
          }
          open(true)
        },
      })
    }
    open(false)
  })
}

test('a NIP-17 DM sent with nostr-tools gets a reply that nostr-tools decrypts', async (t) => {
  if (!AGENT) {
    t.skip('AGENT_PUBKEY is not set: no agent to talk to (TestNostrToolsDM installs one)')
    return
  }
  const sk = generateSecretKey()
  const relay = await connect(t, sk)

  const lists = await stored(relay, { kinds: [10050], authors: [AGENT] })
  if (lists.length === 0) {
    const msg = 'the node publishes no kind 10050 DM relay list for the agent: `agentnode serve` does not run the DM service (agentd/dm) yet, see docs/DM.md'
    if (REQUIRED) assert.fail(msg)
    t.skip(msg)
    return
  }
  const relays = lists[0].tags.filter((tag) => tag[0] === 'relay').map((tag) => tag[1])
  t.diagnostic(`agent's DM relays (kind 10050): ${JSON.stringify(relays)}`)
  assert.ok(relays.length > 0, `kind 10050 names no relay: ${JSON.stringify(lists[0])}`)

  // As a NIP-17 client does: one kind 14 rumor, sealed and gift-wrapped to
  // the agent and, as our own copy, to ourselves. (nip17.wrapManyEvents
  // would make a different rumor per recipient, so its copy's id is not the
  // id the agent replies to; nip59 wraps one rumor twice.)
  const text = `Hello agent, what is ${Math.floor(Math.random() * 1000)} + 1?`
  const sent = nip59.createRumor({ kind: 14, tags: [['p', AGENT, RELAY_URL]], content: text }, sk)
  const toAgent = nip59.createWrap(nip59.createSeal(sent, sk, AGENT), AGENT)
  const toSelf = nip59.createWrap(nip59.createSeal(sent, sk, getPublicKey(sk)), getPublicKey(sk))
  assert.equal(nip17.unwrapEvent(toSelf, sk).id, sent.id, 'our own copy must unwrap to the rumor sent')
  const reply = awaitReply(t, relay, sk, AGENT, sent.id)
  await relay.publish(toAgent)
  await relay.publish(toSelf)

  const got = await reply
  t.diagnostic(`reply: ${JSON.stringify(got.content)}`)
  assert.equal(got.kind, 14, 'reply must be a kind 14 chat message')
  assert.equal(got.pubkey, AGENT, 'reply must be by the agent')
  assert.ok(got.tags.some((tag) => tag[0] === 'p' && tag[1] === getPublicKey(sk)), `reply must p-tag me: ${JSON.stringify(got.tags)}`)
  assert.ok(got.content.length > 0, 'reply is empty')
  if (PREFIX) {
    assert.ok(got.content.startsWith(PREFIX), `reply ${JSON.stringify(got.content)} is not the model's answer (want it to start with ${JSON.stringify(PREFIX)})`)
    assert.ok(got.content.includes(text), `the model's answer ${JSON.stringify(got.content)} does not quote my message`)
  }
})
