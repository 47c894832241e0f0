/** A configuration that cannot be used: the message names each bad variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}
