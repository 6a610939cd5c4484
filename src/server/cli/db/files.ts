import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CliError } from '../program.js';

/** A sibling of `dest` to write first and move into place when complete. */
export function tempPathFor(dest: string): string {
  return path.join(path.dirname(dest), `.${path.basename(dest)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
}

export function removeQuietly(...files: string[]): void {
  for (const file of files) fs.rmSync(file, { force: true });
}

function alreadyExists(dest: string): CliError {
  return new CliError(`${dest} already exists. Choose another name, or pass --force to replace it.`);
}

export function assertWritableDestination(dest: string, force: boolean): void {
  if (!fs.existsSync(path.dirname(dest))) throw new CliError(`The directory ${path.dirname(dest)} does not exist.`);
  if (fs.existsSync(dest)) {
    if (!force) throw alreadyExists(dest);
    if (fs.statSync(dest).isDirectory()) throw new CliError(`${dest} is a directory.`);
  }
}

/** Moves a finished temp file to `dest`, never replacing an existing file unless `force`. */
export function moveIntoPlace(tmp: string, dest: string, force: boolean): void {
  if (force) {
    fs.renameSync(tmp, dest);
    return;
  }
  try {
    // link() fails when dest exists, so a file created meanwhile is never replaced.
    fs.linkSync(tmp, dest);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw alreadyExists(dest);
    // A file system without hard links.
    if (fs.existsSync(dest)) throw alreadyExists(dest);
    fs.renameSync(tmp, dest);
    return;
  }
  fs.unlinkSync(tmp);
}

export function formatSize(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const human = unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
  return unit === 0 ? human : `${human} (${bytes.toLocaleString('en-US')} bytes)`;
}

/** Writes to a stream honouring back-pressure; rejects once the stream failed (e.g. EPIPE). */
export function streamWriter(stream: NodeJS.WritableStream): (chunk: string) => Promise<void> {
  let failure: Error | null = null;
  stream.on('error', (err: Error) => {
    failure ??= err;
  });
  return async (chunk) => {
    if (failure) throw failure;
    if (!stream.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          stream.off('drain', done);
          stream.off('error', done);
          stream.off('close', done);
          resolve();
        };
        stream.on('drain', done);
        stream.on('error', done);
        stream.on('close', done);
      });
    }
    if (failure) throw failure;
  };
}

export function readUtf8File(file: string): string {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new CliError(`No such file: ${file}`);
    if (code === 'EISDIR') throw new CliError(`${file} is a directory.`);
    throw new CliError(`Cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    // fatal: a file saved in a legacy code page is refused rather than imported as mojibake.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CliError(`${file} is not UTF-8 text. Save it as "CSV UTF-8" and try again.`);
  }
}
