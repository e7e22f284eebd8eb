// Preloaded (`node --require`) into a Node.js policy pack the offline preview runs
// (policy_packs.py): the pack's Analyzer server, which @pulumi/policy's serve() binds to a loopback
// TCP port any local process could call, listens on the run's private channel instead (the Unix
// socket in the run's 0700 folder, private_channel.py), answers only calls carrying the gate's token,
// and answers Configure and ConfigureStack once: the gate configures the pack first, so the program
// under test cannot reconfigure or disable it even if it found the token. The settings are read once
// from the pipe the preview handed over (never a command line or the environment). The pack still
// prints its "port" as its first line, as every Pulumi plugin does.
"use strict";
const crypto = require("crypto");
const fs = require("fs");
const Module = require("module");

const fd = Number(process.env.BLUEPRINT_CHANNEL_FD);
delete process.env.BLUEPRINT_CHANNEL_FD;
delete process.env.BLUEPRINT_POLICY_SDK;
const run = JSON.parse(fs.readFileSync(fd, "utf8"));
fs.closeSync(fd);

const TOKEN_HEADER = "blueprint-run-token";
const REFUSAL = "this channel belongs to one blueprint preview run; a call without the run's token is refused";
const ONCE_REFUSAL = "this method was called once already by the blueprint preview run that owns the channel; " +
    "a second call is refused (the pack is configured once, before the program starts)";
const ONCE = run.reconfigurable ? [] : ["configure", "configureStack"];
const token = Buffer.from(run.token);
const called = new Set();
const guarded = Symbol("blueprint private channel");

function carries(metadata) {
    const sent = Buffer.from(String(metadata.get(TOKEN_HEADER)[0] || ""));
    return sent.length === token.length && crypto.timingSafeEqual(sent, token);
}

function guard(grpc, name, handler) {
    return function (call, callback) {
        if (!carries(call.metadata)) {
            return callback({ code: grpc.status.UNAUTHENTICATED, details: REFUSAL });
        }
        if (ONCE.includes(name)) {
            if (called.has(name)) {
                return callback({ code: grpc.status.FAILED_PRECONDITION, details: ONCE_REFUSAL });
            }
            called.add(name);
        }
        return handler.call(this, call, callback);
    };
}

function privateServer(grpc) {
    const server = grpc.Server.prototype;
    if (server[guarded]) {
        return;
    }
    server[guarded] = true;
    const addService = server.addService, bindAsync = server.bindAsync;
    server.addService = function (service, implementation) {
        const checked = {};
        for (const [name, handler] of Object.entries(implementation)) {
            checked[name] = typeof handler === "function" ? guard(grpc, name, handler) : handler;
        }
        return addService.call(this, service, checked);
    };
    server.bindAsync = function (_port, credentials, callback) {
        return bindAsync.call(this, run.address, credentials, callback);
    };
}

// Every copy of @grpc/grpc-js the pack loads (its own, @pulumi/policy's) gets the private server.
const load = Module._load;
Module._load = function (request) {
    const loaded = load.apply(this, arguments);
    if (request === "@grpc/grpc-js" && loaded && loaded.Server) {
        privateServer(loaded);
    }
    return loaded;
};
