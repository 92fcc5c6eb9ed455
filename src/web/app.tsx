/** The dashboard shell: sign-in gate, navigation, the current project, live updates, pages. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState, type MouseEvent, type ReactNode } from "react";
import { can, errorCode, setCsrfToken, trpc, type Role } from "./api.ts";
import { LoginPage } from "./pages/login.tsx";
import { GlobalSearchBox } from "./components/search-box.tsx";
import { SsoFailureNote } from "./components/sso-failure.tsx";
import { href, navigate, useRoute, type Route } from "./router.ts";
import { SessionProvider, useSession, type Session, type SignedIn } from "./session.tsx";
import { ErrorNote, Field, Loading, ProjectOptions, TimeAgo, useToast } from "./ui.tsx";
import { lazyPage, PageFrame } from "./lazy-page.tsx";

// Every page but sign-in is a chunk of its own, fetched when first shown (src/web/lazy-page.tsx):
// the first screen loads the shell and its own page, not all of them.
const AppealsPage = lazyPage(() => import("./pages/appeals.tsx"), (m) => m.AppealsPage);
const AuditPage = lazyPage(() => import("./pages/audit.tsx"), (m) => m.AuditPage);
const AnalysesPage = lazyPage(() => import("./pages/analyses.tsx"), (m) => m.AnalysesPage);
const CasePage = lazyPage(() => import("./pages/case.tsx"), (m) => m.CasePage);
const ReportRedirect = lazyPage(() => import("./pages/case.tsx"), (m) => m.ReportRedirect);
const EvaluationPage = lazyPage(() => import("./pages/evaluation.tsx"), (m) => m.EvaluationPage);
const IdentitiesPage = lazyPage(() => import("./pages/identities.tsx"), (m) => m.IdentitiesPage);
const IdentityPage = lazyPage(() => import("./pages/identities.tsx"), (m) => m.IdentityPage);
const KeysPage = lazyPage(() => import("./pages/keys.tsx"), (m) => m.KeysPage);
const OverviewPage = lazyPage(() => import("./pages/overview.tsx"), (m) => m.OverviewPage);
const PoliciesPage = lazyPage(() => import("./pages/policies.tsx"), (m) => m.PoliciesPage);
const ProjectsPage = lazyPage(() => import("./pages/projects.tsx"), (m) => m.ProjectsPage);
const QueuePage = lazyPage(() => import("./pages/queue.tsx"), (m) => m.QueuePage);
const QualityPage = lazyPage(() => import("./pages/quality.tsx"), (m) => m.QualityPage);
const QueuesPage = lazyPage(() => import("./pages/queues.tsx"), (m) => m.QueuesPage);
const ReviewPage = lazyPage(() => import("./pages/review.tsx"), (m) => m.ReviewPage);
const RulesPage = lazyPage(() => import("./pages/rules.tsx"), (m) => m.RulesPage);
const ClosedCasesPage = lazyPage(() => import("./pages/search.tsx"), (m) => m.ClosedCasesPage);
const SearchPage = lazyPage(() => import("./pages/search.tsx"), (m) => m.SearchPage);
const SettingsPage = lazyPage(() => import("./pages/settings.tsx"), (m) => m.SettingsPage);
const TeamPage = lazyPage(() => import("./pages/team.tsx"), (m) => m.TeamPage);
const UsersPage = lazyPage(() => import("./pages/users.tsx"), (m) => m.UsersPage);
const ViewingPage = lazyPage(() => import("./pages/viewing.tsx"), (m) => m.ViewingPage);
const TransparencyPage = lazyPage(() => import("./pages/transparency.tsx"), (m) => m.TransparencyPage);
const WebhooksPage = lazyPage(() => import("./pages/webhooks.tsx"), (m) => m.WebhooksPage);

export function App() {
  const me = useQuery({
    queryKey: ["me"],
    queryFn: async () => {
      const r = await trpc.auth.me.query();
      setCsrfToken(r.csrfToken);
      return r;
    },
    retry: (n, err) => errorCode(err) !== "UNAUTHORIZED" && n < 2,
    staleTime: Infinity,
  });
  if (me.isPending) return <Loading label="Loading Flagstaff…" />;
  if (me.error) {
    if (errorCode(me.error) === "UNAUTHORIZED") return <LoginPage />;
    return (
      <main className="center">
        <ErrorNote error={me.error} />
        <button type="button" onClick={() => me.refetch()}>
          Try again
        </button>
      </main>
    );
  }
  if (!me.data.user) return <LoginPage />;
  return <Shell me={me.data as SignedIn} />;
}

const PROJECT_KEY = "flagstaff.projectId";

function Shell({ me }: { me: SignedIn }) {
  const route = useRoute();
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => trpc.projects.list.query({ orgSlug: me.org.slug }) });
  const [projectId, setProjectIdState] = useState<string | null>(() => localStorage.getItem(PROJECT_KEY));
  const list = projects.data?.projects ?? [];
  const current = list.find((p) => p.id === projectId)?.id ?? list[0]?.id ?? null;
  const setProjectId = (id: string) => {
    localStorage.setItem(PROJECT_KEY, id);
    setProjectIdState(id);
  };
  const session: Session = {
    me,
    role: me.role,
    can: (needed) => can(me.role, needed),
    orgSlug: me.org.slug,
    projects: list,
    projectId: current,
    setProjectId,
  };
  const live = useLiveUpdates();

  return (
    <SessionProvider session={session}>
      {/* Hash routes: following "#main" would change the route, so the link moves focus itself. */}
      <a className="skip" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <div className="shell">
        <header className="topbar">
          <a className="brand" href={href("queue")}>
            <svg viewBox="0 0 16 16" width="18" height="18" aria-hidden="true">
              <path d="M3 1v14" stroke="currentColor" strokeWidth="2" />
              <path d="M4 2h9l-2 3 2 3H4z" fill="#d9480f" />
            </svg>
            Flagstaff
          </a>
          <span className="org" title="Organization">
            {me.org.name}
          </span>
          <span className="live" title="The dashboard checks for changes every 2 seconds">
            <span className={`dot ${live.ok ? "dot-ok" : "dot-off"}`} aria-hidden="true" />
            {live.ok ? (
              <>
                Live · checked <TimeAgo iso={live.checkedAt} />
              </>
            ) : (
              "Offline"
            )}
          </span>
          <span className="spacer" />
          <GlobalSearchBox />
          {list.length > 0 && (
            <Field label="Project" className="project-picker">
              <select value={current ?? ""} onChange={(e) => setProjectId(e.target.value)}>
                <ProjectOptions projects={list} />
              </select>
            </Field>
          )}
          <UserMenu me={me} />
        </header>
        <nav className="sidenav" aria-label="Dashboard">
          <NavLinks route={route} role={me.role} />
        </nav>
        <main id="main" className="content" tabIndex={-1}>
          {projects.error ? (
            <ErrorNote error={projects.error} />
          ) : (
            // A new frame per page: one that could not be loaded does not stay shown on the next.
            <PageFrame key={route.page}>
              <Page route={route} />
            </PageFrame>
          )}
        </main>
        {/* The release of the server that answered (during a rolling upgrade, instances differ). */}
        <footer className="footer">Flagstaff {me.version}</footer>
      </div>
    </SessionProvider>
  );
}

