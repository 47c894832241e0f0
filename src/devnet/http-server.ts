import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { urlHost } from "./evm/chain.js";

type FetchHandler = (request: Request) => Response | Promise<Response>;

/**
 * An HTTP server for one devnet component that can stop listening and listen again on the same
 * port. `pause()` makes clients see "connection refused" (the fault), `stop()` frees the port
 * for good. Open connections are destroyed, so nothing keeps the process alive.
 */
export class DevnetHttpServer {
  private readonly server: Server;
  private port = 0;
  private listening = false;
  private stopped = false;
  private handler: FetchHandler = () => new Response("starting", { status: 503 });

  /** `fetch` may be given later with {@link setHandler}, once the app knows its own URL. */
  constructor(
    private readonly host: string,
    fetch?: FetchHandler,
  ) {
    if (fetch) this.handler = fetch;
    this.server = createServer(getRequestListener((request) => this.handler(request)));
    // Keep-alive sockets must not outlive a pause: a paused service has to refuse for real.
    this.server.keepAliveTimeout = 1_000;
  }

  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  get url(): string {
    return `http://${urlHost(this.host)}:${this.port}`;
  }

  setHandler(fetch: FetchHandler): void {
    this.handler = fetch;
  }

  async start(): Promise<void> {
    await this.listen(0);
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Stops accepting connections but remembers the port (fault "refuse"). */
  async pause(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    await this.close();
  }

  /** Listens again on the same port after {@link pause}. */
  async resume(): Promise<void> {
    if (this.listening || this.stopped) return;
    await this.listen(this.port);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (!this.listening) return;
    this.listening = false;
    await this.close();
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.server.once("error", onError);
      this.server.listen(port, this.host, () => {
        this.server.off("error", onError);
        this.listening = true;
        resolve();
      });
    });
  }

  private close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
