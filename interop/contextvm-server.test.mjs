// A stock ContextVM server (@contextvm/sdk's NostrServerTransport around
// @modelcontextprotocol/sdk's McpServer): a stock client talks to it
// through agentnode's relay and through a plain khatru relay (nothing on
// agentnode's side is relay-specific), in plaintext and with encryption
// required; and an agent of agentnode calls it through an mcp_service
// binding whose service_uri is nostr:<npub>. Run by contextvm_test.go:
// RELAY_URL (agentnode), PLAIN_RELAY_URL (bench serve khatru+lmdb),
// the stock server of contextvm-stock-server.mjs is running (the binding names its npub),
// AGENT_MCP_URL + API_TOKEN (the agent's MCP endpoint).
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { NostrClientTransport, PrivateKeySigner, EncryptionMode } from '@contextvm/sdk'
import { startScraper } from './contextvm-stock-server.mjs'
import { generateSecretKey, getPublicKey } from 'nostr-tools/pure'

// The SDK leaves timers running after close: end the process once done.
after(() => { setTimeout(() => process.exit(), 200).unref() })

const { RELAY_URL, PLAIN_RELAY_URL, AGENT_MCP_URL, API_TOKEN } = process.env
const hex = () => Buffer.from(generateSecretKey()).toString('hex')

for (const [relayName, relayUrl] of [['agentnode', RELAY_URL], ['plain khatru', PLAIN_RELAY_URL]]) {
  for (const [modeName, mode] of [['plaintext', EncryptionMode.DISABLED], ['encryption required', EncryptionMode.REQUIRED]]) {
    test(`stock server and stock client through ${relayName} (${modeName})`, async () => {
      const sk = hex()
      const server = await startScraper(sk, relayUrl, mode)
      const client = new Client({ name: 'stock-client', version: '0.0.0' })
      try {
        await client.connect(new NostrClientTransport({ signer: new PrivateKeySigner(hex()), relayHandler: [relayUrl], serverPubkey: getPublicKey(Buffer.from(sk, 'hex')), encryptionMode: mode, logLevel: 'warn' }))
        const res = await client.callTool({ name: 'extract_text_content', arguments: { url: 'https://example.org/a' } })
        assert.equal(res.structuredContent?.text, 'page https://example.org/a', JSON.stringify(res))
      } finally {
        await client.close()
        await server.close()
      }
    })
  }
}

// The stock server with SERVER_SK runs in its own process
// (contextvm-stock-server.mjs), started before the package was installed.
test('an agent calls a stock ContextVM server through a nostr: binding', async () => {
  const client = new Client({ name: 'agentnode-interop', version: '0.0.0' })
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(AGENT_MCP_URL), { requestInit: { headers: { Authorization: `Bearer ${API_TOKEN}` } } }))
    const tools = (await client.listTools()).tools
    const fetch = tools.find(t => t.name === 'note__fetch_web_content')
    assert.ok(fetch, `tools: ${tools.map(t => t.name)}`)
    // the stock server's outputSchema, inside the InvokeResult's
    assert.match(JSON.stringify(fetch.outputSchema), /"required":\["text"\]/)
    const res = await client.callTool({ name: 'note__fetch_web_content', arguments: { url: 'https://example.org/over-nostr' } })
    assert.notEqual(res.isError, true, JSON.stringify(res))
    assert.equal(res.structuredContent?.output?.text, 'page https://example.org/over-nostr', JSON.stringify(res))
  } finally {
    await client.close()
  }
})