/** The skip link: focus the page's main region, leaving the URL (the route) as it is. */
function skipToMain(e: MouseEvent<HTMLAnchorElement>) {
  e.preventDefault();
  document.getElementById("main")?.focus();
}

const NAV: { page: string; label: string; role: Role }[] = [
  { page: "queue", label: "Review queue", role: "viewer" },
  { page: "assigned", label: "Assigned to me", role: "moderator" },
  { page: "appeals", label: "Appeals", role: "viewer" },
  { page: "closed", label: "Closed cases", role: "viewer" },
  { page: "overview", label: "Overview", role: "viewer" },
  { page: "identities", label: "Identities", role: "viewer" },
  { page: "analyses", label: "AI analyses", role: "viewer" },
  { page: "quality", label: "Quality", role: "moderator" },
  { page: "evaluation", label: "Evaluation", role: "moderator" },
  { page: "policies", label: "Policies", role: "moderator" },
  { page: "rules", label: "Rules", role: "moderator" },
  { page: "audit", label: "Audit log", role: "viewer" },
  { page: "transparency", label: "Transparency", role: "viewer" },
  { page: "projects", label: "Projects", role: "viewer" },
  { page: "settings", label: "Project settings", role: "viewer" },
  { page: "keys", label: "API keys", role: "admin" },
  { page: "webhooks", label: "Webhooks", role: "admin" },
  { page: "users", label: "Users", role: "admin" },
  { page: "team", label: "Team", role: "admin" },
  { page: "queues", label: "Queues", role: "admin" },
];

const SECTION_OF: Record<string, string> = { cases: "queue", reports: "queue", review: "queue", identity: "identities" };

function NavLinks({ route, role }: { route: Route; role: Role }) {
  const active = SECTION_OF[route.page] ?? route.page;
  return (
    <ul>
      {NAV.filter((n) => can(role, n.role)).map((n) => (
        <li key={n.page}>
          <a href={href(n.page)} aria-current={active === n.page ? "page" : undefined}>
            {n.label}
            {n.page === "assigned" && <AssignedCount />}
          </a>
        </li>
      ))}
    </ul>
  );
}

/** The open cases the user holds (assigned or claimed in review mode): refetched with everything on screen when something changes. */
function AssignedCount() {
  const count = useQuery({ queryKey: ["assignedToMe"], queryFn: () => trpc.dashboard.assignedToMe.query() }).data?.count;
  if (count === undefined) return null;
  return (
    <span className="nav-count" data-testid="assigned-count">
      <span className="sr-only">: </span>
      {count}
      <span className="sr-only"> {count === 1 ? "case" : "cases"}</span>
    </span>
  );
}

