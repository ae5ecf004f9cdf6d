import { Piscina } from "piscina";
import { runIntake, type Intake, type IntakeInput } from "./intake-task";

/**
 * Entry point of an intake thread (piscina loads the built file). Settings come
 * once, as workerData; results travel back with their buffers transferred, not copied.
 */
const { cacheSecret } = Piscina.workerData as { cacheSecret: string };

export default function intake(input: IntakeInput): unknown {
  const result = runIntake(input, cacheSecret);
  if (!result.ok) return result;
  const buffers = [result.rows?.text, result.cacheKeys?.number, result.cacheKeys?.email].filter((b): b is Uint8Array => b !== undefined && b.byteLength > 0);
  if (buffers.length === 0) return result;
  return Piscina.move({ [Piscina.transferableSymbol]: buffers.map((b) => b.buffer), [Piscina.valueSymbol]: result } as unknown as Parameters<typeof Piscina.move>[0]);
}

export type { Intake };
