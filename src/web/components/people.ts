import { useQuery } from "@tanstack/react-query";
import { trpc } from "../api.ts";

/** Who did something, for people: a user's email, "API key", or "Flagstaff" for the system. */
export function usePeople() {
  const people = useQuery({ queryKey: ["people"], queryFn: () => trpc.dashboard.people.query(), staleTime: 60_000 });
  const byId = new Map((people.data?.people ?? []).map((p) => [p.id, p.email] as const));
  return (actor: { type: string; id: string | null } | null | undefined, email?: string | null): string => {
    if (!actor) return "—";
    if (actor.type === "user") return email ?? (actor.id ? byId.get(actor.id) : undefined) ?? "a user";
    if (actor.type === "api_key") return "API key";
    return "Flagstaff";
  };
}
