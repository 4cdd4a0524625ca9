// Bulk exports as the Admin API offers them: start one (the list's filters and fields, checked as
// the list checks them), look at one or at the owner's own, cancel one, and the signed address
// its file is fetched from. The export itself runs in the worker (bulk-export-run.ts).
import { createHmac } from 'node:crypto';
import {
  BULK_RESOURCES,
  type BulkStatus,
  checkDownload,
  DOWNLOAD_URL_TTL_MS,
  downloadSignature,
  isFinished,
  MAX_OPEN_BULK_OPERATIONS,
} from '../domain/bulk-operations.ts';
import type { Clock } from '../domain/clock.ts';
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  TooManyRequestsError,
  UnsupportedParameterError,
  ValidationFailedError,
} from '../domain/errors.ts';
import { type ListFilters, PAGE_PARAMS, parseListQuery } from '../domain/list-filters.ts';
import { RESOURCE_DEFS, type ResourceDef, type ResourceName } from '../domain/resources.ts';
import { allows, storedScopes } from '../domain/scopes.ts';
import type { BulkOperationRow, BulkOwner } from '../storage/ports/bulk-operations.ts';
import type { Storage } from '../storage/ports/storage.ts';
import type { ApiPrincipal } from './api-auth.ts';

export interface BulkExportRequest {
  resource: string;
  /** The list's filter parameters, as its query string would carry them. */
  filters?: Record<string, string> | undefined;
  /** Comma-separated fields, as the list's `fields`. */
  fields?: string | undefined;
}

/** An operation as the Admin API answers it. */
export interface BulkOperationView {
  id: string;
  status: BulkStatus;
  resource: ResourceName;
  filters: Record<string, string>;
  fields: string | null;
  rows: number;
  bytes: number;
  error: string | null;
  snapshot_at: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  /** Path and query of the signed download address (the route puts the store's base URL before it). */
  url: string | null;
  url_expires_at: string | null;
}

export function bulkOwnerOf(p: ApiPrincipal): BulkOwner {
  return p.kind === 'app' ? { appId: p.id } : { privateAppId: p.id };
}

export function rowOwner(op: BulkOperationRow): BulkOwner {
  return op.app_id !== null ? { appId: op.app_id } : { privateAppId: op.private_app_id! };
}

export function bulkDef(resource: string): ResourceDef | undefined {
  return RESOURCE_DEFS.find((d) => d.name === resource && BULK_RESOURCES.includes(d.name));
}

/** The list filters of a stored operation. */
export function storedFilters(def: ResourceDef, filters: string): ListFilters {
  return parseListQuery(JSON.parse(filters) as Record<string, string>, [], def.matches).filters;
}

/** The field names of a resource's objects, as its list's `fields` takes them. */
export function fieldNames(def: ResourceDef): string[] {
  return Object.keys((def.object.properties ?? {}) as Record<string, unknown>);
}

/** The key download addresses are signed with, derived from the cursor key every node shares. */
export function downloadKey(cursorKey: Buffer): Buffer {
  return createHmac('sha256', cursorKey).update('bulk-operation-download').digest();
}

