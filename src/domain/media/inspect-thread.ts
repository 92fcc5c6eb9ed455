/**
 * A spooled upload inspected off the serving thread (./inspect-worker.ts): its SHA-256 and MD5 (a few
 * hundred milliseconds of CPU for 50 MB on the benchmark machine), its first bytes and whether
 * the rest is text, read from the file the upload was written to, so that no request waits
 * behind an upload's hashing. One thread per process, started on the first upload; uploads take
 * it in turn. It holds the process open only while an upload waits on it.
 */
import { requestThread } from "../plumbing/request-thread.ts";
import type { InspectAnswer, InspectTask } from "./inspect-worker.ts";

export interface Inspection {
  size: number;
  sha256: string;
  md5: string;
  head: Uint8Array;
  tailIsText: boolean;
}

/** A file the thread could not read (its code, ENOENT or EIO, kept for the caller). */
export class InspectionFailed extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

const ask = requestThread<InspectTask, InspectAnswer, Inspection>({
  source: new URL("./inspect-worker.ts", import.meta.url).href,
  bundled: "src/domain/media/inspect-worker.js",
  name: "inspection thread",
  background: true,
  settle: (answer) =>
    "error" in answer
      ? { error: new InspectionFailed(`inspecting an upload: ${answer.error}`, answer.code) }
      : { result: { size: answer.size, sha256: answer.sha256, md5: answer.md5, head: answer.head, tailIsText: answer.tailIsText } },
});

/** Size, SHA-256, MD5, the first `headBytes` bytes and whether the rest is text, of the file at `path`. */
export function inspectFileOffThread(path: string, headBytes: number): Promise<Inspection> {
  return ask((id) => ({ id, path, headBytes }));
}
