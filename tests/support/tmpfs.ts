import fs from 'node:fs';

/**
 * Puts the tests' temporary files (databases, data directories, exports) in memory when the machine
 * has a tmpfs at /dev/shm and TMPDIR does not say otherwise: the suites make many small SQLite
 * commits, each an fsync that a tmpfs answers at once. What the tests check does not depend on where
 * the files are. Called by the test runners' configurations; the processes they start inherit it.
 */
export function useTmpfsForTestFiles(): void {
  if (process.env.TMPDIR) return;
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    process.env.TMPDIR = '/dev/shm';
  } catch {
    // No tmpfs there: the system's temporary directory.
  }
}
