import { z } from "zod";
import { createQueue, deleteQueue, getQueue, listQueues, moveCaseToQueue, updateQueue } from "../../domain/review/queues.ts";
import { serviceLevels } from "../../domain/service-levels/service-levels.ts";
import { serviceLevelsSchema } from "../../domain/views/service-level.ts";
import { queueCreateSchema, queuePatchSchema, queueViewSchema } from "../../domain/views/queue.ts";
import { okSchema } from "../schemas.ts";
import { orgProcedure, router } from "../trpc.ts";

const tags = ["queues"];
const id = z.string().min(1).max(64);
const orgSlug = z.string().min(1).max(64);
const queuesPath = "/organizations/{orgSlug}/queues";

/**
 * The organization's review queues (src/domain/review/queues.ts). Everyone reads them; changing them
 * needs the admin role (secret keys act as admins); moving a case between queues is a
 * moderator's (dashboard only).
 */
export const queuesRouter = router({
  list: orgProcedure(z.object({ orgSlug }))
    .meta({
      family: "org",
      openapi: { method: "GET", path: queuesPath, summary: "List review queues", description: "The default queue first (created on first need), with each queue's open cases.", tags },
    })
    .output(z.object({ queues: z.array(queueViewSchema) }))
    .query(async ({ ctx }) => ({ queues: await listQueues(ctx.domain) })),

  create: orgProcedure(queueCreateSchema.extend({ orgSlug }))
    .meta({
      role: "admin",
      family: "org",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: queuesPath,
        summary: "Create a review queue",
        description:
          "`isDefault: true` makes it the organization's default queue (the flag moves; no case moves). `access` empty = everyone. `firstReviewTargetMinutes` and `decisionTargetMinutes` set its service levels (docs/workflow.md, \"Service levels\").",
        tags,
        errorResponses: { 409: "Another queue of the organization has this name" },
      },
    })
    .output(z.object({ queue: queueViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { orgSlug: _, ...rest } = input;
      return { queue: await createQueue(ctx.domain, rest) };
    }),

  get: orgProcedure(z.object({ orgSlug, queueId: id }))
    .meta({ family: "org", openapi: { method: "GET", path: `${queuesPath}/{queueId}`, summary: "Get a review queue", tags } })
    .output(z.object({ queue: queueViewSchema }))
    .query(async ({ ctx, input }) => ({ queue: await getQueue(ctx.domain, { queueId: input.queueId }) })),

  update: orgProcedure(queuePatchSchema.extend({ orgSlug, queueId: id }))
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "PATCH",
        path: `${queuesPath}/{queueId}`,
        summary: "Change a review queue",
        description:
          "Only the fields given change. `isDefault: true` makes it the default queue (the flag moves from the old one; no case moves). A target set to null is removed; breaches already recorded stay.",
        tags,
        errorResponses: { 409: "Another queue of the organization has this name" },
      },
    })
    .output(z.object({ queue: queueViewSchema }))
    .mutation(async ({ ctx, input }) => {
      const { orgSlug: _, ...rest } = input;
      return { queue: await updateQueue(ctx.domain, rest) };
    }),

  delete: orgProcedure(
    z.object({
      orgSlug,
      queueId: id,
      targetQueueId: id.optional().meta({
        description:
          "The queue its cases (open and closed) move to; default: the default queue. Required when the queue has an access list and holds cases; its access must then be no wider than the deleted queue's.",
      }),
    }),
  )
    .meta({
      role: "admin",
      family: "org",
      openapi: {
        method: "DELETE",
        path: `${queuesPath}/{queueId}`,
        summary: "Delete a review queue",
        description:
          "Its cases, open and closed, move to `targetQueueId` or else the default queue, each move audited (`CASE_QUEUE_CHANGED`). Deleting never shows a case to someone new: a queue with an access list that holds cases needs `targetQueueId`, and a target that more people may work than the deleted queue is refused (409). The default queue cannot be deleted.",
        tags,
        errorResponses: {
          400: "The target is the queue itself, or a queue of another project than some of its cases",
          404: "Queue or target queue not found",
          409: "The default queue; a queue with an access list holding cases without targetQueueId; or a target with wider access",
        },
      },
    })
    .output(
      okSchema.extend({
        movedCases: z.number().int().meta({ description: "Open cases moved." }),
        movedClosedCases: z.number().int().meta({ description: "Closed cases moved (an addition)." }),
        to: z.string().meta({ description: "The queue that now holds them (an addition)." }),
      }),
    )
    .mutation(async ({ ctx, input }) => ({ ok: true as const, ...(await deleteQueue(ctx.domain, { queueId: input.queueId, targetQueueId: input.targetQueueId })) })),

  serviceLevels: orgProcedure(z.object({ orgSlug, days: z.coerce.number().int().min(1).max(90).default(7) }))
    .meta({
      family: "org",
      openapi: {
        method: "GET",
        path: "/organizations/{orgSlug}/service-levels",
        summary: "Service levels of the review queues and appeals",
        description:
          "Each queue the caller may work, with its targets, open cases, the oldest, the open cases past each target now and the breaches recorded in the last `days` days (default 7); the same for the appeals of cases the caller may work, against their projects' appeal targets.",
        tags,
      },
    })
    .output(serviceLevelsSchema)
    .query(({ ctx, input }) => serviceLevels(ctx.domain, { days: input.days })),

  /** Moves a case to a queue (dashboard; moderator). Audited CASE_QUEUE_CHANGED. */
  moveCase: orgProcedure(z.object({ orgSlug, caseId: id, queueId: id }))
    .output(z.object({ changed: z.boolean(), queueId: z.string() }))
    .mutation(({ ctx, input }) => moveCaseToQueue(ctx.domain, { caseId: input.caseId, queueId: input.queueId })),
});
