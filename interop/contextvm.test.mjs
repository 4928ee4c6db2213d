// An agent of a real `agentnode serve` as a ContextVM server (MCP over
// Nostr), reached by the stock ContextVM SDK (@contextvm/sdk, npm, pinned)
// through the node's own relay with its default settings: the stock client
// never authenticates (NIP-42). Run by contextvm_test.go, once per process
// and encryption mode: RELAY_URL, AGENT_PUBKEY (an agent with the note
// package installed), MODE (disabled = plaintext 25910, required = gift
// wraps), NOTE_ID (a fresh uuid), STATE_OPEN (1: the owner opened the
// note state to writers; else a write is PERMISSION_DENIED, the caller
// being the requester).
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { NostrClientTransport, PrivateKeySigner, EncryptionMode } from '@contextvm/sdk'
import { generateSecretKey, verifyEvent } from 'nostr-tools/pure'
import WebSocket from 'ws'
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay'

useWebSocketImplementation(WebSocket)

const { RELAY_URL, AGENT_PUBKEY, MODE, NOTE_ID, STATE_OPEN } = process.env
// The SDK leaves two timers running after close (about 2.5 minutes): end
// the process once the tests are done instead of waiting for them.
after(() => { setTimeout(() => process.exit(), 200).unref() })

const mode = { disabled: EncryptionMode.DISABLED, required: EncryptionMode.REQUIRED }[MODE]

test(`ContextVM client (${MODE}): initialize, tools/list, resources/list and read, tools/call, ping`, async () => {
  assert.ok(mode, `MODE ${MODE}`)
  const transport = new NostrClientTransport({
    signer: new PrivateKeySigner(Buffer.from(generateSecretKey()).toString('hex')),
    relayHandler: [RELAY_URL],
    serverPubkey: AGENT_PUBKEY,
    encryptionMode: mode,
    logLevel: 'warn'
  })
  const client = new Client({ name: 'contextvm-interop', version: '0.0.0' })
  await client.connect(transport)
  try {
    assert.equal(client.getServerVersion()?.name, 'agentnode')
    const tools = (await client.listTools()).tools
    const create = tools.find(t => t.name === 'note__state.create')
    assert.ok(create, `tools: ${tools.map(t => t.name)}`)
    assert.equal(create._meta?.capability_id, 'did:nuwa:cap:note/state.create')

    const resources = (await client.listResources()).resources
    const manifest = resources.find(r => r.uri === 'did:nuwa:cap:note/state.create@1.0.0')
    assert.ok(manifest, `resources: ${resources.map(r => r.uri)}`)
    const read = await client.readResource({ uri: manifest.uri })
    assert.equal(JSON.parse(read.contents[0].text).capability_id, 'did:nuwa:cap:note/state.create')

    const note = { id: NOTE_ID, title: `over ContextVM (${MODE})`, body: 'written by @contextvm/sdk', tags: ['interop'], createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' }
    const res = await client.callTool({ name: 'note__state.create', arguments: { schema_uri: 'did:nuwa:state:note#v1', object: note } })
    if (STATE_OPEN !== '1') {
      // the caller is the requester: a stranger writes only what the owner opened
      assert.equal(res.structuredContent?.error?.code, 'PERMISSION_DENIED', JSON.stringify(res))
      return
    }
    assert.notEqual(res.isError, true, JSON.stringify(res))
    assert.equal(res.structuredContent?.ok, true, JSON.stringify(res))

    const bad = await client.callTool({ name: 'note__state.create', arguments: { schema_uri: 'did:nuwa:state:note#v1', object: { title: 7 } } })
    assert.equal(bad.isError, true, 'an invalid note is an error result')
    assert.equal(bad.structuredContent?.error?.code, 'INVALID_INPUT', JSON.stringify(bad))

    const missing = await client.callTool({ name: 'no_such_tool', arguments: {} })
    assert.equal(missing.isError, true, 'an unknown tool is an error result')

    await client.ping()
    if (MODE === 'required') assert.ok(transport.serverSupportsEncryption(), 'the server advertised support_encryption')
  } finally {
    await client.close()
  }
})

// CEP-6: the agent's announcements are on the relay (11316 with its
// initialize result and capability tags, 11317 with its tools), with its
// NIP-65 relay list; the SDK's own discovery (no relays given, only a
// discovery relay) finds where the agent listens from that list and talks
// to it.
test(`ContextVM discovery (${MODE}): announcements and relay list`, async () => {
  const relay = await Relay.connect(RELAY_URL)
  const events = []
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no EOSE')), 10000)
      relay.subscribe([{ kinds: [11316, 11317, 10002], authors: [AGENT_PUBKEY] }], {
        onevent: e => events.push(e),
        oneose: () => { clearTimeout(timer); resolve() }
      })
    })
  } finally {
    relay.close()
  }
  const byKind = k => events.find(e => e.kind === k)
  for (const k of [11316, 11317, 10002]) {
    assert.ok(byKind(k), `no kind ${k} from the agent`)
    assert.ok(verifyEvent(byKind(k)), `kind ${k} does not verify`)
  }
  const server = byKind(11316)
  assert.equal(JSON.parse(server.content).serverInfo?.name, 'agentnode')
  assert.ok(server.tags.some(t => t.length === 1 && t[0] === 'support_encryption'), JSON.stringify(server.tags))
  assert.ok(JSON.parse(byKind(11317).content).tools.some(t => t.name === 'note__state.create'))
  assert.ok(byKind(10002).tags.some(t => t[0] === 'r'), 'the relay list names no relay')

  const transport = new NostrClientTransport({
    signer: new PrivateKeySigner(Buffer.from(generateSecretKey()).toString('hex')),
    serverPubkey: AGENT_PUBKEY,
    discoveryRelayUrls: [RELAY_URL],
    encryptionMode: mode,
    logLevel: 'warn'
  })
  const client = new Client({ name: 'contextvm-discovery', version: '0.0.0' })
  await client.connect(transport)
  try {
    assert.ok((await client.listTools()).tools.some(t => t.name === 'note__state.create'))
  } finally {
    await client.close()
  }
})
