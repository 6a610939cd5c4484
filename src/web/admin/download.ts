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

