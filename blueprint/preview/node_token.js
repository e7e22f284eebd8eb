// Preloaded (`node --require`) into a Node.js Pulumi program the offline preview runs: every call
// the SDK makes to the engine carries the run's token (private_channel.py). The token is read once
// from the pipe the preview handed over (never a command line or the environment); a gRPC client
// interceptor adds it to the options the SDK builds its engine and monitor clients with.
"use strict";
const fs = require("fs");
const path = require("path");

const fd = Number(process.env.BLUEPRINT_CHANNEL_FD);
const sdk = process.env.BLUEPRINT_PULUMI_SDK; // the program's own @pulumi/pulumi folder
delete process.env.BLUEPRINT_CHANNEL_FD;
delete process.env.BLUEPRINT_PULUMI_SDK;
const run = JSON.parse(fs.readFileSync(fd, "utf8"));
fs.closeSync(fd);

const settings = require(path.join(sdk, "runtime", "settings.js"));
const grpc = require(require.resolve("@grpc/grpc-js", { paths: [sdk] }));
const withToken = (options, nextCall) => new grpc.InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
        metadata.set("blueprint-run-token", run.engine_token);
        next(metadata, listener);
    },
});
// grpcClientOptions since @pulumi/pulumi 3.2xx; older SDKs give their clients grpcChannelOptions.
const options = settings.grpcClientOptions || settings.grpcChannelOptions;
options.interceptors = [...(options.interceptors || []), withToken];

// Stopped by the preview (its --timeout): say which resources the program declared but never
// registered (their registration promise, labelled `resource:<name>[<type>]` by the SDK, still
// pending: an input that never resolved), as python_exec.py does for Python programs.
process.on("SIGTERM", () => {
    const state = require(path.join(sdk, "runtime", "state.js"));
    const pending = [];
    for (const promise of state.getStore().leakCandidates || []) {
        const found = /^resource:(.*)\[([^\]]*)\]$/.exec(promise._debugCtx || "");
        if (found) {
            pending.push([found[2], found[1]]);
        }
    }
    process.stderr.write(`BLUEPRINT_PENDING ${JSON.stringify(pending)}\n`);
    process.exit(32);
});