export class BulkExports {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly key: Buffer,
    private readonly maxOpen = MAX_OPEN_BULK_OPERATIONS,
  ) {}

  /** Checks the request as the list checks its query; starts nothing when anything is wrong. */
  async create(p: ApiPrincipal, req: BulkExportRequest): Promise<BulkOperationView> {
    const def = bulkDef(req.resource);
    if (!def) throw new ValidationFailedError({ resource: [`must be one of ${BULK_RESOURCES.join(', ')}`] });
    this.checkScope(p, def.name);
    const filters = req.filters ?? {};
    const paging = Object.keys(filters).filter((k) => (PAGE_PARAMS as readonly string[]).includes(k) || k === 'fields');
    if (paging.length > 0)
      throw new UnsupportedParameterError(
        paging,
        Object.keys(filters).filter((k) => !paging.includes(k)),
        'An export reads every matching row (no page parameters; `fields` is its own member); filters are the list filters, such as',
      );
    const query: Record<string, string> = { ...filters };
    if (req.fields !== undefined) query.fields = req.fields;
    const parsed = parseListQuery(query, fieldNames(def), def.matches);
    const canonical = Object.fromEntries(parsed.params.filter(([k]) => k !== 'fields'));
    const owner = bulkOwnerOf(p);
    const row = await this.storage.transaction(async (tx) => {
      await tx.accounts.lockStore(p.storeId);
      if ((await tx.bulkOperations.countOpen(p.storeId, owner)) >= this.maxOpen) return undefined;
      return tx.bulkOperations.insert({
        storeId: p.storeId,
        owner,
        resource: def.name,
        filters: JSON.stringify(canonical),
        fields: parsed.fields ? parsed.fields.join(',') : null,
        now: this.clock(),
      });
    });
    if (!row)
      throw new TooManyRequestsError(
        `This app already has ${this.maxOpen} bulk operations created or running in this store; wait for one to finish or cancel one`,
      );
    return this.view(row);
  }

  async get(p: ApiPrincipal, id: number): Promise<BulkOperationView> {
    const row = await this.find(p, id);
    this.checkScope(p, row.resource);
    return this.view(row);
  }

  /** The caller's own operations in the store, newest first (those of resources it may still read). */
  async list(p: ApiPrincipal, limit: number): Promise<BulkOperationView[]> {
    const rows = await this.storage.bulkOperations.list(p.storeId, bulkOwnerOf(p), limit);
    return rows.filter((r) => allows(p.scopes, 'read', r.resource)).map((r) => this.view(r));
  }

  async cancel(p: ApiPrincipal, id: number): Promise<BulkOperationView> {
    const row = await this.find(p, id);
    this.checkScope(p, row.resource);
    if (isFinished(row.status))
      throw new ConflictError(`Bulk operation ${id} is already ${row.status}; only a created or running one can be canceled`);
    const ended = await this.storage.bulkOperations.end(id, 'canceled', null, this.clock());
    if (!ended) {
      const now = await this.find(p, id);
      throw new ConflictError(`Bulk operation ${id} is already ${now.status}; only a created or running one can be canceled`);
    }
    await this.storage.bulkOperations.dropSnapshot(id, ended.resource);
    return this.view(ended);
  }

  /**
   * The operation a download address names, once its signature, expiry and the owner's grant as it
   * stands now are checked: a grant that ended or no longer reads the resource takes the file along.
   */
  async download(storeId: number, id: number, expires: number, signature: string): Promise<BulkOperationRow> {
    const check = checkDownload(this.key, storeId, id, expires, signature, this.clock());
    if (check === 'bad-signature') throw new ForbiddenError('This download address is not valid (bad signature)');
    if (check === 'expired') throw new ForbiddenError('This download address has expired; GET the bulk operation again for a fresh one');
    const row = await this.storage.bulkOperations.getById(storeId, id);
    if (row?.status !== 'completed') throw new NotFoundError(`No file for bulk operation ${id}`);
    const scopes = await this.storage.bulkOperations.ownerScopes(storeId, rowOwner(row));
    if (scopes === undefined) throw new NotFoundError(`No file for bulk operation ${id}`);
    if (!allows(storedScopes(scopes), 'read', row.resource))
      throw new ForbiddenError(`The app no longer holds the read_${row.resource} scope this file needs`, `read_${row.resource}`);
    return row;
  }

  chunks(id: number, from: number): AsyncIterable<{ start: number; data: Buffer }> {
    return this.storage.bulkOperations.chunks(id, from);
  }

  private async find(p: ApiPrincipal, id: number): Promise<BulkOperationRow> {
    const row = await this.storage.bulkOperations.get(p.storeId, bulkOwnerOf(p), id);
    if (!row) throw new NotFoundError(`No bulk operation with id ${id}`);
    return row;
  }

  private checkScope(p: ApiPrincipal, resource: ResourceName): void {
    if (!allows(p.scopes, 'read', resource))
      throw new ForbiddenError(`This request needs the read_${resource} scope (or write_${resource})`, `read_${resource}`);
  }

  private view(r: BulkOperationRow): BulkOperationView {
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    let url: string | null = null;
    let expires: number | null = null;
    if (r.status === 'completed') {
      expires = this.clock() + DOWNLOAD_URL_TTL_MS;
      const signature = downloadSignature(this.key, r.store_id, r.id, expires);
      url = `/bulk_downloads/${r.id}?expires=${expires}&signature=${signature}`;
    }
    return {
      id: String(r.id),
      status: r.status,
      resource: r.resource,
      filters: JSON.parse(r.filters) as Record<string, string>,
      fields: r.fields,
      rows: r.rows,
      bytes: r.bytes,
      error: r.error,
      snapshot_at: iso(r.snapshot_at),
      created_at: iso(r.created_at)!,
      updated_at: iso(r.updated_at)!,
      completed_at: r.status === 'completed' ? iso(r.finished_at) : null,
      url,
      url_expires_at: iso(expires),
    };
  }
}
