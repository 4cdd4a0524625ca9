// The delivery worker runs on parts the composition root builds and hands over: the worker takes
// their name for its claims, and a set of parts belongs to one worker only.
import { afterEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../src/domain/secret-box.ts';
import type { DeliveryQueue } from '../src/storage/ports/delivery-queue.ts';
import { WebhookWorker } from '../src/webhooks/webhook-worker.ts';
import type { WebhookWorkerOptions } from '../src/webhooks/worker-options.ts';
import { buildWorkerParts, type WorkerParts } from '../src/webhooks/worker-parts.ts';

const options: WebhookWorkerOptions = {
  // Never called: the worker is not started.
  queue: {} as DeliveryQueue,
  onDeliveriesQueued: () => () => {},
  box: new SecretBox(Buffer.alloc(32, 7)),
  config: {
    mode: 'development',
    storeDomain: 'example.test',
    webhooks: { timeoutMs: 1_000, retrySchedule: [1_000], disableAfterDead: 5 },
    webhookClaimLeaseMs: 60_000,
  },
};

describe('the delivery worker and the parts handed to it', () => {
  const built: WorkerParts[] = [];
  const parts = () => {
    const p = buildWorkerParts(options);
    built.push(p);
    return p;
  };
  afterEach(async () => {
    for (const p of built.splice(0)) await p.sender.close();
  });

  it('claims under the name its parts were built with; each set of parts has its own', () => {
    const a = parts();
    const b = parts();
    expect(new WebhookWorker(a, options).id).toBe(a.id);
    expect(a.id).toMatch(/^w_[0-9a-f]{12}$/);
    expect(b.id).not.toBe(a.id);
  });

  it('a set of parts belongs to one worker: a second one is refused', () => {
    const a = parts();
    new WebhookWorker(a, options);
    expect(() => new WebhookWorker(a, options)).toThrow(/already belong to a worker/);
  });

  it('parts not yet taken by a worker refuse to run a job', () => {
    const a = parts();
    expect(() => a.dispatcher.enqueue({ id: 1 } as Parameters<typeof a.dispatcher.enqueue>[0])).toThrow(/before a worker took them/);
  });
});
