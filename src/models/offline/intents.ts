import type { DiscoveredService, ServiceParam } from "../../tools/contract.js";

/**
 * What the user asks for, read from the last user message with keyword rules (first match wins):
 *
 * | Intent     | Examples                                                                     |
 * |------------|------------------------------------------------------------------------------|
 * | `batch`    | "batch these", "several services in one transaction", "bundle"               |
 * | `help`     | "what can you do", "what is x402", "who are you", "help"                     |
 * | `budget`   | "what is my budget", "how much have I spent", "my limits", "balance"         |
 * | `discover` | "what services", "find services", "discover", "what can I buy"               |
 * | `cost`     | "how much is the weather", "what would X cost", "price of the weather service" |
 * | `get`      | "what's the weather in Paris", "get me the BTC price", "latest news about AI", "buy the premium report" |
 * | `get`      | a follow-up naming only a topic: "and the weather in Tokyo?", "bitcoin?"     |
 * | `get`      | "the price of BTC" (a crypto asset's price is the data asked for, not a cost) |
 * | `help`     | anything else: greetings, thanks                                             |
 */
export type Intent = "batch" | "budget" | "discover" | "cost" | "get" | "help";

const RULES: ReadonlyArray<readonly [Intent, RegExp]> = [
  [
    "batch",
    /\b(batch(es|ing)?|bundle[sd]?|(several|multiple|many) services (in|with) (one|a single)|in (one|a single) (transaction|payment))\b/,
  ],
  [
    "help",
    /(\bwho are you|\bwhat are you\b|\bwhat can you do|\bhow (do|does) (you|it|this|x402) work|\bwhat is x402|^\s*help\b)/,
  ],
  [
    "budget",
    /\b(budget|spent|spending|spend (today|so far)|limits?|balances?|allowance|remaining|left to spend|how much (can|may) i spend)\b/,
  ],
  [
    "discover",
    /\b(discover|what (x402 )?services|which services|(list|show|find|search)( me)?( for| all| the| some| available| x402)* services|available services|what can i (buy|pay for|get|purchase)|what do you (offer|sell))\b/,
  ],
  [
    "cost",
    // "the price of BTC" asks for the data (the crypto price service), not for what a service costs.
    /\b(how much|what (would|does|will|did) .*\bcost|price of(?!( the)? (btc|bitcoin|eth|ether|ethereum|sol|solana|usdc|doge|dogecoin)\b)|cost of|costs?\b|quote|pricing|how expensive)\b/,
  ],
  [
    "get",
    /\b(get|buy|fetch|purchase|pay for|order|look ?up|check|give me|show me|tell me|i (want|need)|latest|current|what('s| is| are)|whats)\b/,
  ],
];

/** Classify the last user message. Case-insensitive; deterministic. */
export function classify(text: string): Intent {
  const lower = text.toLowerCase();
  for (const [intent, pattern] of RULES) {
    if (pattern.test(lower)) return intent;
  }
  // A follow-up that only names what it wants ("and the weather in Tokyo?") asks for it.
  const words = keywords(lower);
  if (TOPICS.some((topic) => words.some((w) => topic.words.includes(w)))) return "get";
  return "help";
}

/** One paid ask inside a message that holds several: its own words and its intent. */
export interface Ask {
  text: string;
  intent: "cost" | "get";
}

/** Where one ask ends and the next begins: "and", "also", "plus", "as well as", ",", ";", "?" or "." between sentences. */
const ASK_BREAK = /\s*(?:\band\b|\balso\b|\bplus\b|\bas well as\b|[,;]|[?.!](?:\s+|$))\s*/i;

/**
 * Split a message into its paid asks: "What's the weather in Paris and the price of BTC?" ->
 * [get "What's the weather in Paris", get "the price of BTC?"]. A piece that names no topic, or the
 * same topic as the ask before it ("the weather in Paris and London"), stays part of that ask; a
 * piece that is not a cost or get question (budget, discovery...) too. Undefined when the message
 * holds fewer than two asks, or is not a cost or get question as a whole: it is then one request.
 */
export function splitAsks(text: string): Ask[] | undefined {
  const whole = classify(text);
  if (whole !== "get" && whole !== "cost") return undefined;
  const asks: Array<Ask & { topic: string }> = [];
  for (const piece of text.split(ASK_BREAK).filter((p) => p.trim() !== "")) {
    const words = keywords(piece);
    const topic = TOPICS.find((t) => words.some((w) => t.words.includes(w)))?.query;
    const intent = classify(piece);
    const previous = asks.at(-1);
    if (topic !== undefined && (intent === "get" || intent === "cost") && topic !== previous?.topic) {
      asks.push({ text: piece, intent, topic });
    } else if (previous) {
      previous.text = `${previous.text} and ${piece}`;
    }
  }
  if (asks.length < 2) return undefined;
  return asks.map(({ text: askText, intent }) => ({ text: askText.trim(), intent }));
}

/** Topic words and their synonyms: the discovery query and the service match both use them. */
const TOPICS: ReadonlyArray<{ query: string; words: readonly string[] }> = [
  { query: "weather", words: ["weather", "forecast", "temperature", "rain", "sunny", "climate"] },
  {
    query: "crypto price",
    words: ["crypto", "btc", "bitcoin", "eth", "ether", "ethereum", "sol", "solana", "token", "coin"],
  },
  { query: "news", words: ["news", "headlines", "headline", "articles", "stories"] },
  { query: "report", words: ["report", "premium", "analysis", "research"] },
];

const SYMBOLS: Readonly<Record<string, string>> = {
  btc: "BTC",
  bitcoin: "BTC",
  eth: "ETH",
  ether: "ETH",
  ethereum: "ETH",
  sol: "SOL",
  solana: "SOL",
  usdc: "USDC",
  doge: "DOGE",
  dogecoin: "DOGE",
};

const STOP_WORDS = new Set(
  (
    "a an the of for in on at to me my i you your is are was what whats what's how much does do would will " +
    "can could please get buy fetch purchase pay order give show tell find want need check look up lookup " +
    "latest current about with and or it this that some any service services cost costs price today now " +
    "right be there from by which available list all offer offered exist exists have has"
  ).split(" "),
);

/** Lowercase content words of a text, without stop words. */
export function keywords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP_WORDS.has(w));
}

