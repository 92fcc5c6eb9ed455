/**
 * Uploads' share of a busy server (docs/attachments.md, "Sharing the CPU"). Every byte of an
 * upload costs CPU on the serving thread (the socket read, the spool written: about 0.8 ms a
 * megabyte) and on the machine (SHA-256 on the inspection thread, the sender, the page cache's
 * writeback: about 2.5 ms a megabyte in all). Back to back at the disk's speed, uploads took a
 * quarter of report intake's rate. So while the process is serving other requests (at least
 * BUSY_REQUESTS_PER_S of them a second), uploads' bytes are let in at no more than
 * FLAGSTAFF_ATTACHMENT_BUSY_BYTES_PER_S, all uploads together: each upload reserves its bytes
 * (its Content-Length, or its size once received when it has none) in order of arrival, and
 * waits until the uploads before it had their time. While it waits its body is not read: the
 * client is held back by TCP (the server buffers nothing), and the waits are bounded (at most
 * MAX_WAIT_MS each), so that no upload waits forever behind others. With the server otherwise
 * idle, uploads go at full speed.
 */
import { requestsLastSecond } from "../plumbing/serving-load.ts";

/** Other requests a second from which the server counts as busy (a dashboard's polling stays below). */
export const BUSY_REQUESTS_PER_S = 20;
/** The longest an upload waits for its turn: past it, it goes (the share is exceeded rather than an upload stalled). */
export const MAX_WAIT_MS = 30_000;

interface Pacing {
  /** Bytes a second while busy; 0: uploads are never paced. */
  bytesPerSecond: number;
  /** When the bytes reserved so far have had their time (ms, Date.now's clock). */
  freeAt: number;
  /** Uploads that reached the pacer in the current and the last second (counted out of the requests). */
  uploads: { second: number; thisSecond: number; lastSecond: number };
}

const pacing: Pacing = { bytesPerSecond: 0, freeAt: 0, uploads: { second: 0, thisSecond: 0, lastSecond: 0 } };

/** FLAGSTAFF_ATTACHMENT_BUSY_BYTES_PER_S (serve.ts, at start). */
export function setUploadPacing(bytesPerSecond: number): void {
  pacing.bytesPerSecond = Math.max(0, bytesPerSecond);
  pacing.freeAt = 0;
}

function uploadsLastSecond(now: number): number {
  const u = pacing.uploads;
  const s = Math.floor(now / 1000);
  if (s !== u.second) {
    u.lastSecond = s === u.second + 1 ? u.thisSecond : 0;
    u.thisSecond = 0;
    u.second = s;
  }
  return Math.max(u.thisSecond, u.lastSecond);
}

/** Whether requests other than uploads are being served. */
function busy(now: number): boolean {
  return requestsLastSecond(now) - uploadsLastSecond(now) >= BUSY_REQUESTS_PER_S;
}

/**
 * An upload's turn: how long it must wait before its body is read (0: at once), its `bytes`
 * reserved (null: not known before it is received; reserve them after with `reserveUploadBytes`).
 */
export function uploadTurn(bytes: number | null, now: number = Date.now()): number {
  uploadsLastSecond(now);
  pacing.uploads.thisSecond++;
  if (pacing.bytesPerSecond === 0 || !busy(now)) return 0;
  // Debts older than the longest wait are forgiven: a burst of uploads does not hold later ones longer than that.
  const start = Math.min(Math.max(now, pacing.freeAt), now + MAX_WAIT_MS);
  if (bytes !== null) pacing.freeAt = start + (bytes * 1000) / pacing.bytesPerSecond;
  return Math.min(MAX_WAIT_MS, start - now);
}

/** The bytes of an upload received without a declared length: the uploads after it wait for them. */
export function reserveUploadBytes(bytes: number, now: number = Date.now()): void {
  if (pacing.bytesPerSecond === 0 || !busy(now)) return;
  pacing.freeAt = Math.min(Math.max(now, pacing.freeAt), now + MAX_WAIT_MS) + (bytes * 1000) / pacing.bytesPerSecond;
}
