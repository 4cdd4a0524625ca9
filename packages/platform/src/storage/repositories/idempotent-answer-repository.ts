// The answers kept for replaying Admin API writes that name one customer, found and rewritten when
// the customer is redacted. A replay sends the stored body as it is, so the body itself is
// rewritten; its status, headers and the key's fingerprint stay, so the same request sent again
// is still a replay (answered with the placeholders), never a second write.
//
// Bounded without an index of its own: the keys' primary key leads with store_id, so the search
// reads one store's keys (those of the last day, until they are pruned), and the resource kept
// with each key passes over every answer but the customer and order writes' without parsing it.
// Keys stored before the resource was kept (null) are read too, and told apart by their shape.
import { type RawBuilder, sql } from 'kysely';
import { CUSTOMER_ANSWER_RESOURCES } from '../../domain/customer-redaction.ts';
import type { IdempotentAnswerRepository, RewrittenAnswer, StoredAnswer } from '../ports/idempotent-answers.ts';
import type { Executor } from './executor.ts';

/** Rows per rewriting statement: one round trip for many answers, parameters of a bounded size. */
const REPLACE_CHUNK = 200;
/**
 * How every answer of a resource write starts (compact JSON of `{"data": {…}}`): only such bodies
 * are parsed, so a body of another shape can never fail the search.
 */
const DATA_ANSWER = '{"data":{%';

export class SqlIdempotentAnswerRepository implements IdempotentAnswerRepository {
  constructor(private readonly x: Executor) {}

  /** The text of `data.<field>` of the stored body, spelled for this database. */
  private field(field: string): RawBuilder<string | null> {
    if (this.x.dialect === 'sqlite') return sql<string | null>`k.response_body ->> ${sql.lit(`$.data.${field}`)}`;
    return sql<string | null>`cast(k.response_body as json) #>> ${sql.lit(`{data,${field}}`)}`;
  }

  async namingCustomer(storeId: number, customerId: number): Promise<StoredAnswer[]> {
    const resources = sql.join(CUSTOMER_ANSWER_RESOURCES.map((r) => sql.lit(r)));
    const id = String(customerId);
    // The CASE keeps the JSON functions off bodies of another shape (the databases may evaluate
    // the conditions of a WHERE in any order, a CASE's branches only in turn).
    const rows = await sql<StoredAnswer>`
      select k.owner, k.idem_key as key, k.token, k.resource, k.response_body as body from idempotency_keys k
      where k.store_id = ${storeId}
        and k.status_code >= 200 and k.status_code < 300
        and (k.resource in (${resources}) or k.resource is null)
        and (case when k.response_body like ${DATA_ANSWER}
          then (${this.field('id')} = ${id} or ${this.field('customer_id')} = ${id}) end)
      order by k.owner, k.idem_key`.execute(this.x.k);
    return rows.rows;
  }

  async replace(storeId: number, answers: readonly RewrittenAnswer[]): Promise<number> {
    let changed = 0;
    for (let i = 0; i < answers.length; i += REPLACE_CHUNK) {
      const chunk = answers.slice(i, i + REPLACE_CHUNK);
      const res =
        this.x.dialect === 'sqlite'
          ? await sql`update idempotency_keys as k set response_body = v.value ->> 3
              from json_each(${JSON.stringify(chunk.map((a) => [a.owner, a.key, a.token, a.body]))}) as v
              where k.store_id = ${storeId} and k.owner = v.value ->> 0 and k.idem_key = v.value ->> 1
                and k.token = v.value ->> 2 and k.status_code is not null`.execute(this.x.k)
          : await sql`update idempotency_keys as k set response_body = v.body
              from unnest(cast(${chunk.map((a) => a.owner)} as text[]), cast(${chunk.map((a) => a.key)} as text[]),
                cast(${chunk.map((a) => a.token)} as text[]), cast(${chunk.map((a) => a.body)} as text[]))
                as v (owner, idem_key, token, body)
              where k.store_id = ${storeId} and k.owner = v.owner and k.idem_key = v.idem_key
                and k.token = v.token and k.status_code is not null`.execute(this.x.k);
      changed += Number(res.numAffectedRows ?? 0);
    }
    return changed;
  }
}
