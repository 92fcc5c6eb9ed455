import "./zod-config.ts";
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { errorCode } from "./api.ts";
import { App } from "./app.tsx";
import { ToastProvider } from "./ui.tsx";

/** A call refused as UNAUTHORIZED means the session ended: ask "who am I" again, which shows sign-in. */
const onError = (err: unknown, key?: readonly unknown[]) => {
  if (errorCode(err) === "UNAUTHORIZED" && key?.[0] !== "me") void queryClient.invalidateQueries({ queryKey: ["me"] });
};

const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({ onError: (err, query) => onError(err, query.queryKey) }),
  // A refused sign-in is the login form's own business.
  mutationCache: new MutationCache({ onError: (err, _v, _c, mutation) => mutation.options.mutationKey?.[0] !== "login" && onError(err) }),
  defaultOptions: {
    queries: {
      // Freshness comes from the change counter (app.tsx), not from timers.
      staleTime: 30_000,
      retry: (n, err) => !["UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "BAD_REQUEST"].includes(errorCode(err) ?? "") && n < 2,
    },
  },
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <ToastProvider>
        <App />
      </ToastProvider>
    </QueryClientProvider>
  </StrictMode>,
);