function Page({ route }: { route: Route }) {
  const id = route.params[0];
  switch (route.page) {
    case "queue":
      return <QueuePage />;
    case "sign-in": // where single sign-on sends a browser back (src/api/oidc-routes.ts); signed in, the queue, with why a sign-in was refused
      return (
        <>
          <SsoFailureNote code={route.query.get("error")} />
          <QueuePage />
        </>
      );
    case "assigned":
      return <QueuePage key="assigned" view="mine" />;
    case "review":
      return <ReviewPage key={route.query.get("queue") ?? ""} queueId={route.query.get("queue")} />;
    case "cases":
      return id ? <CasePage key={id} caseId={id} focusReport={route.query.get("report")} /> : <QueuePage />;
    case "reports":
      return id ? <ReportRedirect reportId={id} /> : <QueuePage />;
    case "appeals":
      return <AppealsPage />;
    case "closed":
      return <ClosedCasesPage />;
    case "search":
      return <SearchPage />;
    case "overview":
      return <OverviewPage />;
    case "identities":
      return <IdentitiesPage />;
    case "identity":
      return id ? <IdentityPage key={id} identityId={id} /> : <IdentitiesPage />;
    case "analyses":
      return <AnalysesPage />;
    case "evaluation":
      return <EvaluationPage params={route.params} query={route.query} />;
    case "policies":
      return <PoliciesPage categoryId={id} />;
    case "rules":
      return <RulesPage key={id ?? ""} ruleId={id} />;
    case "audit":
      return <AuditPage />;
    case "transparency":
      return <TransparencyPage />;
    case "projects":
      return <ProjectsPage />;
    case "settings":
      return <SettingsPage />;
    case "viewing":
      return <ViewingPage />;
    case "keys":
      return <AdminOnly>{<KeysPage />}</AdminOnly>;
    case "webhooks":
      return <AdminOnly>{<WebhooksPage />}</AdminOnly>;
    case "users":
      return <AdminOnly>{<UsersPage />}</AdminOnly>;
    case "queues":
      return <AdminOnly>{<QueuesPage />}</AdminOnly>;
    case "team":
      return <AdminOnly>{<TeamPage />}</AdminOnly>;
    case "quality":
      return <QualityPage key={route.params.join("/")} view={id} id={route.params[1]} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no page here. <a href={href("queue")}>Back to the queue</a>
          </p>
        </section>
      );
  }
}

function AdminOnly({ children }: { children: ReactNode }) {
  const { can } = useSession();
  if (!can("admin")) {
    return (
      <section>
        <h1>Admins only</h1>
        <p>This page needs the admin role.</p>
      </section>
    );
  }
  return <>{children}</>;
}

function UserMenu({ me }: { me: SignedIn }) {
  const qc = useQueryClient();
  const toast = useToast();
  const logout = useMutation({
    mutationFn: () => trpc.auth.logout.mutate(),
    onSettled: () => {
      setCsrfToken(null);
      // Everything of the session goes; "me" is reset (not cleared: a cleared query keeps its
      // observer's last answer, and the page stayed signed in) and asked again, answering 401.
      qc.removeQueries({ predicate: (q) => q.queryKey[0] !== "me" });
      // "Signed out locally" (onError, before this) is kept over the move.
      navigate(href("queue"), { keepNotices: true });
      void qc.resetQueries({ queryKey: ["me"] });
    },
    onError: () => toast("Signed out locally; the server could not be reached", "error"),
  });
  return (
    <div className="usermenu">
      <span className="who">
        <span className="email">{me.user.email}</span>
        <span className={`role role-${me.role}`}>{me.role}</span>
      </span>
      <a className="button small secondary" href={href("viewing")}>
        Viewing
      </a>
      <button type="button" className="secondary small" onClick={() => logout.mutate()} disabled={logout.isPending}>
        Sign out
      </button>
    </div>
  );
}

/**
 * Live updates by polling a change counter: every 2 s the dashboard asks for the id of the
 * organization's newest audit event (one index step on the server, a few bytes on the wire).
 * Only when it changed does it refetch what is on screen.
 */
function useLiveUpdates(): { ok: boolean; checkedAt: string | null } {
  const qc = useQueryClient();
  const changes = useQuery({
    queryKey: ["changes"],
    queryFn: () => trpc.dashboard.changes.query(),
    refetchInterval: 2000,
    refetchIntervalInBackground: false,
    staleTime: 0,
  });
  const last = useRef<string | null | undefined>(undefined);
  const version = changes.data?.version;
  useEffect(() => {
    if (version === undefined) return;
    if (last.current !== undefined && last.current !== version) {
      void qc.invalidateQueries({ predicate: (q) => q.queryKey[0] !== "changes" && q.queryKey[0] !== "me" });
    }
    last.current = version;
  }, [version, qc]);
  return { ok: !changes.isError, checkedAt: changes.dataUpdatedAt ? new Date(changes.dataUpdatedAt).toISOString() : null };
}
