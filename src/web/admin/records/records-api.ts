import {
  ADMIN_RECORD_VERSIONS_PATH,
  ADMIN_RECORDS_BUNDLE_PATH,
  recordsBundleFileName,
  recordVersionListSchema,
  recordVersionSchema,
  type RecordsBundleQuery,
  type RecordVersion,
  type RecordVersionList,
} from '../../../shared/admin/records-api.js';
import { readJson, request } from '../common/admin-api.js';

/** Every kept version, without its text. */
export async function fetchRecordVersions(signal?: AbortSignal): Promise<RecordVersionList> {
  return readJson(await request(ADMIN_RECORD_VERSIONS_PATH, { signal }), recordVersionListSchema);
}

/** One version with its text parts. */
export async function fetchRecordVersion(id: string): Promise<RecordVersion> {
  return readJson(await request(`${ADMIN_RECORD_VERSIONS_PATH}/${encodeURIComponent(id)}`), recordVersionSchema);
}

/** Downloads the examiner's bundle of a period: the zip is fetched with the session's token, then saved under its name. */
export async function downloadRecordsBundle(query: RecordsBundleQuery): Promise<void> {
  const params = new URLSearchParams({ from: query.from, to: query.to });
  const response = await request(`${ADMIN_RECORDS_BUNDLE_PATH}?${params.toString()}`);
  const url = URL.createObjectURL(await response.blob());
  try {
    const link = document.createElement('a');
    link.href = url;
    link.download = recordsBundleFileName(query);
    document.body.append(link);
    link.click();
    link.remove();
  } finally {
    // After the click has handed the file over.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
}
