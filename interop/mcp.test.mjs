// The node's MCP endpoints through the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk, npm, pinned): an independent client for the
// Go server side (the node serves MCP with the Go SDK and its own JSON-RPC
// server for /acp). Run by mcp_test.go against a real `agentnode serve`:
// MCP_URL (registry tools), ACP_URL + API_TOKEN (Agent Context Protocol),
// CAP_NAME (a package published on the node), AGENT_PUBKEY (an installed agent).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

const { MCP_URL, ACP_URL, API_TOKEN, CAP_NAME, AGENT_PUBKEY } = process.env

async function connect (url, headers = {}) {
  const client = new Client({ name: 'agentnode-interop', version: '0.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return client
}

test('registry over MCP: list, search_capabilities, resolve_capability', async () => {
  const client = await connect(MCP_URL)
  try {
    const names = (await client.listTools()).tools.map(t => t.name)
    assert.ok(names.includes('resolve_capability') && names.includes('search_capabilities'), `tools: ${names}`)

    const found = await client.callTool({ name: 'search_capabilities', arguments: { query_string: 'notes' } })
    assert.notEqual(found.isError, true, JSON.stringify(found))
    assert.match(JSON.stringify(found), new RegExp(`did:nuwa:cap:${CAP_NAME}@`))

    const res = await client.callTool({ name: 'resolve_capability', arguments: { cap_uri: `did:nuwa:cap:${CAP_NAME}` } })
    assert.notEqual(res.isError, true, JSON.stringify(res))
    assert.match(JSON.stringify(res), /"naddr"/)

    const missing = await client.callTool({ name: 'resolve_capability', arguments: { cap_uri: 'did:nuwa:cap:no-such-cap' } })
    assert.equal(missing.isError, true, 'an unknown capability is an error result')
  } finally {
    await client.close()
  }
})

test('Agent Context Protocol over MCP: initialize, tools/list, agentSearch', async () => {
  await assert.rejects(connect(ACP_URL), 'no token: refused')
  const client = await connect(ACP_URL, { Authorization: `Bearer ${API_TOKEN}` })
  try {
    const names = (await client.listTools()).tools.map(t => t.name).sort()
    assert.deepEqual(names, ['agentEvaluate', 'agentSearch', 'taskAssign'])
    // the agent's heartbeat goes out when it is installed; poll until it is ranked
    const deadline = Date.now() + 20000
    let text = ''
    while (Date.now() < deadline) {
      const r = await client.callTool({ name: 'agentSearch', arguments: {} })
      assert.notEqual(r.isError, true, JSON.stringify(r))
      text = JSON.stringify(r)
      if (text.includes(AGENT_PUBKEY)) break
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    assert.ok(text.includes(AGENT_PUBKEY), `agentSearch never found ${AGENT_PUBKEY}: ${text}`)
  } finally {
    await client.close()
  }
})
