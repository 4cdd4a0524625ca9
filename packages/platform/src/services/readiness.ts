// Whether this node should take traffic, and how each dependency it uses is doing. /readyz answers
// from it, the metrics read it, and shutdown flips it before anything else so a load balancer stops
// sending requests while the node still serves the ones already on their way.
export type DependencyName = 'database' | 'redis';

/** `degraded`: the node serves without it, in a reduced way (a local rate-limit bucket, say). */
export type DependencyStatus = 'up' | 'degraded' | 'down';

export interface ReadinessReport {
  ready: boolean;
  draining: boolean;
  dependencies: Partial<Record<DependencyName, DependencyStatus>>;
}

interface Check {
  /** A required dependency that is down makes the node not ready; an optional one never does. */
  required: boolean;
  status(): Promise<DependencyStatus> | DependencyStatus;
}

export class Readiness {
  private drainingSince: number | undefined;
  private readonly checks = new Map<DependencyName, Check>();

  register(name: DependencyName, check: Check): void {
    this.checks.set(name, check);
  }

  /** From now on the node reports itself not ready; there is no way back (the process is stopping). */
  startDraining(now = Date.now()): void {
    this.drainingSince ??= now;
  }

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  async report(): Promise<ReadinessReport> {
    const entries = [...this.checks].map(async ([name, check]): Promise<[DependencyName, DependencyStatus, boolean]> => {
      let status: DependencyStatus;
      try {
        status = await check.status();
      } catch {
        status = 'down';
      }
      return [name, status, check.required];
    });
    const results = await Promise.all(entries);
    const dependencies: ReadinessReport['dependencies'] = {};
    for (const [name, status] of results) dependencies[name] = status;
    const requiredDown = results.some(([, status, required]) => required && status === 'down');
    return { ready: !this.draining && !requiredDown, draining: this.draining, dependencies };
  }
}
