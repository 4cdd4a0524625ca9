// The ports of the token endpoint and of Admin API authentication: one grant's queries, the store
// that runs a grant atomically, and the token lookups. Every method names the store of the request.
import type { ResourceName } from '../../domain/resources.ts';
import type { JsonPage, JsonPageQuery } from './json-page.ts';
import type { AccessTokenRow, AppRow, CodeRow, PrivateTokenRow, RefreshRow, SuccessorRow, TokenOwner } from './rows.ts';

/**
 * The queries of one token grant, run inside `GrantStore.run`. Each names the store the grant is
 * for, so that on a database split by store it reads one part; a row of another store is unknown.
 */
export interface GrantQueries {
  codeByHash(storeId: number, hash: string): Promise<CodeRow | undefined>;
  /** Marks an unused code used; false when another request used it first. */
  claimCode(storeId: number, hash: string, familyId: string, now: number): Promise<boolean>;
  /** The installation as it is now, with the scopes granted at this moment. */
  installation(storeId: number, id: number): Promise<{ id: number; uninstalled_at: number | null; scopes: string } | undefined>;
  insertFamily(storeId: number, id: string, installationId: number, now: number): Promise<void>;
  insertPair(pair: NewTokenPair): Promise<void>;
  /** An online token: a family bound to the merchant, holding one access token and no refresh token. */
  insertOnlineAccess(access: NewOnlineAccess): Promise<void>;
  /** Records a launch token's id as exchanged; false when it already was (in this store). */
  useLaunchToken(storeId: number, jti: string, expiresAt: number, now: number): Promise<boolean>;
  /** The app's active installation in the store, with the scopes granted now. */
  liveInstallation(storeId: number, appId: number): Promise<{ id: number; scopes: string } | undefined>;
  /** The merchant, when they are a merchant of the store. */
  storeMerchant(storeId: number, merchantId: number): Promise<{ id: number; email: string } | undefined>;
  refreshByHash(storeId: number, hash: string): Promise<RefreshRow | undefined>;
  /** The pair a rotation issued, by the hashes of its refresh and access token. */
  successor(storeId: number, refreshHash: string, accessHash: string): Promise<SuccessorRow | undefined>;
  /** Marks a refresh token rotated; false when another request rotated it first. */
  claimRefresh(storeId: number, hash: string, now: number): Promise<boolean>;
  refreshOwner(storeId: number, hash: string): Promise<TokenOwner | undefined>;
  accessOwner(storeId: number, hash: string): Promise<TokenOwner | undefined>;
  revokeAccess(storeId: number, hash: string, now: number): Promise<void>;
  revokeFamily(storeId: number, familyId: string, now: number): Promise<void>;
  /** Records the first use of an access token; false when it was already recorded (or is unknown). */
  markAccessUsed(storeId: number, hash: string, now: number): Promise<boolean>;
}

/**
 * The client a grant is for: the client_id its app is looked up by, and the app row the service
 * judged the client on (verifyClient). Storage runs the grant only while the app under the client_id
 * is still that row; without `approved` it only reads the app and changes nothing.
 */
export interface GrantClient {
  lookupId: string;
  approved?: AppRow | undefined;
}

/**
 * What a grant step did: `ran` when the app was still the approved row and the grant's step ran
 * (`granted` undefined when the step's own conditions did not hold: nothing changed then). Not
 * `ran`: nothing changed, and `app` is the app as storage read it just now (undefined: no app has
 * the client_id), for the service to judge again.
 */
export type GrantOutcome<T> = { ran: true; app: AppRow; granted: T | undefined } | { ran: false; app: AppRow | undefined };

/** The new pair of a grant, and what the grant is checked against. */
interface GrantPair {
  storeId: number;
  accessHash: string;
  refreshHash: string;
  accessExpiresAt: number;
  refreshExpiresAt: number;
  now: number;
}

/** A refresh token to rotate, and the successor pair to store. */
export interface RefreshRotation extends GrantPair {
  tokenHash: string;
}

/** An authorization code to redeem, and the pair (and new family) it issues. */
export interface CodeRedemption extends GrantPair {
  codeHash: string;
  familyId: string;
  redirectUri: string | null;
  /** S256 of the code_verifier given (null when none, or not of the form a verifier must have). */
  codeChallenge: string | null;
}