/** What to ask discovery for: the topic named in the text, else its content words (at most 5). */
export function discoveryQuery(text: string): string | undefined {
  const words = keywords(text);
  for (const topic of TOPICS) {
    if (words.some((w) => topic.words.includes(w))) return topic.query;
  }
  const query = words.slice(0, 5).join(" ");
  return query === "" ? undefined : query;
}

/** Candidate values for a service parameter, pulled from the user's words. */
export interface Subjects {
  /** "in Paris" -> Paris */
  place?: string;
  /** "BTC", "bitcoin", "eth" -> BTC, ETH */
  symbol?: string;
  /** "about AI" -> AI */
  topic?: string;
  /** A quoted phrase: "\"solar panels\"" -> solar panels */
  quoted?: string;
}

const TRAILING_NOISE = /\s+(today|tomorrow|tonight|now|right now|please|this week|currently)$/i;

/** Extract the subjects a request names. Deterministic; returns only what it finds. */
export function extractSubjects(text: string): Subjects {
  const subjects: Subjects = {};
  const quoted = /["“']([^"”']{1,100})["”']/.exec(text)?.[1]?.trim();
  if (quoted) subjects.quoted = quoted;

  const place = /\b(?:in|for|at)\s+([\p{L}][\p{L}.'-]*(?:\s+[\p{L}][\p{L}.'-]*){0,3})/iu.exec(text)?.[1];
  if (place) {
    const cleaned = placeWords(cleanPhrase(place));
    if (cleaned) subjects.place = cleaned;
  }

  const symbolWord = (text.toLowerCase().match(/[a-z]+/g) ?? []).find((w) => Object.hasOwn(SYMBOLS, w));
  const symbol = symbolWord
    ? SYMBOLS[symbolWord]
    : /\b([A-Z]{2,5})\b(?=\s+(price|token|coin))/.exec(text)?.[1];
  if (symbol) subjects.symbol = symbol;

  const topic = /\b(?:about|on|regarding|concerning)\s+([^?.!,;]{1,80})/i.exec(text)?.[1];
  if (topic) {
    const cleaned = cleanPhrase(topic);
    if (cleaned) subjects.topic = cleaned;
  }
  return subjects;
}

