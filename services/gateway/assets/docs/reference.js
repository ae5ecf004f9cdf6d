// Mounts the API reference (Scalar's standalone bundle, served by the gateway itself) on
// the one OpenAPI document. Everything that would reach a third party is switched off:
// fonts (system fonts instead), telemetry, the AI agent and MCP generator, the developer
// toolbar and the request client (it would send keys through Scalar's proxy), so the
// page's CSP names no host but our own.
(function () {
  "use strict";
  // Not id="api-reference" nor data-url: the bundle would mount a second, default reference there.
  var mount = document.getElementById("reference");
  // The public sandbox key (PUBLIC_SANDBOX_KEY of @svc/domain, published on purpose; a test
  // checks the attribute equals it), prefilled for the bearer scheme of the document.
  var sandboxKey = mount.getAttribute("data-sandbox-key");
  window.Scalar.createApiReference(mount, {
    url: mount.getAttribute("data-document"),
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: "never",
    hideClientButton: true,
    hideTestRequestButton: true,
    documentDownloadType: "json",
    defaultOpenAllTags: true,
    showOperationId: true,
    // Only our own samples (x-codeSamples: curl, TypeScript SDK, CLI, MCP tool, made from the
    // recorded examples): Scalar's generic clients would send placeholder bodies.
    hiddenClients: true,
    // Scalar shows a known key in the samples as "·····"; the prefilled one is public and a
    // sample is meant to be pasted, so it is shown as it is (also a key the reader typed in,
    // on their own screen).
    customCss: ".scalar-app .credential .credential-value{color:inherit;font-size:inherit}.scalar-app .credential:after{content:none}",
    authentication: {
      preferredSecurityScheme: "bearerKey",
      securitySchemes: { bearerKey: { token: sandboxKey || "" } },
    },
    // Stable anchors: #<operationId> for operations, #webhook-<event> for events.
    generateOperationSlug: function (op) { return op.operationId || (op.method + "-" + op.path); },
    generateWebhookSlug: function (hook) { return "webhook-" + hook.name; },
  });
})();
