import { useEffect, useState } from "react";

/** The time now, updated every second while `active` (an approval's countdown, its expiry). */
export function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

/** Whether a payment's approval window has passed (the service refuses a signature after it). */
export function approvalExpired(expiresAt: string | undefined, now: number): boolean {
  const at = expiresAt === undefined ? Number.NaN : Date.parse(expiresAt);
  return Number.isFinite(at) && at <= now;
}
