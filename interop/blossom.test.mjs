// Blossom interop: blossom-client-sdk (hzrd149's client, which agentnode
// does not control) uploads, lists, downloads and deletes blobs on a
// running agentnode, signing its kind-24242 authorizations with
// nostr-tools. A key the node does not allow is refused.
//
// Environment:
//   BLOSSOM_URL   http://host:port of a running `agentnode serve`
//   BLOSSOM_SK    hex secret key the node allows to upload ("blossom.allow")
//
// interop/blossom_test.go (TestBlossomClientSDK) sets both.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Actions, createUploadAuth, createDeleteAuth } from 'blossom-client-sdk'
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure'


const SERVER = process.env.BLOSSOM_URL
const SK = process.env.BLOSSOM_SK
if (!SERVER || !SK) {
  throw new Error('BLOSSOM_URL and BLOSSOM_SK must be set; run `go test -tags libsecp256k1 ./interop -run TestBlossomClientSDK`')
}
const sk = Uint8Array.from(Buffer.from(SK, 'hex'))
const pubkey = getPublicKey(sk)
const signer = async (draft) => finalizeEvent(draft, sk)
const TIMEOUT = 15_000

test('upload, list, download and delete a blob', async () => {
  const bytes = new TextEncoder().encode(`hello from blossom-client-sdk ${Date.now()}`)
  const blob = new Blob([bytes], { type: 'text/plain' })
  const desc = await Actions.uploadBlob(SERVER, blob, {
    timeout: TIMEOUT,
    onAuth: (server, sha256) => createUploadAuth(signer, sha256, { servers: server }),
  })
  assert.equal(desc.size, bytes.length)
  assert.match(desc.sha256, /^[0-9a-f]{64}$/)
  assert.ok(desc.url.includes(desc.sha256), `descriptor url ${desc.url} names the hash`)

  const list = await Actions.listBlobs(SERVER, pubkey, { timeout: TIMEOUT })
  assert.ok(list.some((d) => d.sha256 === desc.sha256), 'the list has the uploaded blob')

  assert.equal(await Actions.hasBlob(SERVER, desc.sha256, { timeout: TIMEOUT }), true)
  const res = await Actions.downloadBlob(SERVER, desc.sha256, { timeout: TIMEOUT })
  assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes)

  const auth = await createDeleteAuth(signer, desc.sha256, { servers: SERVER })
  assert.equal(await Actions.deleteBlob(SERVER, desc.sha256, { auth, timeout: TIMEOUT }), true)
  assert.equal(await Actions.hasBlob(SERVER, desc.sha256, { timeout: TIMEOUT }), false)
  const after = await Actions.listBlobs(SERVER, pubkey, { timeout: TIMEOUT })
  assert.ok(!after.some((d) => d.sha256 === desc.sha256), 'the list no longer has the deleted blob')
})

test('a key the node does not allow cannot upload', async () => {
  const stranger = generateSecretKey()
  const blob = new Blob([new TextEncoder().encode('a stranger wants in')], { type: 'text/plain' })
  await assert.rejects(
    Actions.uploadBlob(SERVER, blob, {
      timeout: TIMEOUT,
      onAuth: (server, sha256) => createUploadAuth(async (d) => finalizeEvent(d, stranger), sha256, { servers: server }),
    }),
    (err) => {
      assert.equal(err.status, 403, `status ${err.status}: ${err.message}`)
      return true
    },
  )
})
