// console.js: an owner signs in to /console with their own Nostr key.
// The browser's NIP-07 extension (window.nostr) signs a NIP-98 event
// (kind 27235) for POST /console/nostr-login; the node checks it and
// answers with a session cookie. Nothing else runs here.
const button = document.getElementById('nostr-login');
const status = document.getElementById('nostr-status');
if (button) button.addEventListener('click', signIn);

// nonce makes two sign-ins of the same second two events (the node
// refuses an event it has seen).
function nonce() {
  return [...crypto.getRandomValues(new Uint8Array(8))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

async function signIn() {
  if (!window.nostr) {
    status.textContent = 'No Nostr extension (NIP-07) in this browser: install one (nos2x, Alby, …) or sign in with the API token.';
    return;
  }
  status.textContent = 'Asking your extension to sign…';
  try {
    const url = location.origin + '/console/nostr-login';
    const evt = await window.nostr.signEvent({ kind: 27235, created_at: Math.floor(Date.now() / 1000),
      tags: [['u', url], ['method', 'POST'], ['nonce', nonce()]], content: '' });
    const resp = await fetch(url, { method: 'POST', credentials: 'same-origin',
      headers: { Authorization: 'Nostr ' + btoa(JSON.stringify(evt)) } });
    const body = await resp.json();
    if (!resp.ok) {
      status.textContent = 'Refused: ' + body.error;
      return;
    }
    location.assign('/console');
  } catch (e) {
    status.textContent = 'Sign-in failed: ' + (e && e.message ? e.message : e);
  }
}
