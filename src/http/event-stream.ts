import { encodeLine, type Framing, frame, SSE_HEARTBEAT, type StreamEvent } from "../protocol/index.js";

/**
 * The response body of a chat stream: events go in, framed bytes come out. Writes after the client
 * went away are dropped silently; the turn keeps running so payments in flight are still recorded.
 */
export class EventStream {
  readonly readable: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private readonly encoder = new TextEncoder();
  private closed = false;
  private lastWrite = Date.now();
  private heartbeat: ReturnType<typeof setInterval> | undefined;

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
      this.heartbeat = setInterval(() => {
        if (Date.now() - this.lastWrite >= heartbeatMs) this.write(SSE_HEARTBEAT);
      }, heartbeatMs);
      this.heartbeat.unref();
    }
  }

  emit(event: StreamEvent): void {
    this.write(frame(encodeLine(event), this.framing));
  }

  close(): void {
    if (this.closed) return;
    this.stop();
    try {
      this.controller.close();
    } catch {
      // already cancelled by the client
    }
  }

  private write(text: string): void {
    if (this.closed) return;
    this.lastWrite = Date.now();
    try {
      this.controller.enqueue(this.encoder.encode(text));
    } catch {
      this.stop();
    }
  }

  private stop(): void {
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
  }
}
