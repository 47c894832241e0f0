import { createServer } from "node:net";

/**
 * A TCP port free on 127.0.0.1 right now (the OS picks it; it is released before it is returned,
 * so a process started next can bind it). Shared by the scripts that start the service.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        address && typeof address === "object" ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}
