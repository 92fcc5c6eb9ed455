/**
 * The scheduling priority of background threads (upload inspection, previews and media hashing):
 * set once by the server from FLAGSTAFF_MEDIA_THREAD_NICE, sent by request-thread.ts to each such
 * thread it starts, and applied there by the thread to itself. On Linux, `setpriority` with no
 * pid (what `os.setPriority(n)` calls) lowers the calling thread only: the serving thread keeps
 * its priority, so the kernel gives a busy machine's CPU to requests first and to an upload's
 * hashing with what is left, while an idle machine hashes at full speed.
 */
import { setPriority } from "node:os";

/** The message that carries the niceness to a thread, before any request. */
export interface NicenessMessage {
  niceness: number;
}

let backgroundNiceness = 0;

/** The niceness (0 to 19) of the background threads started from now on. */
export function setBackgroundThreadNiceness(niceness: number): void {
  backgroundNiceness = Math.max(0, Math.min(19, Math.trunc(niceness)));
}

export function currentBackgroundThreadNiceness(): number {
  return backgroundNiceness;
}

/**
 * In a thread's module, first thing in its onmessage: applies a NicenessMessage to the calling
 * thread and answers true (the message is done with), false for any other message. A platform
 * that refuses it leaves the thread as it was (nothing else depends on it).
 */
export function applyNicenessMessage(message: unknown): boolean {
  if (typeof message !== "object" || message === null || !("niceness" in message) || "id" in message) return false;
  const { niceness } = message as NicenessMessage;
  try {
    setPriority(niceness);
  } catch {
    // Not permitted or not supported: the thread runs at the process's priority.
  }
  return true;
}
