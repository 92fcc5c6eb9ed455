/**
 * A pass that runs at start and then every `everyMs` after the previous one ended (never two at
 * once), until stopped. A pass that throws is logged by its own caller's `run`; the next one
 * still comes. The transparency submission and service-level schedulers are each one of these.
 */
export interface PeriodicPass {
  stop(): void;
}

export function startPeriodicPass(run: () => Promise<void>, everyMs: number): PeriodicPass {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  async function tick(): Promise<void> {
    timer = null;
    if (stopped) return;
    await run();
    if (!stopped) timer = setTimeout(() => void tick(), everyMs);
  }
  void tick();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
