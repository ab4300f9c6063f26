// Starts Swagger UI on /docs (an external script: the page's CSP allows no inline script).
// The schema is read from this server; Authorize keeps the token in the page's memory only.
window.ui = SwaggerUIBundle({
  url: new URL("openapi.json", document.baseURI).href,
  dom_id: "#swagger-ui",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
  validatorUrl: null,
  persistAuthorization: false,
  showMutatedRequest: true,
});
