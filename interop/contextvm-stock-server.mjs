// A stock ContextVM server (@contextvm/sdk's NostrServerTransport around
// @modelcontextprotocol/sdk's McpServer) on RELAY_URL with the key
// SERVER_SK, until killed: extract_text_content declares an output schema
// ({text}). contextvm_test.go starts it before it installs a package that
// binds a tool to it (service_uri nostr:<npub>); prints "ready" once
// subscribed.
import { z } from 'zod'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { NostrServerTransport, PrivateKeySigner, EncryptionMode } from '@contextvm/sdk'

export function scraper () {
  const server = new McpServer({ name: 'stock-scraper', version: '1.0.0' })
  server.registerTool('extract_text_content', {
    description: 'text of a page',
    inputSchema: { url: z.string() },
    outputSchema: { text: z.string() }
  }, async ({ url }) => ({ content: [{ type: 'text', text: `page ${url}` }], structuredContent: { text: `page ${url}` } }))
  return server
}

export async function startScraper (sk, relayUrl, encryptionMode) {
  const server = scraper()
  await server.connect(new NostrServerTransport({ signer: new PrivateKeySigner(sk), relayHandler: [relayUrl], encryptionMode, logLevel: 'warn' }))
  return server
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await startScraper(process.env.SERVER_SK, process.env.RELAY_URL, EncryptionMode.OPTIONAL)
  console.log('ready')
}
