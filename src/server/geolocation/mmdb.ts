import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import maxmind, { type Response } from 'maxmind';
import type { IndexWorkerMessage } from './index-worker.js';
import { startModuleWorker } from '../runtime/module-worker.js';
import type { GeoLocation, GeoLogger } from './location.js';
import { locationFromRecord, placeMappingFingerprint } from './mmdb-record.js';
import { ensureRangeIndex } from './range-index.js';
import { writeRangeIndex, type BuildResult } from './range-index-build.js';
import { MmdbFormatError, type IndexIdentity } from './range-index-format.js';

export { locationFromRecord, placeMappingFingerprint } from './mmdb-record.js';

/** Offline lookups in one or more MMDB files, opened once. */
export interface MmdbSource {
  lookup(ip: string): GeoLocation | null;
  /** The files that opened, for logs and tests. */
  readonly files: string[];
  /** Releases the index files (lookups fail afterwards). */
  close(): void;
}

/** Where lookup indexes are kept unless told otherwise: derived data beside the package it comes from. */
export const DEFAULT_INDEX_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../node_modules/.cache/geolocation');

export interface MmdbOptions {
  /**
   * Directory of the lookup indexes derived from the MMDB files (range-index.ts), built there on
   * first use; null reads each MMDB into memory with maxmind instead. Default DEFAULT_INDEX_DIR.
   */
  indexDir?: string | null;
}

interface OpenSource {
  file: string;
  ipVersion: number;
  lookup(ip: string): GeoLocation | null;
  close(): void;
}

/** The worker thread could not run at all (not: the build failed). */
class WorkerUnavailable extends Error {}

/** The index build's worker thread (runtime/module-worker.ts: compiled, or the sources through tsx). */
function startIndexWorker(workerData: { identity: IndexIdentity; file: string }): Worker {
  return startModuleWorker(import.meta.url, 'index-worker', { workerData });
}

function buildInWorker(identity: IndexIdentity, file: string, onStart: () => void): Promise<BuildResult> {
  return new Promise((resolve, reject) => {
    let worker: Worker;
    try {
      worker = startIndexWorker({ identity, file });
    } catch (err) {
      reject(new WorkerUnavailable(String(err)));
      return;
    }
    let started = false;
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      finish();
    };
    worker.on('message', (message: IndexWorkerMessage) => {
      if (message.type === 'started') {
        started = true;
        onStart();
      } else if (message.type === 'built') settle(() => resolve(message.result));
      else {
        const err: Error & { syscall?: string; code?: string } =
          message.name === 'MmdbFormatError' ? new MmdbFormatError(message.message) : new Error(message.message);
        if (message.syscall) err.syscall = message.syscall;
        if (message.code) err.code = message.code;
        settle(() => reject(err));
      }
    });
    worker.on('error', (err) => settle(() => reject(started ? err : new WorkerUnavailable(err.message))));
    worker.on('exit', (code) => settle(() => reject(new (started ? Error : WorkerUnavailable)(`index worker exited with code ${code}`))));
  });
}

/**
 * Builds an index in a worker thread, so the few hundred MB the build takes are returned when the
 * thread ends instead of staying in the server's heap; in this thread when no worker can run.
 */
async function buildIndex(identity: IndexIdentity, file: string, logger: GeoLogger): Promise<BuildResult> {
  const onStart = () => logger.info({ file: identity.source, index: file }, 'geolocation: building the lookup index of this MMDB file (once per file version)');
  try {
    return await buildInWorker(identity, file, onStart);
  } catch (err) {
    if (!(err instanceof WorkerUnavailable)) throw err;
    logger.debug({ err }, 'geolocation: no worker thread for the index build; building in this thread');
  }
  return writeRangeIndex(identity, file, locationFromRecord, onStart);
}

/** One MMDB file through its on-disk index; null when the index cannot be written or read. */
async function openIndexed(file: string, indexDir: string, logger: GeoLogger): Promise<OpenSource | null> {
  try {
    const { index, built } = await ensureRangeIndex(file, indexDir, placeMappingFingerprint(), (identity, indexFile) => buildIndex(identity, indexFile, logger));
    if (built) logger.info({ file, index: index.file, ...built }, 'geolocation: lookup index built');
    return { file, ipVersion: index.ipVersion, lookup: (ip) => index.lookup(ip), close: () => index.close() };
  } catch (err) {
    if (err instanceof MmdbFormatError) throw err;
    logger.warn({ file, indexDir, err }, 'geolocation: the lookup index could not be built or read; keeping this MMDB file in memory instead');
    return null;
  }
}

/** One MMDB file read into memory by maxmind (about its own size in RSS). */
async function openInMemory(file: string): Promise<OpenSource> {
  const reader = await maxmind.open<Response>(file, { watchForUpdates: false });
  return { file, ipVersion: reader.metadata.ipVersion, lookup: (ip) => locationFromRecord(reader.get(ip)), close: () => {} };
}

/** Closes the index files of a source nobody holds any more (tests open many). */
const closeWhenUnreachable = new FinalizationRegistry<OpenSource[]>((sources) => sources.forEach((s) => s.close()));

/**
 * Opens every readable file; a missing or broken file is logged and skipped, never fatal.
 * Returns null when none opened. Each file is read through its lookup index (range-index.ts),
 * built on first use: the answers are maxmind's, without holding the file in memory.
 */
export async function openMmdbSource(paths: readonly string[], logger: GeoLogger, options: MmdbOptions = {}): Promise<MmdbSource | null> {
  const indexDir = options.indexDir === undefined ? DEFAULT_INDEX_DIR : options.indexDir;
  const readers: OpenSource[] = [];
  for (const file of paths) {
    if (!fs.existsSync(file)) {
      logger.warn({ file }, 'geolocation: MMDB file not found; continuing without it');
      continue;
    }
    try {
      readers.push((indexDir !== null ? await openIndexed(file, indexDir, logger) : null) ?? (await openInMemory(file)));
    } catch (err) {
      logger.warn({ file, err }, 'geolocation: MMDB file could not be opened; continuing without it');
    }
  }
  if (readers.length === 0) return null;

  // An IPv6 address must never be asked of an IPv4-only file: the reader would walk the wrong tree
  // and return a made-up place. IPv4 addresses try IPv4 files first, then IPv6 files (GeoLite2
  // files are IPv6 trees holding IPv4 too).
  const v4Order = [...readers.filter((r) => r.ipVersion === 4), ...readers.filter((r) => r.ipVersion === 6)];
  const v6Order = readers.filter((r) => r.ipVersion === 6);

  const source: MmdbSource = {
    files: readers.map((r) => r.file),
    lookup(ip) {
      const version = net.isIP(ip);
      const candidates = version === 4 ? v4Order : version === 6 ? v6Order : [];
      for (const reader of candidates) {
        const location = reader.lookup(ip);
        if (location) return location;
      }
      return null;
    },
    close() {
      closeWhenUnreachable.unregister(source);
      readers.forEach((r) => r.close());
    },
  };
  closeWhenUnreachable.register(source, readers, source);
  return source;
}
