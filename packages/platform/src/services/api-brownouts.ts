// Brown-outs: windows the operator schedules during which a deprecated version answers 410, so its
// remaining callers notice before the sunset. Stored in the database so every node applies them;
// each node serves from its own copy, read again once it is `brownoutRefreshMs` old (the request
// that finds it stale waits for the read), so a change reaches every node within that bound.
import type { Config } from '../config.ts';
import { activeWindow, brownoutProblem } from '../domain/api-health.ts';
import { CURRENT_VERSION } from '../domain/api-versions.ts';
import type { Clock } from '../domain/clock.ts';
import { NotFoundError, ValidationFailedError } from '../domain/errors.ts';
import type { ApiHealthRepository, BrownoutRow } from '../storage/ports/api-health.ts';

/** A brown-out as the operator sees it. */
export interface BrownoutSummary {
  id: number;
  version: string;
  /** ISO 8601. */
  starts_at: string;
  ends_at: string;
  sunset_at: string | null;
  use_version: string;
}

interface Window {
  id: number;
  version: string;
  startsAt: number;
  endsAt: number;
}

export class BrownoutSchedule {
  private windows: Window[] = [];
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly repo: Pick<ApiHealthRepository, 'brownouts' | 'insertBrownout' | 'deleteBrownout'>,
    private readonly clock: Clock,
    private readonly config: Pick<Config, 'apiDeprecations' | 'apiHealth'>,
  ) {}

  /**
   * The window browning `version` out now, if any. Synchronous while this node's copy is fresh;
   * a promise when it must be read again. Versions that are not deprecated never ask.
   */
  active(version: string): Window | undefined | Promise<Window | undefined> {
    if (!Object.hasOwn(this.config.apiDeprecations, version)) return undefined;
    const now = this.clock();
    if (now - this.loadedAt < this.config.apiHealth.brownoutRefreshMs) return activeWindow(this.windows, version, now);
    return this.reload().then(() => activeWindow(this.windows, version, this.clock()));
  }

  async list(): Promise<BrownoutSummary[]> {
    return (await this.repo.brownouts()).map((r) => this.summary(r));
  }

  /** Schedules a window; refuses (422, nothing stored) an unknown or current version, a backwards or overlapping window. */
  async add(input: { version: string; startsAt: number; endsAt: number }): Promise<BrownoutSummary> {
    const existing = (await this.repo.brownouts()).map(windowOf);
    const problem = brownoutProblem(input, this.config.apiDeprecations, existing);
    if (problem) throw new ValidationFailedError({ brownout: [problem] });
    const row = await this.repo.insertBrownout({ ...input, now: this.clock() });
    this.loadedAt = Number.NEGATIVE_INFINITY;
    return this.summary(row);
  }

  async remove(id: number): Promise<void> {
    if (!(await this.repo.deleteBrownout(id))) throw new NotFoundError(`no brown-out with id ${id}`);
    this.loadedAt = Number.NEGATIVE_INFINITY;
  }

  private reload(): Promise<void> {
    this.loading ??= this.repo
      .brownouts()
      .then(
        (rows) => {
          this.windows = rows.map(windowOf);
        },
        // The database not answering: keep serving from the copy held, and try again later.
        () => {},
      )
      .finally(() => {
        this.loadedAt = this.clock();
        this.loading = undefined;
      });
    return this.loading;
  }

  private summary(r: BrownoutRow): BrownoutSummary {
    const sunset = this.config.apiDeprecations[r.version]?.sunsetAt;
    return {
      id: r.id,
      version: r.version,
      starts_at: new Date(r.starts_at).toISOString(),
      ends_at: new Date(r.ends_at).toISOString(),
      sunset_at: sunset === undefined ? null : new Date(sunset).toISOString(),
      use_version: CURRENT_VERSION,
    };
  }
}

function windowOf(r: BrownoutRow): Window {
  return { id: r.id, version: r.version, startsAt: r.starts_at, endsAt: r.ends_at };
}
