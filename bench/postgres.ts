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
