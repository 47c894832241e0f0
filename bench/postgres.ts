import postgres from "postgres";

/** The benchmarks' PostgreSQL server: `DATABASE_URL`, or the one CI machines run locally. */
export const benchDatabaseUrl = () => process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";

/** Why no server answers at `url`, or undefined when one does. */
export async function postgresUnavailable(url: string): Promise<string | undefined> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await sql.end();
  }
}

/** The URL with its password masked, for the report. */
export const redact = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");

/**
 * Earlier payments of one wallet, written straight into a store's schema: `count` settled payments
 * of one atomic unit each, spread evenly over the 24 h before `now` (so a day's budget read meets
 * all of them), each in a request of its own. Through the table, as any writer's rows would be.
 */
export async function seedPayments(
  url: string,
  schema: string,
  seed: { wallet: string; count: number; network: string; asset: string; now: Date },
): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const s = `"${schema.replaceAll('"', '""')}"`;
  try {
    // Oldest 1 min inside the window, newest 1 min before now.
    const spanMs = 24 * 60 * 60 * 1000 - 2 * 60 * 1000;
    await sql.unsafe(
      `INSERT INTO ${s}.payments (payment_id, status, history, wallet, request_id, service, network,
          asset, pay_to, amount, requirement, tx_hash, created_at, updated_at, settled_at)
        SELECT 'pay_seed_' || g, 'settled', '[]'::jsonb, $1, 'req_seed_' || g,
          'https://seed.example/', $2, $3, '0x000000000000000000000000000000000000dEaD', 1,
          '{}'::jsonb, '0xseed', t, t, t
        FROM generate_series(1, $4::int) g,
          LATERAL (SELECT $5::timestamptz - interval '1 minute'
            - (g - 1) * ($6::float8 / $4::int) * interval '1 millisecond' AS t) at`,
      [seed.wallet, seed.network, seed.asset, seed.count, seed.now.toISOString(), spanMs],
    );
    await sql.unsafe(`ANALYZE ${s}.payments`);
  } finally {
    await sql.end();
  }
}
