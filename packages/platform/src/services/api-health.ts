// What an app developer and an operator see of calls to deprecated Admin API versions (per app:
// which version, which routes, how often, first and last seen, the sunset and the days left), and
// the notice before a sunset: `app/api_version_deprecated`, written through the outbox by the
// worker's maintenance round once per app and version, to apps that called the version within the
// last `noticeDays` days. The "already told" mark is a row of `api_version_notices`, written in the
// same transaction as the event, so a notice and its mark commit or roll back together.
import type { Config } from '../config.ts';
import { type ApiCallerKind, DAY_MS, daysLeft, noticeDue, noticePayload, sunsetWords } from '../domain/api-health.ts';
import { CURRENT_VERSION } from '../domain/api-versions.ts';
import type { Clock } from '../domain/clock.ts';
import { NoNoticeRecipient } from '../domain/errors.ts';
import type { Storage } from '../storage/ports/storage.ts';
import type { ApiUsageRow, RecentCaller } from '../storage/ports/api-health.ts';
import type { WebhookOutbox } from './webhook-outbox.ts';

export const API_VERSION_NOTICE_TOPIC = 'app/api_version_deprecated';

export interface RouteUsage {
  route: string;
  calls: number;
  /** ISO 8601. */
  first_seen_at: string;
  last_seen_at: string;
}

/** One deprecated version a caller still uses. */
export interface VersionUsage {
  version: string;
  deprecated_at: string | null;
  sunset_at: string | null;
  days_left: number | null;
  /** The sunset in a sentence: the day, the days left and the version to move to. */
  summary: string;
  use_version: string;
  calls: number;
  last_seen_at: string;
  /** When the notice before the sunset was sent, if it was. */
  notified_at: string | null;
  routes: RouteUsage[];
}

/** One caller's usage in the operator's view. */
export interface CallerUsage {
  caller_kind: ApiCallerKind;
  caller_id: number;
  versions: VersionUsage[];
}

export class ApiHealth {
  constructor(
    private readonly storage: Pick<Storage, 'apiHealth' | 'transaction'>,
    private readonly config: Pick<Config, 'apiDeprecations' | 'apiHealth'>,
    private readonly clock: Clock,
    private readonly outbox: WebhookOutbox,
  ) {}

  /** One caller's usage of deprecated versions, newest sunset pressure first. */
  async forCaller(kind: ApiCallerKind, id: number): Promise<VersionUsage[]> {
    const [rows, notices] = await Promise.all([this.storage.apiHealth.usage(kind, [id]), this.storage.apiHealth.notices(kind, id)]);
    const told = new Map(notices.map((n) => [n.version, n.notified_at]));
    return this.versions(rows, told);
  }

  /** Every caller of a deprecated version (the operator's view). */
  async everyCaller(): Promise<CallerUsage[]> {
    const rows = await this.storage.apiHealth.usage(undefined);
    const byCaller = new Map<string, ApiUsageRow[]>();
    for (const r of rows) {
      const key = `${r.caller_kind}:${r.caller_id}`;
      byCaller.set(key, [...(byCaller.get(key) ?? []), r]);
    }
    return [...byCaller.values()].map((own) => ({
      caller_kind: own[0]!.caller_kind,
      caller_id: own[0]!.caller_id,
      versions: this.versions(own, new Map()),
    }));
  }

  /**
   * Sends the notices that are due: for each deprecated version within `noticeDays` of its
   * sunset, to each caller of it within the last `noticeDays` days not yet told, in the store of
   * its latest call where it subscribes to the topic. Returns the number of notices sent.
   */
  async sendNotices(): Promise<number> {
    const now = this.clock();
    const days = this.config.apiHealth.noticeDays;
    let sent = 0;
    for (const [version, lifecycle] of Object.entries(this.config.apiDeprecations)) {
      if (!noticeDue(lifecycle.sunsetAt, now, days)) continue;
      const callers = await this.storage.apiHealth.callersToNotify(version, now - days * DAY_MS);
      const stores = new Map<string, RecentCaller[]>();
      for (const c of callers) {
        const key = `${c.caller_kind}:${c.caller_id}`;
        stores.set(key, [...(stores.get(key) ?? []), c]);
      }
      for (const candidates of stores.values()) {
        for (const c of candidates) {
          const payload = noticePayload(version, lifecycle.deprecatedAt, lifecycle.sunsetAt, c.last_seen_at, now);
          if (await this.notify(c, version, payload, now)) {
            sent += 1;
            break;
          }
        }
      }
    }
    return sent;
  }

  /** True when this caller is now told (by this call); false when it has no subscription there or was told already. */
  private async notify(c: RecentCaller, version: string, payload: Record<string, unknown>, now: number): Promise<boolean> {
    try {
      return await this.storage.transaction(async (tx) => {
        const marked = await tx.apiHealth.markNotified({
          callerKind: c.caller_kind,
          callerId: c.caller_id,
          version,
          storeId: c.store_id,
          now,
        });
        if (!marked) return false;
        const owner = c.caller_kind === 'app' ? { appId: c.caller_id } : { privateAppId: c.caller_id };
        const n = await this.outbox.enqueue(tx, { storeId: c.store_id, topic: API_VERSION_NOTICE_TOPIC, payload, ...owner });
        if (n === 0) throw new NoNoticeRecipient();
        return true;
      });
    } catch (err) {
      if (err instanceof NoNoticeRecipient) return false;
      throw err;
    }
  }

  private versions(rows: readonly ApiUsageRow[], told: ReadonlyMap<string, number>): VersionUsage[] {
    const now = this.clock();
    const byVersion = new Map<string, ApiUsageRow[]>();
    for (const r of rows) byVersion.set(r.version, [...(byVersion.get(r.version) ?? []), r]);
    const out: VersionUsage[] = [];
    for (const [version, own] of byVersion) {
      const lifecycle = this.config.apiDeprecations[version];
      const notified = told.get(version);
      out.push({
        version,
        deprecated_at: lifecycle ? new Date(lifecycle.deprecatedAt).toISOString() : null,
        sunset_at: lifecycle ? new Date(lifecycle.sunsetAt).toISOString() : null,
        days_left: lifecycle ? daysLeft(lifecycle.sunsetAt, now) : null,
        summary: lifecycle ? sunsetWords(version, lifecycle.sunsetAt, now) : `Version ${version} is no longer deprecated; nothing to do.`,
        use_version: CURRENT_VERSION,
        calls: own.reduce((n, r) => n + r.calls, 0),
        last_seen_at: new Date(Math.max(...own.map((r) => r.last_seen_at))).toISOString(),
        notified_at: notified === undefined ? null : new Date(notified).toISOString(),
        routes: own.map((r) => ({
          route: r.route,
          calls: r.calls,
          first_seen_at: new Date(r.first_seen_at).toISOString(),
          last_seen_at: new Date(r.last_seen_at).toISOString(),
        })),
      });
    }
    return out.sort((a, b) => (a.sunset_at ?? '9').localeCompare(b.sunset_at ?? '9') || a.version.localeCompare(b.version));
  }
}
