/**
 * A lenient reading of the contract's JSON Schemas, for responses: it checks what
 * a client relies on (required fields present, JSON types, nesting) and ignores
 * what the API may change within v1 without notice (unknown fields, new enum
 * values, formats, id patterns). Only `object` discriminators are compared exactly.
 * An interpreter rather than compiled code: no `eval`, so it runs under strict CSPs.
 */
type Schema = { [key: string]: unknown };

export class ShapeChecker {
  readonly #refs = new Map<string, Schema>();

  constructor(named: readonly unknown[]) {
    for (const s of named) {
      const id = (s as Schema).$id;
      if (typeof id === "string") this.#refs.set(id, s as Schema);
    }
  }

  /** The path of the first mismatch (`results[0].checks`), or null when `value` fits. */
  check(schema: unknown, value: unknown): string | null {
    return this.#check(schema as Schema, value, "", "");
  }

  /** Every `$ref` reachable from `schema` that this checker cannot resolve (for tests). */
  unresolved(schema: unknown, seen: Set<unknown> = new Set()): string[] {
    if (!schema || typeof schema !== "object" || seen.has(schema)) return [];
    seen.add(schema);
    const out: string[] = [];
    const s = schema as Schema;
    if (typeof s.$ref === "string") {
      const target = this.#refs.get(s.$ref);
      if (!target) out.push(s.$ref);
      else out.push(...this.unresolved(target, seen));
    }
    for (const v of Object.values(s)) {
      if (Array.isArray(v)) for (const item of v) out.push(...this.unresolved(item, seen));
      else if (v && typeof v === "object") out.push(...this.unresolved(v, seen));
    }
    return out;
  }

  #check(s: Schema, v: unknown, path: string, key: string): string | null {
    if (typeof s.$ref === "string") {
      const target = this.#refs.get(s.$ref);
      return target ? this.#check(target, v, path, key) : null;
    }
    if (Array.isArray(s.anyOf)) {
      for (const alt of s.anyOf as Schema[]) if (this.#check(alt, v, path, key) === null) return null;
      return path || "(root)";
    }
    if (key === "object" && s.const !== undefined && v !== s.const) return path;
    switch (s.type) {
      case "object": {
        if (v === null || typeof v !== "object" || Array.isArray(v)) return path || "(root)";
        const obj = v as Record<string, unknown>;
        for (const name of (s.required as string[] | undefined) ?? []) if (obj[name] === undefined) return join(path, name);
        const props = s.properties as Record<string, Schema> | undefined;
        if (props) {
          for (const name in props) {
            const pv = obj[name];
            if (pv === undefined) continue;
            const bad = this.#check(props[name] as Schema, pv, join(path, name), name);
            if (bad !== null) return bad;
          }
        }
        return null;
      }
      case "array": {
        if (!Array.isArray(v)) return path || "(root)";
        const items = s.items as Schema | undefined;
        if (items && typeof items === "object") {
          for (let i = 0; i < v.length; i += 1) {
            const bad = this.#check(items, v[i], `${path}[${i}]`, "");
            if (bad !== null) return bad;
          }
        }
        return null;
      }
      case "string":
        return typeof v === "string" ? null : path || "(root)";
      case "integer":
      case "number":
        return typeof v === "number" && Number.isFinite(v) ? null : path || "(root)";
      case "boolean":
        return typeof v === "boolean" ? null : path || "(root)";
      case "null":
        return v === null ? null : path || "(root)";
      default:
        return null;
    }
  }
}

const join = (path: string, name: string) => (path ? `${path}.${name}` : name);
