import { ERROR_GUIDANCE } from "@svc/contract";
import { ERRORS_CSP, REFERENCE_CSP, TEST_KEY_CSP, WORKER_CSP, renderInlineCode } from "./pages";

describe("renderInlineCode", () => {
  it("turns each pair of backticks into <code> and escapes everything", () => {
    expect(renderInlineCode("Pass `next_cursor` unchanged.")).toBe("Pass <code>next_cursor</code> unchanged.");
    expect(renderInlineCode("`a` and `b`")).toBe("<code>a</code> and <code>b</code>");
    expect(renderInlineCode(`<b>"x" & 'y'</b> \`<i>\``)).toBe("&#60;b&#62;&#34;x&#34; &#38; &#39;y&#39;&#60;/b&#62; <code>&#60;i&#62;</code>");
  });

  it("leaves an unpaired backtick as it is", () => {
    expect(renderInlineCode("a `b` c `d")).toBe("a <code>b</code> c `d");
    expect(renderInlineCode("no code")).toBe("no code");
  });

  it("leaves no backtick in any guidance text of the contract", () => {
    for (const text of Object.values(ERROR_GUIDANCE)) expect(renderInlineCode(text)).not.toContain("`");
  });
});

describe("page policies", () => {
  it.each([
    ["reference", REFERENCE_CSP],
    ["errors", ERRORS_CSP],
    ["test key", TEST_KEY_CSP],
    ["worker", WORKER_CSP],
  ])("%s names no host and no wildcard", (_, policy) => {
    expect(policy).toContain("default-src 'none'");
    expect(policy).not.toMatch(/https?:|\*|blob:|'unsafe-eval'/);
  });

  it("scripts come only from the gateway; only the reference needs inline styles", () => {
    for (const policy of [REFERENCE_CSP, TEST_KEY_CSP, WORKER_CSP]) expect(policy).toContain("script-src 'self'");
    expect(ERRORS_CSP).toContain("script-src 'none'");
    expect(TEST_KEY_CSP).toContain("worker-src 'self'");
    expect(TEST_KEY_CSP).not.toContain("unsafe-inline");
    expect(ERRORS_CSP).not.toContain("unsafe-inline");
  });
});
