import { asSchema, type Schema, type ToolExecutionOptions, type ToolSet } from "ai";
import { AppError, isAppError } from "../errors/index.js";
import type { TurnContext } from "./context.js";

/** What a tool hands the model when it could not do its job: a stable code and a short sentence. */
export interface ToolFailureOutput {
  ok: false;
  error: { code: string; message: string };
}

export interface GuardHooks {
  /** For the operator's log: the tool and the original error (stack, causes). Never sent anywhere else. */
  onToolError?: (toolName: string, error: unknown) => void;
}

/** The tools of one turn, guarded, and the executions still running (the turn may end before them). */
export interface GuardedTools {
  tools: ToolSet;
  inFlight(): Promise<unknown>[];
}

type Execute = (input: unknown, options: ToolExecutionOptions<unknown>) => unknown;

/** The turn's own abort surfacing in a tool (its reason, or an AbortError / TimeoutError). */
function isAbort(error: unknown, signal: AbortSignal): boolean {
  if (error === signal.reason) return true;
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"
  );
}

/**
 * Tool input schemas as the AI SDK's Schema objects, one per schema for the life of the process. The
 * SDK converts a bare zod schema to JSON Schema again at every step of every turn (about 1.3 ms for
 * the four payment tools); a Schema object keeps its conversion, so it is done once.
 */
const schemas = new WeakMap<object, Schema<unknown>>();
function lasting<T>(schema: T): T {
  // A lazy schema (a function) is left to the SDK, which calls it itself.
  if (typeof schema !== "object" || schema === null) return schema;
  let converted = schemas.get(schema);
  if (!converted) {
    converted = asSchema(schema as Parameters<typeof asSchema>[0]) as Schema<unknown>;
    schemas.set(schema, converted);
  }
  return converted as T;
}

/**
 * Wrap every tool of a turn so a tool that throws never hands the model (or the client) the
 * exception's text, which may quote SQL, parameters or a stack. The error is logged through
 * `onToolError`, reported on the turn as an AppError (an AppError thrown keeps its code, such as
 * `store_unavailable` from the store's boundary; anything else is `internal`), and the model gets
 * `{ok: false, error: {code, message}}`. A tool that fails because the turn was aborted reports
 * nothing: the turn reports why it ended. Executions are tracked so the turn can leave them to
 * finish in the background when it must end first (the deadline).
 */
export function guardTools(tools: ToolSet, ctx: TurnContext, hooks: GuardHooks = {}): GuardedTools {
  const running = new Set<Promise<unknown>>();
  const guarded: ToolSet = {};

  const fail = (name: string, error: unknown): ToolFailureOutput => {
    if (ctx.signal.aborted && isAbort(error, ctx.signal)) {
      return {
        ok: false,
        error: { code: "aborted", message: "The request ended before this step finished." },
      };
    }
    try {
      hooks.onToolError?.(name, error);
    } catch {
      // A failing log must not turn into the tool's failure text.
    }
    const reported = isAppError(error)
      ? error
      : new AppError("internal", `The ${name} step failed on an internal error.`, { cause: error });
    ctx.reportError(reported);
    return { ok: false, error: { code: reported.code, message: reported.message } };
  };

  for (const [name, original] of Object.entries(tools)) {
    const execute = original.execute as Execute | undefined;
    if (!execute) {
      guarded[name] = { ...original, inputSchema: lasting(original.inputSchema) } as typeof original;
      continue;
    }
    const wrapped: Execute = (input, options) => {
      let result: unknown;
      try {
        result = execute.call(original, input, options);
      } catch (error) {
        return fail(name, error);
      }
      // Streaming tools (async iterables) and plain values pass as they are.
      if (!isPromiseLike(result)) return result;
      const settled = Promise.resolve(result).then(
        (value) => value,
        (error: unknown) => fail(name, error),
      );
      running.add(settled);
      const forget = () => running.delete(settled);
      settled.then(forget, forget);
      return settled;
    };
    guarded[name] = {
      ...original,
      inputSchema: lasting(original.inputSchema),
      execute: wrapped,
    } as typeof original;
  }
  return { tools: guarded, inFlight: () => [...running] };
}
