import { encodeLine, type Framing, frame, SSE_HEARTBEAT, type StreamEvent } from "../protocol/index.js";

const encoder = new TextEncoder();

/**
 * The response body of a chat stream: events go in, framed bytes come out. Writes after the client
 * went away are dropped silently; the turn keeps running so payments in flight are still recorded.
 *
 * Lines written in the same tick (a model burst, or `e:` then `d:`) leave as one chunk, at the end
 * of the tick (`process.nextTick`, after pending promise jobs): no line waits for a later event, and
 * the socket, which Node corks until then anyway, receives the same bytes with one chunk's overhead
 * instead of one per line. `close()` sends what is pending first.
 */
export class EventStream {
  readonly readable: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private closed = false;
  /** Text written this tick, not yet enqueued. */
  private pending = "";
  private flushQueued = false;
  /** SSE only: whether anything was written since the last heartbeat check. */
  private wrote = false;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private readonly flushNow = () => this.flush();

  constructor(
    private readonly framing: Framing,
    heartbeatMs: number,
    onCancel: () => void,
  ) {
    this.readable = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
      },
      cancel: () => {
        this.stop();
        onCancel();
      },
    });
    if (framing === "sse") {
      // Idle for a whole period: send a comment so proxies keep the connection open.
      this.heartbeat = setInterval(() => {
        if (!this.wrote) this.write(SSE_HEARTBEAT);
        this.wrote = false;
      }, heartbeatMs);
      this.heartbeat.unref();
    }
  }

  emit(event: StreamEvent): void {
    this.write(frame(encodeLine(event), this.framing));
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.stop();
    try {
      this.controller.close();
    } catch {
      // already cancelled by the client
    }
  }

  private write(text: string): void {
    if (this.closed) return;
    this.wrote = true;
    this.pending += text;
    if (!this.flushQueued) {
      this.flushQueued = true;
      process.nextTick(this.flushNow);
    }
  }

  private flush(): void {
    this.flushQueued = false;
    if (this.closed || this.pending === "") return;
    const text = this.pending;
    this.pending = "";
    try {
      this.controller.enqueue(encoder.encode(text));
    } catch {
      this.stop();
    }
  }

  private stop(): void {
    this.closed = true;
    this.pending = "";
    if (this.heartbeat) clearInterval(this.heartbeat);
  }
}
