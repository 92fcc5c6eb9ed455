/** Test videos made by ffmpeg itself (test/media-video*.test.ts). */

/** Runs ffmpeg with `args` to write `out` (its type from its extension); throws with ffmpeg's error output. */
export async function makeVideo(ffmpeg: string, args: string[], out: string): Promise<string> {
  const p = Bun.spawn([ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y", ...args, out], { stdout: "ignore", stderr: "pipe" });
  const err = await new Response(p.stderr).text();
  if ((await p.exited) !== 0) throw new Error(`ffmpeg could not make ${out}: ${err}`);
  return out;
}
