// The console's own script: loaded from the server (CSP script-src 'self'), no inline code.
// htmx requests carry the session's CSRF token (read from the page, never from storage).
"use strict";
document.addEventListener("htmx:configRequest", function (event) {
  var csrf = document.body.getAttribute("data-csrf");
  if (csrf) { event.detail.headers["X-CSRF-Token"] = csrf; }
});
