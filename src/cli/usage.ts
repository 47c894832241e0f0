import { MODEL_ALIASES } from "../protocol/models.js";

/** The terminal chat's help texts (docs/clients.md, "Terminal chat", says the same). */

/** The short usage: fits an 80x24 terminal. `--help all` prints {@link USAGE_ALL}. */
export const USAGE = `Usage: x402-chat-agent chat [question] [options]
       x402-chat-agent chat payments [--status LIST] [--since DATE] [--json]

Ask the x402 payment agent: one answer with a question, else interactive
(Ctrl-D or /exit quits, Ctrl-C stops an answer). \`payments\` lists yours.

  --url URL             the service (default $X402_CHAT_URL or 127.0.0.1:3000)
  --token TOKEN         bearer token (default $X402_CHAT_TOKEN)
  --wallet ADDRESS      the wallet that pays (default $X402_CHAT_WALLET)
  --devnet[=ROLE]       the local devnet's service, token and wallet; ROLE is
                        payer (default), payer-low or user
  --key-file PATH       sign approvals here; --yes approves without asking
  --tab USD             sign once for a tab the agent pays from, closed at exit
  --per-transaction USD, --per-request USD, --daily USD, --approval-above USD
    A request's limits apply up to the service's caps and your key's caps; a
    limit left out gets the service's default, within those caps.
  --json                raw events (or payments), one JSON object a line
  -h, --help            this help; --help all: every option and exit code

Exit codes: 0 ok, 1 error, 2 usage, 3 refused or unreachable, 4 limit,
5 balance, 6 payment failed, 7 service down, 8 approval pending, 9 outcome
unclear (do not pay again), 130 interrupted.
`;

/** Every option and exit code (`--help all`; docs/clients.md has the same). */
export const USAGE_ALL = `Usage: x402-chat-agent chat [question] [options]
       x402-chat-agent chat payments [options]
       x402-chat-agent mcp [options]     (MCP on stdio: mcp --help, docs/mcp.md)
       x402-chat-agent keys|pause|resume (the operator's: keys --help,
                                         docs/deploy.md#operating-it)

Chat with the x402 payment agent. With a question it answers once and exits;
without one it is interactive (Ctrl-D or /exit quits, Ctrl-C stops an answer).
\`payments\` lists the payments of your bearer token, newest first; without one,
those made from the --key-file's wallet (or --devnet user's), which signs in.

Options:
  --url URL            the service (default $X402_CHAT_URL, else
                       http://127.0.0.1:3000; with --devnet, its manifest's)
  --wallet ADDRESS     the wallet that pays (default $X402_CHAT_WALLET, or the
                       key file's)
  --token TOKEN        bearer token (default $X402_CHAT_TOKEN)
  --key-file PATH      sign approvals here: an EVM hex private key, or a
                       solana-keygen JSON array
  --yes                approve with the key file without asking
  --tab USD            open a tab of USD at the start: the key file signs its
                       funding once, payments on its network are paid from it
                       without asking, and what is left returns at exit
  --devnet[=ROLE]      the local devnet's manifest ($DEVNET_MANIFEST, else
                       .data/devnet/manifest.json): its service URL, and the
                       wallet of ROLE: payer (default) or payer-low with the
                       dev token, or user (approves itself: use --key-file).
                       \`--devnet ROLE\` also works; a word after --devnet that
                       is close to a role but not one is an error
  --per-transaction USD
  --per-request USD
  --daily USD          spending limits of this chat. A request's limits apply
                       up to the service's caps and your key's caps; a limit
                       left out gets the service's default, within those caps.
  --approval-above USD ask the wallet to approve payments above this
  --networks LIST      allowed networks, CAIP-2, comma-separated
  --services LIST      allowed service origins, comma-separated
  --model NAME         ${MODEL_ALIASES.join(", ")}
  --temperature N      0 to 1
  --max-tokens N       1 to 8000
  --json               the raw events (or payments), one JSON object a line
  --sse                ask for SSE framing (the same events)
  --no-retry           fail on 429 instead of waiting out Retry-After
  -h, --help           the short help; --help all: this one
  --version            the version

Payments (x402-chat-agent chat payments):
  --status LIST        ledger statuses, comma-separated (settled,failed,...)
  --since DATE         made at or after (2026-11-25 or 2026-11-25T08:00Z)
  --until DATE         made before
  --limit N            rows, 1 to 100 (default 20)
  --cursor CURSOR      the next page (printed when there is one)

Exit codes:
  0 stop or payment-complete     5 insufficient-balance
  1 error                        6 payment-failed
  2 usage                        7 service-unavailable
  3 refused before the stream    8 approval-required (left pending)
    (HTTP error, no connection)  9 payment-unclear: sent, outcome not known
  4 limit-exceeded                 yet; do not pay again
                                 130 interrupted
`;
