import { execFile } from "node:child_process";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { launchChromium, watchedPage } from "./chromium";

let gw: TestGateway;
/** The same environment with a puzzle too hard to finish during the test (2^26 expected hashes). */
let hard: TestGateway;
let browser: Browser;
let context: BrowserContext;
let run = 0;

beforeAll(async () => {
  [gw, browser] = await Promise.all([startTestGateway(), launchChromium()]); // TEST_KEY_POW_DIFFICULTY=4
  hard = await startTestGateway({ env: gw.env, config: { TEST_KEY_POW_DIFFICULTY: "26" } });
  context = await browser.newContext({ viewport: { width: 900, height: 900 } });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await hard?.close();
  await gw?.close();
});

/** Each test key request comes from its own network, so the per-network limit never interferes. */
async function openForm(target: TestGateway): Promise<{ page: Page; errors: string[]; foreign: string[] }> {
  const { page, watch } = await watchedPage(context, target.url);
  run += 1;
  await page.setExtraHTTPHeaders({ "X-Forwarded-For": `198.51.100.${run}` });
  const res = await page.goto(`${target.url}/get-test-key`);
  expect(res?.status()).toBe(200);
  const policy = res?.headers()["content-security-policy"] ?? "";
  expect(policy).toContain("worker-src 'self'");
  expect(policy).toContain("script-src 'self'");
  expect(policy).not.toMatch(/https?:|blob:|\*|'unsafe-/);
  await page.fill("#email", `browser-${run}-${Date.now()}@pages.example`);
  await page.fill("#name", "Ada");
  await page.fill("#company", "Pages Ltd");
  await page.fill("#use_case", "Checking sign-up numbers.");
  return { page, errors: watch.errors, foreign: watch.foreignRequests };
}

describe("/get-test-key in Chromium", () => {
  it("solves the puzzle in a worker, shows the progress, receives a key shown once, and copies it", async () => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: gw.url });
    const { page, errors, foreign } = await openForm(gw);
    const workerStarted = page.waitForEvent("worker");
    await page.click("#submit");
    const worker = await workerStarted;
    expect(worker.url()).toBe(`${gw.url}/get-test-key/pow-worker.js`);

    const key = page.locator("#key");
    await key.waitFor({ timeout: 20_000 });
    const shown = (await key.innerText()).trim();
    expect(shown).toMatch(/^svc_test_[A-Za-z0-9]+$/);
    // The key works.
    expect((await gw.http().get("/v1/account").set("Authorization", `Bearer ${shown}`)).status).toBe(200);
    // Progress: attempts against the expected 2^4 = 16.
    await expect(page.locator("#progress").isVisible()).resolves.toBe(true);
    expect(await page.locator("#progress-text").innerText()).toMatch(/^Puzzle solved after \d[\d,]* attempts \(about 16 expected\)\.$/);
    expect(Number(await page.locator("#progress-bar").getAttribute("max"))).toBe(16);
    expect(await page.locator("#progress-bar").evaluate((el) => (el as HTMLProgressElement).value)).toBeGreaterThan(0);

    // The next step: the first call, with this key, pasted into a shell as shown, answers.
    const call = await page.locator("#first-call").innerText();
    expect(call).toContain(`Bearer ${shown}`);
    expect(call.startsWith(`curl -s ${gw.url}/v1/lookup \\\n`)).toBe(true);
    const pasted = await new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile("sh", ["-c", call], { encoding: "utf8", timeout: 15_000 }, (err, stdout) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout })),
    );
    expect(pasted.code).toBe(0);
    const answer = JSON.parse(pasted.stdout) as { livemode: boolean; results: Array<{ input: string; checks: Array<{ service: string; status: string }> }> };
    expect(answer).toMatchObject({ livemode: false, results: [{ input: "+12025550100", checks: [{ service: "number.spam", status: "ok" }, { service: "whatsapp", status: "ok" }] }] });
    // …and where to go from there.
    const links = await page.locator("#next-links a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    expect(links).toEqual(["/docs/test-mode", "/docs", "/docs/going-live"]);
    expect(await page.locator("#live-access").innerText()).toMatch(/reviewed by hand/);

    await page.click("#copy");
    // The Clipboard API answers asynchronously: wait for the page to say it is done.
    await page.locator("#copy-status", { hasText: "Copied to the clipboard." }).waitFor({ timeout: 5_000 });
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(shown);

    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
  }, 60_000);

  it("solves on the page itself when the worker cannot start", async () => {
    const { page, errors } = await openForm(gw);
    await page.route("**/get-test-key/pow-worker.js", (route) => route.fulfill({ status: 404, body: "" }));
    const served: number[] = [];
    page.on("response", (r) => { if (r.url().endsWith("/pow-worker.js")) served.push(r.status()); });
    await page.click("#submit");
    await page.locator("#key").waitFor({ timeout: 20_000 });
    expect(await page.locator("#key").innerText()).toMatch(/^svc_test_/);
    expect(await page.locator("#progress-text").innerText()).toMatch(/^Puzzle solved after/);
    // The worker script was refused, so the page solved it.
    expect(served).toEqual([404]);
    expect(errors).toEqual([]);
  }, 60_000);

  it("keeps the page responsive while it solves: frames and timers keep coming, the count goes up", async () => {
    const { page, errors } = await openForm(hard);
    await page.click("#submit");
    await page.locator("#progress-text").filter({ hasText: "attempts of about 67,108,864 expected" }).waitFor({ timeout: 10_000 });
    // Two seconds of a busy solver, measured on the page's own thread.
    const seen = await page.evaluate(
      () =>
        new Promise<{ frames: number; maxFrameGap: number; maxTimerGap: number; counts: number[] }>((resolve) => {
          const started = performance.now();
          let lastFrame = started;
          let lastTimer = started;
          let frames = 0;
          let maxFrameGap = 0;
          let maxTimerGap = 0;
          const counts: number[] = [];
          const text = document.getElementById("progress-text") as HTMLElement;
          const frame = (now: number) => {
            frames += 1;
            maxFrameGap = Math.max(maxFrameGap, now - lastFrame);
            lastFrame = now;
            if (now - started < 2000) requestAnimationFrame(frame);
          };
          requestAnimationFrame(frame);
          const timer = setInterval(() => {
            const now = performance.now();
            maxTimerGap = Math.max(maxTimerGap, now - lastTimer);
            lastTimer = now;
            counts.push(Number((/([\d,]+) attempts/.exec(text.textContent ?? "")?.[1] ?? "0").replace(/,/g, "")));
            if (now - started >= 2000) {
              clearInterval(timer);
              resolve({ frames, maxFrameGap, maxTimerGap, counts });
            }
          }, 50);
        }),
    );
    // Idle, this page draws 120 frames in the 2 s with gaps of 17 ms; on a CI machine whose two
    // cores also run the other test file's browser, gaps up to ~270 ms were seen. The page this
    // replaced drew none at all: its solver held the thread for the whole solve (minutes at 26 bits).
    expect(seen.frames).toBeGreaterThan(30);
    expect(seen.maxFrameGap).toBeLessThan(1000);
    expect(seen.maxTimerGap).toBeLessThan(1000);
    // The progress moved on several times, and only forwards.
    const distinct = [...new Set(seen.counts)];
    expect(distinct.length).toBeGreaterThan(4);
    expect(distinct).toEqual([...distinct].sort((a, b) => a - b));
    // The form's fields still take input while the solver runs.
    await page.fill("#use_case", "Typing while it solves.");
    await expect(page.inputValue("#use_case")).resolves.toBe("Typing while it solves.");
    expect(await page.locator("#key").count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
