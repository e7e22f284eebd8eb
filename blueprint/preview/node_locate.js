// Preloaded (`node --require`) only into the second run of a failed Node.js program, the one that
// runs at Node's own stack depth to find the file and line of the error the first run reported
// (node_host.py). The gate reads that error back without colour, so here errors are inspected
// without colour.
//
// Why: the SDK renders every uncaught error with `util.inspect(err, { colors: true })`
// (cmd/run/error.ts defaultErrorMessage), and Node.js releases without the fix of nodejs/node#64011
// (20.20.2 among them) loop without end, and without bound on memory, colouring a frame under
// `node_modules/@scope/` that names no folder after the scope (lib/internal/util/inspect.js
// markNodeModules: the index of the missing separator, -1, becomes where the next search starts).
// The SDK's own frames are such frames (its source maps name `../output.ts`, which becomes
// `node_modules/@pulumi/output.ts`), so whether the locating run ended depended on whether one of
// them was among the error's frames. Colour adds only escape codes, which the gate strips, so the
// located error's text is the same. The first run, which is the preview itself, is left as it is.
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
