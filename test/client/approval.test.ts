import {
  AccountRole,
  address,
  appendTransactionMessageInstruction,
  blockhash,
  compileTransaction,
  createTransactionMessage,
  generateKeyPair,
  generateKeyPairSigner,
  getAddressFromPublicKey,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  verifySignature,
} from "@solana/kit";
import { createWalletClient, custom, http, recoverTypedDataAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import {
  describeApproval,
  type PaymentUpdate,
  signApproval,
  signEvmApproval,
  signSolanaApproval,
  toViemTypedData,
} from "../../src/client/index.js";

// Hardhat's published test keys (never real funds).
const USER_KEY = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";
const OTHER_KEY = "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6";
const user = privateKeyToAccount(USER_KEY);
const payTo = privateKeyToAccount(OTHER_KEY).address;

/** A `p:` update awaiting approval, in the shape docs/protocol.md gives (uint256 as decimal strings). */
function evmUpdate(
  overrides: {
    value?: string;
    to?: string;
    network?: string;
    chainId?: string;
    token?: string;
    primaryType?: string;
    validBefore?: string;
  } = {},
): PaymentUpdate {
  return {
    paymentId: "pay_00000000-0000-4000-8000-000000000001",
    status: "awaiting_approval",
    service: { url: "http://127.0.0.1:4021/weather", name: "Weather now" },
    amount: { atomic: "10000", usd: "0.01", asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3" },
    network: overrides.network ?? "eip155:31337",
    payTo,
    approval: {
      wallet: user.address,
      expiresAt: new Date(Date.now() + 300_000).toISOString(),
      sign: {
        kind: "evm-typed-data",
        method: "eth_signTypedData_v4",
        typedData: {
          domain: {
            name: "USDC",
            version: "2",
            chainId: overrides.chainId ?? "31337",
            verifyingContract: overrides.token ?? "0x5FbDB2315678afecb367f032d93F642f64180aa3",
          },
          types: {
            EIP712Domain: [
              { name: "name", type: "string" },
              { name: "version", type: "string" },
              { name: "chainId", type: "uint256" },
              { name: "verifyingContract", type: "address" },
            ],
            TransferWithAuthorization: [
              { name: "from", type: "address" },
              { name: "to", type: "address" },
              { name: "value", type: "uint256" },
              { name: "validAfter", type: "uint256" },
              { name: "validBefore", type: "uint256" },
              { name: "nonce", type: "bytes32" },
            ],
          },
          primaryType: overrides.primaryType ?? "TransferWithAuthorization",
          message: {
            from: user.address,
            to: overrides.to ?? payTo,
            value: overrides.value ?? "10000",
            validAfter: "0",
            validBefore: overrides.validBefore ?? String(Math.floor(Date.now() / 1000) + 300),
            nonce: `0x${"ab".repeat(32)}`,
          },
        },
      },
    },
  };
}

describe("EVM approval", () => {
  it("converts the wire typed data to viem's shape", () => {
    const update = evmUpdate();
    if (update.approval?.sign.kind !== "evm-typed-data") throw new Error("shape");
    const typed = toViemTypedData(update.approval.sign);
    expect(typed.types.EIP712Domain).toBeUndefined();
    expect(typed.domain.chainId).toBe(31337);
    expect(typed.message.value).toBe(10000n);
    expect(typeof typed.message.validBefore).toBe("bigint");
    expect(typed.message.nonce).toBe(`0x${"ab".repeat(32)}`);
  });

  it("signs with a viem account: the signature recovers the wallet", async () => {
    const update = evmUpdate();
    const answer = await signEvmApproval(update, user);
    expect(answer).toMatchObject({
      paymentId: update.paymentId,
      signature: expect.stringMatching(/^0x[0-9a-f]{130}$/),
    });
    if (!("signature" in answer) || update.approval?.sign.kind !== "evm-typed-data") throw new Error("shape");
    const typed = toViemTypedData(update.approval.sign);
    const recovered = await recoverTypedDataAddress({
      ...(typed as Parameters<typeof recoverTypedDataAddress>[0]),
      signature: answer.signature,
    });
    expect(recovered).toBe(user.address);
  });

  it("signs with a viem wallet client the same way", async () => {
    const update = evmUpdate();
    const client = createWalletClient({ account: user, transport: http("http://127.0.0.1:1") });
    const viaClient = await signEvmApproval(update, client);
    const viaAccount = await signEvmApproval(update, user);
    expect(viaClient).toEqual(viaAccount);
  });

  // Found by a review (h43): the docs' examples sign with signApproval, which checks the quote.
  it("signApproval takes a viem wallet client as signEvmApproval does, and never signs a mismatch", async () => {
    const update = evmUpdate();
    // Its transport reaches nothing: a wallet client with a local account signs without asking a node.
    const client = createWalletClient({ account: user, transport: http("http://127.0.0.1:1") });
    expect(await signApproval({ evm: client }, update)).toEqual(await signEvmApproval(update, user));
    await expect(signApproval({ evm: user }, evmUpdate({ value: "99990000" }))).rejects.toMatchObject({
      mismatch: true,
    });
    const none = { ...update, approval: undefined };
    await expect(signApproval({ evm: user }, none)).rejects.toThrow(/awaits no approval/);
  });

  // Found by a review (h44): a wallet client over a browser wallet on another chain was no longer
  // switched to the payment's chain, and the wallet refused to sign.
  it("signApproval switches a wallet client over a browser wallet to the payment's chain first", async () => {
    let chain = 1; // the wallet is on Ethereum mainnet
    const calls: string[] = [];
    const provider = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        calls.push(method);
        if (method === "eth_chainId") return `0x${chain.toString(16)}`;
        if (method === "wallet_switchEthereumChain") {
          chain = Number.parseInt((params?.[0] as { chainId?: string } | undefined)?.chainId ?? "", 16);
          return null;
        }
        if (method !== "eth_signTypedData_v4") throw new Error(`unexpected ${method}`);
        const data = JSON.parse(String(params?.[1])) as { domain: { chainId: string } };
        // As MetaMask does: typed data for another chain than the active one is refused.
        if (Number(data.domain.chainId) !== chain) throw new Error("chainId must match the active chainId");
        return user.signTypedData(data as never);
      },
    };
    const wallet = createWalletClient({ account: user.address, transport: custom(provider) });
    const update = evmUpdate();
    expect(await signApproval({ evm: wallet }, update)).toEqual(await signEvmApproval(update, user));
    expect(calls).toContain("wallet_switchEthereumChain");
  });

  it("refuses a signer of another wallet, and a Solana request", async () => {
    await expect(signEvmApproval(evmUpdate(), privateKeyToAccount(OTHER_KEY))).rejects.toThrow(
      /must be signed by/,
    );
    const update = evmUpdate();
    const solana = {
      ...update,
      approval: {
        ...update.approval,
        sign: { kind: "solana-transaction", method: "signTransaction", transaction: "AA==" },
      },
    } as PaymentUpdate;
    await expect(signEvmApproval(solana, user)).rejects.toThrow(/not an EVM signature/);
  });

  it("describes what the signature moves, and flags typed data that disagrees with the quote", () => {
    expect(describeApproval(evmUpdate())).toMatchObject({
      chain: "evm",
      amountUsd: "0.01",
      payTo,
      mismatches: [],
    });
    expect(describeApproval(evmUpdate({ value: "99990000" })).mismatches).toEqual([
      expect.stringContaining("signs value 99990000"),
    ]);
    expect(describeApproval(evmUpdate({ to: user.address })).mismatches).toHaveLength(1);
  });

  // A black-box review (h34): only the atomic amount was compared with what is signed, and the
  // CLI asked "$0.01?" for an authorization of $500 whose update said usd "0.01".
  it("flags dollars shown that are not the atomic amount signed", () => {
    const lying = evmUpdate({ value: "500000000" });
    const shown = (usd: string, atomic = "500000000") => ({
      ...lying,
      amount: { atomic, usd, asset: lying.amount?.asset ?? "" },
    });
    expect(describeApproval(shown("0.01")).mismatches).toEqual([
      "shows $0.01, but the amount signed is 500000000 atomic units (6 decimals)",
    ]);
    expect(describeApproval(shown("500")).mismatches).toEqual([]);
    expect(describeApproval(shown("500.00")).mismatches).toEqual([]);
    expect(describeApproval(shown("5e2")).mismatches).toHaveLength(1);
    expect(describeApproval(shown("0.0000001", "0")).mismatches).toContainEqual(
      expect.stringContaining("shows $0.0000001"),
    );
  });

  it("flags typed data for another chain, a token that is not the network's USDC, another struct", () => {
    const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
    const base = { network: "eip155:8453", chainId: "8453" };
    expect(describeApproval(evmUpdate({ ...base, token: BASE_USDC })).mismatches).toEqual([]);
    // Checksum case carries no meaning.
    expect(describeApproval(evmUpdate({ ...base, token: BASE_USDC.toLowerCase() })).mismatches).toEqual([]);
    // Another 6-decimal token on Base, signed as if it were the quote's USDC.
    expect(describeApproval(evmUpdate(base)).mismatches).toEqual([
      "moves the token 0x5FbDB2315678afecb367f032d93F642f64180aa3, not USDC",
    ]);
    // The quote says Base Sepolia (test money); the signature is good on Base (real money).
    expect(
      describeApproval(evmUpdate({ network: "eip155:84532", chainId: "8453", token: BASE_USDC })).mismatches,
    ).toEqual(["signs for chain 8453, the quote says eip155:84532"]);
    // Valid for a year: signed, it could be sent long after the card said the approval lapsed.
    const yearLong = String(Math.floor(Date.now() / 1000) + 365 * 86_400);
    expect(describeApproval(evmUpdate({ validBefore: yearLong })).mismatches).toEqual([
      expect.stringMatching(/^stays valid until .*, after the approval ends/),
    ]);
    expect(describeApproval(evmUpdate({ primaryType: "Permit" })).mismatches).toEqual([
      "signs a Permit, not a USDC transfer authorization",
    ]);
    expect(
      describeApproval(evmUpdate({ network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" })).mismatches,
    ).toEqual(["the quote names no EVM network (solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1)"]);
  });
});

describe("Solana approval", () => {
  /** A transaction as the service sends it: fee payer (the facilitator) and the user must sign; no signatures yet. */
  async function solanaUpdate(wallet: string, feePayer: string): Promise<PaymentUpdate> {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(address(feePayer), m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: blockhash("4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi"), lastValidBlockHeight: 100n },
          m,
        ),
      (m) =>
        appendTransactionMessageInstruction(
          {
            programAddress: address("11111111111111111111111111111111"),
            accounts: [{ address: address(wallet), role: AccountRole.WRITABLE_SIGNER }],
            data: new Uint8Array([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]),
          },
          m,
        ),
    );
    const transaction = getBase64EncodedWireTransaction(compileTransaction(message));
    return {
      paymentId: "pay_00000000-0000-4000-8000-000000000002",
      status: "awaiting_approval",
      service: { url: "http://127.0.0.1:4021/weather" },
      amount: { atomic: "10000", usd: "0.01" },
      network: "solana:devnet",
      approval: {
        wallet,
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
        sign: { kind: "solana-transaction", method: "signTransaction", transaction },
      },
    };
  }

  function decode(base64: string) {
    return getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  }

  it("signs the wallet's slot with a KeyPairSigner and leaves the fee payer's empty", async () => {
    const signer = await generateKeyPairSigner();
    const facilitator = await generateKeyPairSigner();
    const update = await solanaUpdate(signer.address, facilitator.address);
    const answer = await signSolanaApproval(update, signer);
    if (!("transaction" in answer)) throw new Error("shape");
    const signed = decode(answer.transaction);
    const signature = signed.signatures[signer.address];
    expect(signature).toBeTruthy();
    expect(signed.signatures[facilitator.address]).toBeNull();
    expect(await verifySignature(signer.keyPair.publicKey, signature as never, signed.messageBytes)).toBe(
      true,
    );
  });

  it("signs with a raw CryptoKeyPair too", async () => {
    const keyPair = await generateKeyPair();
    const wallet = await getAddressFromPublicKey(keyPair.publicKey);
    const facilitator = await generateKeyPairSigner();
    const answer = await signSolanaApproval(await solanaUpdate(wallet, facilitator.address), keyPair);
    if (!("transaction" in answer)) throw new Error("shape");
    expect(decode(answer.transaction).signatures[wallet]).toBeTruthy();
  });

  it("refuses a signer of another wallet", async () => {
    const [signer, other, facilitator] = await Promise.all([
      generateKeyPairSigner(),
      generateKeyPairSigner(),
      generateKeyPairSigner(),
    ]);
    await expect(
      signSolanaApproval(await solanaUpdate(signer.address, facilitator.address), other),
    ).rejects.toThrow(/must be signed by/);
  });
});
