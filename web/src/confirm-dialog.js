import { useEffect, useRef, useState } from 'preact/hooks';

import { html } from './html.js';

/**
 * A modal confirmation on the browser's own <dialog>: it traps focus, Escape
 * cancels, and focus returns to the control that opened it. `onConfirm` may throw an ApiError; its
 * message is shown in the dialog (with the field it names) and the dialog stays open.
 */
export function ConfirmDialog({ title, confirmLabel, danger = false, onConfirm, onClose, children }) {
  const dialog = useRef(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const opener = document.activeElement;
    dialog.current.showModal();
    return () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      dialog.current?.close();
      onClose(true);
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };

  return html`<dialog ref=${dialog} class="confirm" aria-labelledby="confirm-title" onCancel=${(event) => {
    event.preventDefault();
    if (!busy) onClose(false);
  }}>
    <h2 id="confirm-title">${title}</h2>
    <div class="confirm-body">${children}</div>
    ${error === null
      ? null
      : html`<p class="error" role="alert">${error.field ? html`<strong>${error.field}</strong>: ` : null}${error.message}</p>`}
    <div class="actions">
      <button type="button" class="secondary" onClick=${() => onClose(false)} disabled=${busy}>Cancel</button>
      <button type="button" class=${danger ? 'danger' : ''} onClick=${confirm} disabled=${busy}>${busy ? 'Working…' : confirmLabel}</button>
    </div>
  </dialog>`;
}
