// Passkeys in the console (issue 31): the one script the console runs, on the pages with a passkey
// form only. A form marked `data-passkey="register"` or `"authenticate"` carries the server's
// WebAuthn options (JSON, in `data-options`); on submit, the browser's WebAuthn ceremony runs
// (@simplewebauthn/browser, served from this origin as webauthn.js) and the form is sent with its
// answer in the hidden `response` field, with the form's CSRF token, like any other console form.
// No inline script anywhere: the CSP allows this origin's files and nothing else.
(() => {
  const webauthn = globalThis.SimpleWebAuthnBrowser;

  function showError(form, text) {
    const box = form.querySelector("[data-passkey-error]");
    if (!box) return;
    box.textContent = text;
    box.hidden = false;
  }

  function why(error) {
    if (error && error.name === "NotAllowedError")
      return "The passkey request was cancelled or timed out. Try again.";
    if (error && error.name === "InvalidStateError") return "This passkey is registered already.";
    return "Your browser could not use a passkey here.";
  }

  for (const form of document.querySelectorAll("form[data-passkey]")) {
    const button = form.querySelector("button[type=submit]");
    if (!webauthn?.browserSupportsWebAuthn()) {
      showError(form, "This browser does not support passkeys.");
      if (button) button.disabled = true;
      continue;
    }
    let running = false;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (running || !form.reportValidity()) return;
      running = true;
      if (button) button.disabled = true;
      try {
        const optionsJSON = JSON.parse(form.dataset.options);
        const answer =
          form.dataset.passkey === "register"
            ? await webauthn.startRegistration({ optionsJSON })
            : await webauthn.startAuthentication({ optionsJSON });
        form.querySelector("input[name=response]").value = JSON.stringify(answer);
        form.submit();
      } catch (error) {
        showError(form, why(error));
        running = false;
        if (button) button.disabled = false;
      }
    });
  }
})();
