// An agent of a real `agentnode serve` as a ContextVM server (MCP over
// Nostr), reached by the stock ContextVM SDK (@contextvm/sdk, npm, pinned)
// through the node's own relay with its default settings: the stock client
// never authenticates (NIP-42). Run by contextvm_test.go, once per process
// and encryption mode: RELAY_URL, AGENT_PUBKEY (an agent with the note
// package installed), MODE (disabled = plaintext 25910, required = gift
// wraps), NOTE_ID (a fresh uuid).
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { NostrClientTransport, PrivateKeySigner, EncryptionMode } from '@contextvm/sdk'
import { generateSecretKey } from 'nostr-tools/pure'

const { RELAY_URL, AGENT_PUBKEY, MODE, NOTE_ID } = process.env
// The SDK leaves two timers running after close (about 2.5 minutes): end
// the process once the tests are done instead of waiting for them.
after(() => { setTimeout(() => process.exit(), 200).unref() })

const mode = { disabled: EncryptionMode.DISABLED, required: EncryptionMode.REQUIRED }[MODE]

test(`ContextVM client (${MODE}): initialize, tools/list, tools/call, ping`, async () => {
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

    const note = { id: NOTE_ID, title: `over ContextVM (${MODE})`, body: 'written by @contextvm/sdk', tags: ['interop'], createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' }
    const res = await client.callTool({ name: 'note__state.create', arguments: { schema_uri: 'did:nuwa:state:note#v1', object: note } })
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
