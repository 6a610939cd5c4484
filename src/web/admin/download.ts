/** Saves a blob as a file: object URL, a temporary `<a download>` click, then the URL is revoked. */
export function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.rel = 'noopener';
  link.style.display = 'none';
  document.body.appendChild(link);
  try {
    link.click();
  } finally {
    link.remove();
    // Revoke on the next task: some browsers start reading the URL only after click() returns.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
}

/**
 * Data rows in an RFC 4180 CSV text (header excluded): line breaks inside quoted cells do not
 * count, and a final line break or a UTF-8 BOM is ignored. Used for the export toast's count.
 */
export function countCsvRows(text: string): number {
  let records = 0;
  let inQuotes = false;
  let recordHasContent = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22 /* " */) {
      inQuotes = !inQuotes;
      recordHasContent = true;
    } else if (!inQuotes && (ch === 0x0a /* \n */ || ch === 0x0d /* \r */)) {
      if (ch === 0x0d && text.charCodeAt(i + 1) === 0x0a) i += 1;
      if (recordHasContent) records += 1;
      recordHasContent = false;
    } else if (ch !== 0xfeff) {
      recordHasContent = true;
    }
  }
  if (recordHasContent) records += 1;
  return Math.max(0, records - 1);
}
