/**
 * How the protocol's exported schemas are declared, without naming the validator library: what
 * the client package's declarations say of them (its consumers need no zod types). Every schema
 * of src/protocol has this shape, being a zod 4 schema: the Standard Schema v1 interface
 * (https://standardschema.dev, which the AI SDK's `useChat` takes as `dataPartSchemas` and
 * `messageMetadataSchema`) and zod's own `parse` / `safeParse`.
 */
export interface ProtocolSchema<T> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<T> | Promise<StandardResult<T>>;
    readonly types?: { readonly input: unknown; readonly output: T } | undefined;
  };
  /** The value, checked; throws on anything else. */
  parse(data: unknown): T;
  /** The value checked, or its issues. */
  safeParse(data: unknown): { success: true; data: T } | { success: false; error: { issues: SchemaIssue[] } };
}

export interface SchemaIssue {
  readonly message: string;
  readonly path: PropertyKey[];
}

export type StandardResult<T> =
  | { readonly value: T; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
      }>;
    };

/**
 * `true` when A and B are the same type, not merely assignable one way (a field optional on one
 * side only, or missing from one, makes them differ). Used as `Exactly<Same<Schema's output, Type>>`.
 */
export type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Fails to compile unless given `true`. */
export type Exactly<T extends true> = T;