/**
 * The place inside "in ...": capitalised words when the user capitalised ("Paris cost" -> Paris,
 * "New York" -> New York), else words up to the first stop word ("paris cost" -> paris).
 */
function placeWords(phrase: string): string {
  const words = phrase.split(/\s+/).filter(Boolean);
  const first = words[0];
  if (!first || ["the", "a", "an", "me", "my", "it", "this", "that"].includes(first.toLowerCase())) return "";
  const capitalised = /^\p{Lu}/u;
  const kept = capitalised.test(first)
    ? takeWhile(words, (w) => capitalised.test(w))
    : takeWhile(words, (w) => !STOP_WORDS.has(w.toLowerCase()));
  return kept.join(" ");
}

function takeWhile<T>(items: readonly T[], keep: (item: T) => boolean): T[] {
  const out: T[] = [];
  for (const item of items) {
    if (!keep(item)) break;
    out.push(item);
  }
  return out;
}

function cleanPhrase(phrase: string): string {
  let result = phrase
    .trim()
    .replace(/[?.!,;:]+$/, "")
    .replace(/^["“'](.*)["”']$/, "$1");
  while (TRAILING_NOISE.test(result)) result = result.replace(TRAILING_NOISE, "");
  return result.trim();
}

/** Which subject a parameter takes, by its name and description. */
export function subjectFor(param: ServiceParam, subjects: Subjects): string | undefined {
  const about = `${param.name} ${param.description ?? ""}`.toLowerCase();
  if (/city|location|place|town|country|region|where/.test(about)) return subjects.place ?? subjects.quoted;
  if (/symbol|ticker|coin|asset|token|pair|currency/.test(about)) return subjects.symbol ?? subjects.quoted;
  if (/topic|query|subject|keyword|search|term|q\b/.test(about)) {
    return subjects.topic ?? subjects.quoted ?? subjects.place;
  }
  return subjects.quoted ?? subjects.place ?? subjects.symbol ?? subjects.topic;
}

/** The parameters to send: the first required string parameter gets the subject the user named. */
export type ParamFill = { ok: true; values: Record<string, string> } | { ok: false; missing: ServiceParam };

export function fillParams(service: DiscoveredService, text: string): ParamFill {
  const subjects = extractSubjects(text);
  const values: Record<string, string> = {};
  const target =
    service.params.find((p) => p.required && p.type === "string") ??
    service.params.find((p) => p.type === "string");
  if (target) {
    const value = subjectFor(target, subjects);
    if (value !== undefined) values[target.name] = value;
  }
  for (const param of service.params) {
    if (param.required && values[param.name] === undefined) return { ok: false, missing: param };
  }
  return { ok: true, values };
}

/**
 * The service that best matches the request: most shared words (topic synonyms count) between the
 * request and the service's name, description and URL. Ties go to the earlier (discovery order).
 * Undefined when nothing shares a word.
 */
export function bestService(
  services: readonly DiscoveredService[],
  text: string,
): DiscoveredService | undefined {
  const wanted = new Set(keywords(text));
  for (const topic of TOPICS) {
    if (topic.words.some((w) => wanted.has(w))) for (const w of topic.words) wanted.add(w);
  }
  let best: DiscoveredService | undefined;
  let bestScore = 0;
  for (const service of services) {
    const own = new Set(keywords(`${service.name} ${service.description} ${pathWords(service.url)}`));
    let score = 0;
    for (const word of own) if (wanted.has(word)) score++;
    if (score > bestScore) {
      best = service;
      bestScore = score;
    }
  }
  return best;
}

function pathWords(url: string): string {
  try {
    return new URL(url).pathname.replace(/[/_-]+/g, " ");
  } catch {
    return "";
  }
}
