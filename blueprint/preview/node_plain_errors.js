// Preloaded (`node --require`) into every run of a Node.js program whose errors carry stack frames:
// the second run of a failed program, which runs at Node's own stack depth to find the file and line
// of the error the first run reported (node_host.py), and any run at a depth the team set
// (`--stack-trace-limit` in nodeargs or NODE_OPTIONS). Errors are inspected without colour there.
//
// Why: the SDK renders every uncaught error with `util.inspect(err, { colors: true })`
// (cmd/run/error.ts defaultErrorMessage), and Node.js releases without the fix of nodejs/node#64011
// (20.20.2 among them) loop without end, and without bound on memory, colouring a frame under
// `node_modules/@scope/` that names no folder after the scope (lib/internal/util/inspect.js
// markNodeModules: the index of the missing separator, -1, becomes where the next search starts).
// The SDK's own frames are such frames (its source maps name `../output.ts`, which becomes
// `node_modules/@pulumi/output.ts`), so whether such a run ended depended on whether one of them was
// among the error's frames. Colour adds only escape codes, which the gate strips from what it
// reports, so the error's text is the same. A run without frames (the first run, at
// --stack-trace-limit=0) cannot meet such a frame and is left as it is.
"use strict";
const util = require("util");

const inspect = util.inspect;

function inspectWithoutColour(value, options, ...legacy) {
    if (util.types.isNativeError(value) || value instanceof Error) {
        if (options !== null && typeof options === "object") {
            options = { ...options, colors: false };
        } else if (legacy.length >= 2) { // inspect(value, showHidden, depth, colors)
            legacy[1] = false;
        }
    }
    return inspect.call(this, value, options, ...legacy);
}

// util.inspect's own properties (custom, defaultOptions, colors, styles) stay the same objects.
for (const key of Reflect.ownKeys(inspect)) {
    if (!["length", "name", "prototype"].includes(key)) {
        Object.defineProperty(inspectWithoutColour, key, Object.getOwnPropertyDescriptor(inspect, key));
    }
}
util.inspect = inspectWithoutColour;
