/**
 * The inspection thread's module (inspect-thread.ts): reads a spooled upload from its file,
 * once, in pieces of a megabyte, and answers its size, SHA-256 and MD5 (the exact hashes banks of
 * known harmful media hold: HMA's lists give a video's MD5), its first bytes (the type and an
 * image's header are read from them) and whether all of it after them is plain text (UTF-8
 * throughout, no control character but tab, line feed, form feed and carriage return).
 */
import { closeSync, openSync, readSync } from "node:fs";
import { applyNicenessMessage } from "../plumbing/thread-priority.ts";

export interface InspectTask {
  id: number;
  path: string;
  headBytes: number;
}

export type InspectAnswer = { id: number; size: number; sha256: string; md5: string; head: Uint8Array; tailIsText: boolean } | { id: number; error: string; code?: string };

declare const self: Worker;

const PIECE = 1024 * 1024;
// eslint-disable-next-line no-control-regex
const NOT_TEXT = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/;

function inspect(task: InspectTask): InspectAnswer {
  const fd = openSync(task.path, "r");
  try {
    const hasher = new Bun.CryptoHasher("sha256");
    const md5 = new Bun.CryptoHasher("md5");
    const head = new Uint8Array(task.headBytes);
    const piece = new Uint8Array(PIECE);
    const decoder = new TextDecoder("utf-8", { fatal: true });
    let size = 0;
    let headLength = 0;
    let tailIsText = true;
    for (;;) {
      const n = readSync(fd, piece, 0, PIECE, null);
      if (n === 0) break;
      const got = piece.subarray(0, n);
      hasher.update(got);
      md5.update(got);
      const intoHead = Math.min(n, task.headBytes - headLength);
      if (intoHead > 0) {
        head.set(got.subarray(0, intoHead), headLength);
        headLength += intoHead;
      }
      if (tailIsText && intoHead < n) {
        try {
          if (NOT_TEXT.test(decoder.decode(got.subarray(intoHead), { stream: true }))) tailIsText = false;
        } catch {
          tailIsText = false;
        }
      }
      size += n;
    }
    if (tailIsText && size > task.headBytes) {
      try {
        decoder.decode();
      } catch {
        tailIsText = false;
      }
    }
    return { id: task.id, size, sha256: hasher.digest("hex"), md5: md5.digest("hex"), head: head.slice(0, headLength), tailIsText };
  } finally {
    closeSync(fd);
  }
}

self.onmessage = (event: MessageEvent<InspectTask>) => {
  if (applyNicenessMessage(event.data)) return;
  let answer: InspectAnswer;
  try {
    answer = inspect(event.data);
  } catch (err) {
    answer = { id: event.data.id, error: err instanceof Error ? err.message : String(err), code: (err as { code?: string }).code };
  }
  self.postMessage(answer);
};
