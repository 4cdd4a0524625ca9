// An Admin API list page read together with the Access-Token of its request, where storage reads
// both in one statement (on PostgreSQL one round trip instead of two). The token's row is judged
// by ApiAuthService exactly as one read alone is, before anything of the page is answered; the
// page is written as ResourceService writes it. Only a request the usual way would answer with a
// page gets here: a token that cannot be one, or a cursor that does not decode, is answered the
// usual way (which refuses it in its own order), and so is anything storage cannot read together.
import type { CursorCodec } from '../domain/cursor.ts';
import { InvalidCursor } from '../domain/errors.ts';
import { hasFilters } from '../domain/list-filters.ts';
import type { ResourceDef } from '../domain/resources.ts';
import type { TokenRepository } from '../storage/ports/tokens.ts';
import type { ApiAuthService, ApiPrincipal } from './api-auth.ts';
import { type PageRequest, type TextPagePlan, textPagePlan } from './pagination.ts';
import type { RenderedPage } from './resource-service.ts';

/** What one read of a token and a page tells. */
export interface AdmittedPage {
  /** The caller the token authenticates; undefined when it authenticates nobody. */
  principal: ApiPrincipal | undefined;
  /** The page when the token admits the call and the database could write it; else read it the usual way. */
  page: RenderedPage | undefined;
}

export class AuthenticatedPages {
  constructor(
    private readonly tokens: Pick<TokenRepository, 'pageWithToken'>,
    private readonly auth: ApiAuthService,
    private readonly cursors: CursorCodec,
  ) {}

  /** Whether pages of `def` may be read with their token at all (storage can, and the database writes them). */
  serves(def: ResourceDef): boolean {
    return this.tokens.pageWithToken !== undefined && def.jsonFields !== undefined;
  }

  /**
   * The token's judgement and the page `req` of `def`, by one read; undefined where this does not
   * apply (then authenticate and list apart, as every other request does).
   */
  read(def: ResourceDef, storeId: number, token: string | undefined, req: PageRequest): Promise<AdmittedPage> | undefined {
    const together = this.tokens.pageWithToken;
    if (together === undefined || def.jsonFields === undefined || (req.filters && hasFilters(req.filters))) return undefined;
    const key = this.auth.keyOf(token);
    if (key === undefined) return undefined;
    let plan: TextPagePlan;
    try {
      plan = textPagePlan(this.cursors, { storeId, resource: def.name }, req);
    } catch (err) {
      if (err instanceof InvalidCursor) return undefined;
      throw err;
    }
    return together(key, def.name, { storeId, ...plan.read }).then(async ({ token: row, page }) => {
      const principal = await this.auth.authenticateRow(key, storeId, row);
      const text = principal && page && plan.finish(page);
      return { principal, page: text && { body: Buffer.from(text.body), next: text.next, previous: text.previous } };
    });
  }
}
