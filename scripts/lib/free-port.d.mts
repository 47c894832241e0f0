/** A TCP port free on 127.0.0.1 right now (free-port.mjs). */
export function freePort(): Promise<number>;