export interface GrantStore {
  /**
   * Runs one grant atomically and answers only once it is durable. Concurrent grants may share a
   * commit (and its sync to disk); each still sees the effects of those before it.
   */
  run<T>(work: (q: GrantQueries) => Promise<T>): Promise<T>;
  /**
   * The app this store last read under the client_id, if it kept it: a copy the service may judge
   * a client on before its grant. Never trusted by storage on its own (see GrantClient).
   */
  knownApp(clientId: string): AppRow | undefined;
  /**
   * The usual refresh in one atomic, durable step, run only when the client's app is still the
   * row the service approved: when the token is unrotated, unrevoked, unexpired, of this app and
   * its family is live, marks it rotated and stores the successor pair. `granted` is undefined
   * when any of that does not hold; nothing was changed then, and the caller decides with `run`
   * (a retry, a reuse, an expiry...).
   */
  rotateRefresh(client: GrantClient, r: RefreshRotation): Promise<GrantOutcome<{ scopes: string }>>;
  /**
   * The usual code redemption in one atomic, durable step, on the approved app as above: when the
   * code is unused, unexpired, of this app, for this redirect URI, its PKCE challenge (if any)
   * matches, and the installation is active with exactly the code's scopes, marks it used and
   * stores the new family and pair. `granted` is undefined when any of that does not hold; nothing
   * was changed then.
   */
  redeemCode(client: GrantClient, r: CodeRedemption): Promise<GrantOutcome<{ scopes: string; installationId: number }>>;
}

/** A token row and when it was issued (token introspection's `iat`). */
export type Issued<Row> = Row & { created_at: number };
/** An access token as it is looked up: also the merchant whose online access it is (null: the store's own access). */
export type AccessTokenLookup = Issued<AccessTokenRow> & { merchant_id: number | null };

export interface TokenRepository {
  insertCode(code: NewCode): Promise<void>;
  /** Ends the online access a merchant holds in a store (their logout). Returns how many families it ended. */
  revokeMerchantAccess(storeId: number, merchantId: number, now: number): Promise<number>;
  /** Ends every token family of an installation (uninstall, scopes shrunk). */
  revokeInstallation(storeId: number, installationId: number, now: number): Promise<void>;
  /**
   * Ends every unredeemed, unexpired code of an installation: its expiry becomes `now`, so a later
   * redemption is refused as expired (invalid_grant). Returns how many codes it ended.
   */
  expireCodes(storeId: number, installationId: number, now: number): Promise<number>;
  /** Read on every Admin API request: prepared statements. */
  findAccessToken(storeId: number, hash: string): Promise<AccessTokenLookup | undefined>;
  findPrivateToken(storeId: number, hash: string): Promise<Issued<PrivateTokenRow> | undefined>;
  /** A refresh token as a grant reads it (revoked when its family is); token introspection. */
  findRefreshToken(storeId: number, hash: string): Promise<RefreshRow | undefined>;
  /**
   * The token's row (as findAccessToken or findPrivateToken reads it) and a list page written by
   * the database, read by one statement, where that saves a round trip to the database (PostgreSQL);
   * undefined where reading them apart costs no more (SQLite: no round trips, and the token row
   * is reused while the change stamp stands).
   */
  readonly pageWithToken: PageWithToken | undefined;
}

/** An Access-Token as storage looks it up: which kind of token (its table), and its hash. */
export interface TokenKey {
  kind: 'access' | 'private';
  hash: string;
}

/** A token's row (undefined when there is none in the store) and a page, as one statement read them. */
export interface TokenAndPage {
  token: AccessTokenLookup | Issued<PrivateTokenRow> | undefined;
  /** Undefined when there is no token row, or the database cannot write this page (see ResourceRepository.jsonPage). */
  page: JsonPage | undefined;
}

/** Reads the token of `key` in the store of `q` and the page `q` of `resource` in one statement. */
export type PageWithToken = (key: TokenKey, resource: ResourceName, q: JsonPageQuery) => Promise<TokenAndPage>;

export interface NewCode {
  codeHash: string;
  appId: number;
  storeId: number;
  installationId: number;
  redirectUri: string;
  scopes: string;
  codeChallenge: string | null;
  expiresAt: number;
  now: number;
  /** Online access: the merchant who consented. */
  merchantId?: number | null;
}

export interface NewTokenPair {
  familyId: string;
  installationId: number;
  storeId: number;
  appId: number;
  scopes: string;
  accessHash: string;
  refreshHash: string;
  accessExpiresAt: number;
  refreshExpiresAt: number;
  now: number;
}

/** An online access token: the family and token of one merchant, with no refresh token. */
export interface NewOnlineAccess {
  familyId: string;
  installationId: number;
  storeId: number;
  appId: number;
  merchantId: number;
  scopes: string;
  accessHash: string;
  accessExpiresAt: number;
  now: number;
}
