// Mermaid's own parser over diagrams given as a JSON list of strings on stdin; prints a JSON list
// with, for each diagram, "" (parsed) or Mermaid's error message. Mermaid expects a browser, so a
// jsdom window stands in for one (parse needs the DOM only for DOMPurify, not for layout).
import { JSDOM } from "jsdom";

const { window } = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = window;
globalThis.document = window.document;
globalThis.DOMParser = window.DOMParser;
globalThis.Element = window.Element;

const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false });

let input = "";
for await (const chunk of process.stdin) input += chunk;
const errors = [];
for (const text of JSON.parse(input)) {
  try {
    await mermaid.parse(text);
    errors.push("");
  } catch (error) {
    errors.push(String(error?.message ?? error) || "unparsable");
  }
}
process.stdout.write(JSON.stringify(errors));
window.close();
process.exit(0); // mermaid leaves timers behind that would keep node alive for seconds
