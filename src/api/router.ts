import { aiRouter } from "./routers/ai.ts";
import { attachmentsRouter } from "./routers/attachments.ts";
import { mediaBanksRouter } from "./routers/media-banks.ts";
import { auditRouter } from "./routers/audit.ts";
import { authRouter } from "./routers/auth.ts";
import { casesRouter } from "./routers/cases.ts";
import { categoriesRouter } from "./routers/categories.ts";
import { dashboardRouter } from "./routers/dashboard.ts";
import { evaluationRouter } from "./routers/evaluation.ts";
import { enforcementRouter } from "./routers/enforcement.ts";
import { identitiesRouter } from "./routers/identities.ts";
import { jobsRouter } from "./routers/jobs.ts";
import { keysRouter } from "./routers/keys.ts";
import { policiesRouter } from "./routers/policies.ts";
import { projectsRouter } from "./routers/projects.ts";
import { qualityRouter } from "./routers/quality.ts";
import { queuesRouter } from "./routers/queues.ts";
import { reportsRouter } from "./routers/reports.ts";
import { reviewRouter } from "./routers/review.ts";
import { rulesRouter } from "./routers/rules.ts";
import { searchRouter } from "./routers/search.ts";
import { ssoRouter } from "./routers/sso.ts";
import { strikesRouter } from "./routers/strikes.ts";
import { sweepsRouter } from "./routers/sweeps.ts";
import { teamRouter } from "./routers/team.ts";
import { templatesRouter } from "./routers/templates.ts";
import { transparencyRouter } from "./routers/transparency.ts";
import { usersRouter } from "./routers/users.ts";
import { viewingRouter } from "./routers/viewing.ts";
import { webhooksRouter } from "./routers/webhooks.ts";
import { router } from "./trpc.ts";

/** Every procedure, as the dashboard's tRPC client sees it at /trpc. */
export const appRouter = router({
  identities: identitiesRouter,
  reports: reportsRouter,
  categories: categoriesRouter,
  cases: casesRouter,
  audit: auditRouter,
  keys: keysRouter,
  projects: projectsRouter,
  ai: aiRouter,
  jobs: jobsRouter,
  auth: authRouter,
  users: usersRouter,
  dashboard: dashboardRouter,
  enforcement: enforcementRouter,
  webhooks: webhooksRouter,
  templates: templatesRouter,
  search: searchRouter,
  transparency: transparencyRouter,
  rules: rulesRouter,
  queues: queuesRouter,
  sweeps: sweepsRouter,
  review: reviewRouter,
  strikes: strikesRouter,
  policies: policiesRouter,
  quality: qualityRouter,
  evaluation: evaluationRouter,
  sso: ssoRouter,
  team: teamRouter,
  viewing: viewingRouter,
  attachments: attachmentsRouter,
  mediaBanks: mediaBanksRouter,
});

export type AppRouter = typeof appRouter;
