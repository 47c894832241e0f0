/**
 * setupFile of the `unit` project (vitest.config.ts): a unit test opens no socket and starts no
 * process. Doing so throws here, naming the rule, so a file that needs the network or a child
 * process is moved to `integration` or `e2e` instead of slowing the unit loop down.
 */
import { ChildProcess } from "node:child_process";
import net from "node:net";

function refuse(what: string): never {
  throw new Error(`a unit test ${what}: move this file to the integration or e2e project (vitest.config.ts)`);
}

net.Server.prototype.listen = function listen(): never {
  refuse("listens on a socket");
};
net.Socket.prototype.connect = function connect(): never {
  refuse("opens a network connection");
};
// spawn, exec and fork all start their process through this (untyped) method.
(ChildProcess.prototype as unknown as { spawn: () => never }).spawn = function spawn(): never {
  refuse("starts a child process");
};
