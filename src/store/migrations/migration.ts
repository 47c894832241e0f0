/** One schema migration: plain SQL, so what ran on a database can be read back exactly as shipped. */
export interface Migration {
  id: number;
  name: string;
  /** Statements, given the quoted schema name to qualify objects with. */
  up: (schema: string) => string[];
}
