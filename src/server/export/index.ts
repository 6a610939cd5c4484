/**
 * What other features take from the export (the declared interface): the API (src/server/api)
 * prepares exports for a key with the same one-time tickets as the admin page, follows them, and
 * answers a key's ticket with the file, audited as that key.
 */
export { createExportDownload, exportDownloadStatus, type ExportFollower, type ExportOwner } from './tickets.js';
export { checkExportBody, checkTimeZone, downloadByTicket, FILE_ROUTE_OPTIONS, type ExportActor } from './routes.js';
