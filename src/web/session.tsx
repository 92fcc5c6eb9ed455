/**
 * The signed-in session: who is signed in, their role, the organization, its projects and the
 * project being worked on. The shell (app.tsx) provides it; pages and components read it with
 * `useSession()`. Its own module, so that pages need not import the shell that imports them.
 */
import { createContext, useContext, type ReactNode } from "react";
import type { Me, Outputs, Role } from "./api.ts";

export type SignedIn = Me & { user: NonNullable<Me["user"]> };
type Project = Outputs["projects"]["list"]["projects"][number];

export interface Session {
  me: SignedIn;
  role: Role;
  can: (needed: Role) => boolean;
  orgSlug: string;
  projects: Project[];
  /** The project pages like settings and identities work on (remembered in localStorage). */
  projectId: string | null;
  setProjectId: (id: string) => void;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ session, children }: { session: Session; children: ReactNode }) {
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside the signed-in shell");
  return s;
}
