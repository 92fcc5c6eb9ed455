/**
 * The dashboard's pages are script chunks of their own (Bun.build's code splitting,
 * src/api/dashboard-page.ts), loaded when a page is first shown: the first screen loads the shell
 * and its own page only. A chunk that cannot be loaded (the network, or a server upgraded since
 * the page was opened: the chunks' names carry a content hash) is said so, with a reload, in place
 * of the page; any other error of a page is not this boundary's business.
 */
import { Component, lazy, Suspense, type ComponentType, type LazyExoticComponent, type ReactNode } from "react";
import { Loading } from "./ui.tsx";

/** A page module that could not be fetched. */
class PageLoadError extends Error {}

/** A page component taken from its module, fetched when the page is first rendered. */
// `ComponentType<any>`: React's own bound for a component of any props (React.lazy's).
export function lazyPage<M, C extends ComponentType<any>>(load: () => Promise<M>, pick: (m: M) => C): LazyExoticComponent<C> {
  return lazy(async () => {
    let module: M;
    try {
      module = await load();
    } catch (err) {
      throw new PageLoadError(err instanceof Error ? err.message : String(err));
    }
    return { default: pick(module) };
  });
}

interface FrameState {
  error: unknown;
}

/**
 * Shows "Loading…" while a page's chunk arrives, and a note with a reload when it cannot be
 * fetched; any other error goes on up, as if this frame were not there.
 */
export class PageFrame extends Component<{ children: ReactNode }, FrameState> {
  override state: FrameState = { error: null };

  static getDerivedStateFromError(error: unknown): FrameState {
    return { error };
  }

  override render() {
    const { error } = this.state;
    if (error && !(error instanceof PageLoadError)) throw error;
    if (error) {
      return (
        <section role="alert">
          <h1>This page could not be loaded</h1>
          <p>The server could not be reached, or Flagstaff was upgraded since this tab was opened.</p>
          <button type="button" onClick={() => location.reload()}>
            Reload
          </button>
        </section>
      );
    }
    return <Suspense fallback={<Loading />}>{this.props.children}</Suspense>;
  }
}
