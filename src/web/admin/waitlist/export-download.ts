import {
  ADMIN_EXPORT_DOWNLOAD_PATH,
  ADMIN_EXPORTS_PATH,
  EXPORT_TICKET_FIELD,
  exportDownloadSchema,
  exportDownloadStatusSchema,
  type ExportDownloadStatus,
  type ExportRequest,
} from '../../../shared/admin/waitlist-api.js';
import { AdminApiError, postJson, readJson, request, sleep } from '../common/admin-api.js';

/** The first wait before asking how a download is going, and the longest between two asks. */
const DOWNLOAD_POLL_FIRST_MS = 100;
const DOWNLOAD_POLL_MAX_MS = 1000;
/** Failed asks in a row (network, 5xx) before the page gives up on a download. */
const DOWNLOAD_POLL_RETRIES = 5;

/**
 * Exports as a file the browser downloads itself: the export is prepared with the access token
 * (ADMIN_EXPORTS_PATH), its one-time ticket posted in a plain form, and the browser streams the
 * answer to disk as it arrives, without this page reading a byte of it (a million rows are about
 * 90 MB). The server then says how the download went; resolves with the rows written once the file
 * is complete, and rejects with an AdminApiError if the download failed or never started.
 */
export async function downloadExport(body: ExportRequest, signal?: AbortSignal): Promise<{ rows: number }> {
  const prepared = await readJson(await postJson(ADMIN_EXPORTS_PATH, body, signal), exportDownloadSchema);
  postDownloadForm(ADMIN_EXPORT_DOWNLOAD_PATH, { [EXPORT_TICKET_FIELD]: prepared.ticket });
  let failures = 0;
  for (let wait = DOWNLOAD_POLL_FIRST_MS; ; wait = Math.min(DOWNLOAD_POLL_MAX_MS, wait * 1.5)) {
    await sleep(wait, signal);
    signal?.throwIfAborted();
    let status: ExportDownloadStatus;
    try {
      status = await readJson(await request(`${ADMIN_EXPORTS_PATH}/${prepared.id}`, { signal }), exportDownloadStatusSchema);
      failures = 0;
    } catch (error) {
      // A lost answer or a server hiccup while the browser downloads: ask again, a few times. The
      // server's own verdicts (signed out, unknown download) end it at once.
      const transient = error instanceof AdminApiError && (error.status === 0 || error.status >= 500);
      if (!transient || ++failures > DOWNLOAD_POLL_RETRIES) throw error;
      continue;
    }
    if (status.status === 'done') return { rows: status.rows ?? 0 };
    if (status.status === 'failed') throw new AdminApiError(0, status.message ?? 'The download failed. Try again.');
    if (status.status === 'expired') throw new AdminApiError(0, 'The download did not start. Check your connection and try again.');
  }
}

/** The hidden frame download forms are posted into (created once). */
const FRAME_NAME = 'admin-download';

/**
 * Posts `fields` as a form to `action` into a hidden frame: the browser saves an attachment answer
 * itself, streaming it to disk, and this page stays where it is whatever the answer is (an error
 * answer only loads, unseen, into the frame). Nothing of the answer can be read here: the caller
 * learns how it went from the server.
 */
function postDownloadForm(action: string, fields: Record<string, string>): void {
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
