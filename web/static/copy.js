// copy.js: the pages' copy buttons (button.copy) put their data-copy text
// on the clipboard. The pages work without it: every code is also shown
// as text and as a nostr: link.
document.documentElement.classList.add('js');
document.addEventListener('click', async (e) => {
  const b = e.target.closest('button.copy');
  if (!b) return;
  try {
    await navigator.clipboard.writeText(b.dataset.copy);
    b.textContent = 'copied';
  } catch {
    b.textContent = 'select the text to copy';
  }
});
