import { useEffect, useRef, useState } from 'react';
import { ADMIN_MAX_IDS, type ExportRequest } from '../../../shared/admin/waitlist-api.js';
import { authErrorMessage } from '../../session/auth-client.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { isAbort } from '../common/admin-api.js';
import { waitlistToasts } from './copy.js';
import { downloadExport } from './export-download.js';
import type { Selection } from './selection.js';

export type ExportKind = 'all' | 'selected';

export interface WaitlistExport {
  /** The export on its way, if any (its button shows a spinner, both are disabled). */
  exporting: ExportKind | null;
  /** Include attribution columns. */
  withAttribution: boolean;
  setWithAttribution: (on: boolean) => void;
  runExport: (kind: ExportKind) => Promise<void>;
}

/** Export All and Export Selected: a CSV file the browser downloads itself (see downloadExport). */
export function useExport(selection: Selection, onAccessError: (error: unknown) => boolean, list?: string | undefined): WaitlistExport {
  const [exporting, setExporting] = useState<ExportKind | null>(null);
  const [withAttribution, setWithAttribution] = useState(false);
  // An export still asking how its download goes stops asking when the page goes away.
  const exportAbort = useRef<AbortController | null>(null);
  useEffect(() => () => exportAbort.current?.abort(), []);

  async function runExport(kind: ExportKind) {
    // Export All of an offering list (issue 31) is its whole list; named ids say their list for the file's columns.
    let body: ExportRequest = list ? { filter: { list } } : {};
    if (kind === 'selected') {
      if (selection.size === 0) {
        notifyError(waitlistToasts.noSelectionExport);
        return;
      }
      const request = selection.toRequest();
      if ('ids' in request && request.ids.length > ADMIN_MAX_IDS) {
        notifyError(waitlistToasts.exportTooMany(ADMIN_MAX_IDS));
        return;
      }
      body = 'ids' in request && list ? { ...request, list } : request;
    }
    setExporting(kind);
    try {
      const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      const controller = new AbortController();
      exportAbort.current = controller;
      const file = await downloadExport({ ...body, ...(timeZone ? { timeZone } : {}), ...(withAttribution ? { attribution: true } : {}) }, controller.signal);
      notifySuccess(waitlistToasts.exported(file.rows, kind));
    } catch (error) {
      // Left the page while the browser downloads: nobody is waiting for the toast.
      if (isAbort(error)) return;
      if (!onAccessError(error)) notifyError(waitlistToasts.exportFailed(authErrorMessage(error)));
    } finally {
      setExporting(null);
    }
  }

  return { exporting, withAttribution, setWithAttribution, runExport };
}
