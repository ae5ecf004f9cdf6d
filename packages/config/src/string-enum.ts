import { Type, type TUnsafe } from "@sinclair/typebox";

/**
 * A string limited to `values`, as a plain JSON Schema `enum` (one clear error,
 * "must be equal to one of the allowed values: a, b", instead of one per literal).
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: { default?: T[number]; description?: string } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}
