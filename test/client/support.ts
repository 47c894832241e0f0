/**
 * Support for the client suites: the real service listening on a loopback port (the SDK and the
 * terminal chat speak HTTP to it as they would to a deployed one), a `useChat`-like driver built on
 * the AI SDK's own AbstractChat, and in-memory standard streams for the terminal chat's main().
 */
import { PassThrough } from "node:stream";
import { AbstractChat, type ChatState, type ChatStatus, type UIMessage } from "ai";
import type { Running } from "../../src/bootstrap.js";
import { listen, type Service } from "../../src/service.js";

export interface Served {
  url: string;
  close(): Promise<void>;
}

/** Listen on a free loopback port; close() stops the listener and shuts the service down. */
export async function serve(service: Service | Running): Promise<Served> {
  const s = "service" in service ? service.service : service;
  const { server, url } = await listen(s.app, { host: "127.0.0.1", port: 0 });
  return {
    url,
    async close() {
      const closeAll = server as unknown as { closeAllConnections?: () => void };
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        closeAll.closeAllConnections?.();
      });
      await s.shutdown();
    },
  };
}

/** The state `useChat` keeps (React's is the same shape over hooks): plain arrays here. */
class PlainState<M extends UIMessage> implements ChatState<M> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: M[] = [];
  pushMessage = (message: M) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: M) => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The AI SDK's chat driver, as `useChat` runs it, without React. */
export class TestChat<M extends UIMessage> extends AbstractChat<M> {
  constructor(
    init: ConstructorParameters<typeof AbstractChat<M>>[0] extends infer I ? Omit<I, "state"> : never,
  ) {
    super({ ...init, state: new PlainState<M>() } as ConstructorParameters<typeof AbstractChat<M>>[0]);
  }
}

/** Standard streams in memory for the terminal chat's main(). */
export function memoryIo(env: Record<string, string | undefined> = {}, input = "") {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  if (input) stdin.write(input);
  return {
    io: { stdin, stdout, stderr, env: { NO_COLOR: "1", ...env } },
    stdin,
    out: () => out,
    err: () => err,
  };
}
