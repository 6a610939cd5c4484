/** The hidden frame download forms are posted into (created once). */
const FRAME_NAME = 'admin-download';

/**
 * Posts `fields` as a form to `action` into a hidden frame: the browser saves an attachment answer
 * itself, streaming it to disk, and this page stays where it is whatever the answer is (an error
 * answer only loads, unseen, into the frame). Nothing of the answer can be read here: the caller
 * learns how it went from the server.
 */
export function postDownloadForm(action: string, fields: Record<string, string>): void {
  let frame = document.querySelector<HTMLIFrameElement>(`iframe[name="${FRAME_NAME}"]`);
  if (!frame) {
    frame = document.createElement('iframe');
    frame.name = FRAME_NAME;
    frame.title = 'Downloads';
    frame.hidden = true;
    frame.tabIndex = -1;
    frame.setAttribute('aria-hidden', 'true');
    document.body.appendChild(frame);
  }
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = action;
  form.target = FRAME_NAME;
  form.hidden = true;
  for (const [name, value] of Object.entries(fields)) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = value;
    form.appendChild(input);
  }
  document.body.appendChild(form);
  try {
    form.submit();
  } finally {
    form.remove();
  }
}
