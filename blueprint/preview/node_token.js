// Preloaded (`node --require`) into a Node.js Pulumi program the offline preview runs: every call
// the SDK makes to the engine carries the run's token (private_channel.py). The token is read once
// from the pipe the preview handed over (never a command line or the environment).
//
// The seam is the one thing every @pulumi/pulumi from 3.0 to today shares: the SDK builds its engine
// and monitor clients with `new resrpc.ResourceMonitorClient(address, credentials, options)` and
// `new engrpc.EngineClient(...)`, reading the constructors from the exports of its generated gRPC
// modules (proto/resource_grpc_pb.js, proto/engine_grpc_pb.js) at the moment it connects. Those two
// exports become subclasses that add a gRPC client interceptor (a public @grpc/grpc-js option) to
// whatever options the SDK passes; the options object itself is module-local in most versions
// (runtime/settings.js), so it is left alone.
//
// A failure here is the tool's, never the program's: the preload prints BLUEPRINT_TOOL_FAILURE with
// what it could not do and exits, and the preview reports it as its own failure (exit 2).
"use strict";
const fs = require("fs");
const path = require("path");

const TOOL_FAILURE = "BLUEPRINT_TOOL_FAILURE ";
const TOOL_FAILURE_EXIT = 70; // EX_SOFTWARE: the tool's own failure, before the program's first line

function toolFailure(what) {
    process.stderr.write(TOOL_FAILURE + JSON.stringify(what) + "\n");
    process.exit(TOOL_FAILURE_EXIT);
}

const sdk = process.env.BLUEPRINT_PULUMI_SDK; // the program's own @pulumi/pulumi folder
const fd = Number(process.env.BLUEPRINT_CHANNEL_FD);
delete process.env.BLUEPRINT_CHANNEL_FD;
delete process.env.BLUEPRINT_PULUMI_SDK;

function carryToken(token) {
    const generated = [["resource_grpc_pb.js", "ResourceMonitorClient"], ["engine_grpc_pb.js", "EngineClient"]].map(
        ([file, name]) => [require(path.join(sdk, "proto", file)), name, path.join(sdk, "proto", file)]);
    for (const [module, name, file] of generated) {
        if (typeof module[name] !== "function") {
            throw new Error(`${file} exports no ${name}`);
        }
    }
    const grpc = require(require.resolve("@grpc/grpc-js", { paths: [path.join(sdk, "proto")] }));
    const withToken = (options, nextCall) => new grpc.InterceptingCall(nextCall(options), {
        start(metadata, listener, next) {
            metadata.set("blueprint-run-token", token);
            next(metadata, listener);
        },
    });
    for (const [module, name] of generated) {
        const Client = module[name];
        module[name] = class extends Client {
            constructor(address, credentials, options) {
                const interceptors = [...((options && options.interceptors) || []), withToken];
                super(address, credentials, { ...options, interceptors });
            }
        };
    }
}

try {
    const run = JSON.parse(fs.readFileSync(fd, "utf8"));
    fs.closeSync(fd);
    carryToken(run.engine_token);
} catch (error) {
    toolFailure(`blueprint's Node.js preload (node_token.js) could not give the program's @pulumi/pulumi (${sdk}) `
        + `the run's engine token: ${error && error.stack || error}`);
}

// Stopped by the preview (its --timeout): say which resources the program declared but never
// registered (their registration promise, labelled `resource:<name>[<type>]` by the SDK, still
// pending: an input that never resolved), as python_exec.py does for Python programs. SDKs before
// runtime/state.js (3.4x) keep no such list: nothing is named then.
process.on("SIGTERM", () => {
    const pending = [];
    try {
        const state = require(path.join(sdk, "runtime", "state.js"));
        for (const promise of state.getStore().leakCandidates || []) {
            const found = /^resource:(.*)\[([^\]]*)\]$/.exec(promise._debugCtx || "");
            if (found) {
                pending.push([found[2], found[1]]);
            }
        }
    } catch (error) {
        // an older SDK: the preview says only that the program did not finish
    }
    process.stderr.write(`BLUEPRINT_PENDING ${JSON.stringify(pending)}\n`);
    process.exit(32);
});
