// The console's HTML tag (src/console/html.ts): every value is escaped, only markup made by the tag
// passes through, so a partner's text (a client_reference, a name) can never become markup.
import assert from "node:assert/strict";
import { test } from "node:test";
import { html, trusted } from "../src/console/html.ts";

test("values are escaped in text and in attributes; nested html and arrays are not escaped twice", () => {
  const reference = `<img src=x onerror="alert('1')">&\``;
  const page = html`<td title="${reference}">${reference}</td>${[html`<b>${"a<b"}</b>`, "c&d"]}`;
  assert.equal(
    page.text,
    '<td title="&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;&#96;">' +
      "&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;&#96;</td><b>a&lt;b</b>c&amp;d",
  );
});

test("false, null and undefined render nothing; numbers render as text; trusted() is the only way around", () => {
  assert.equal(html`${false}${null}${undefined}${0}${12.5}`.text, "012.5");
  assert.equal(html`${trusted("<hr>")}${"<hr>"}`.text, "<hr>&lt;hr&gt;");
  // A string that looks like the tag's output is still a string.
  assert.equal(html`${{ text: "<b>" } as unknown as string}`.text, "[object Object]");
});
