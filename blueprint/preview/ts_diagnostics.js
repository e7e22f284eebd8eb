// Every type-check diagnostic of a TypeScript program, in the form ts-node reports them
// (`file(line,col): error TSnnnn: message`, a chained message's further lines indented), for every
// file its entry point reaches. ts-node type-checks one file as it loads it and stops at the first
// file with an error, so a run shows that file's diagnostics only; `tsc` shows every file's.
//
// node ts_diagnostics.js <tsconfig.json> <root file>...   (run from the program's folder)
// The program's own TypeScript compiler is used (resolved from its folder, else from its
// @pulumi/pulumi, BLUEPRINT_PULUMI_SDK), with the compiler options of its tsconfig.
"use strict";
const path = require("path");

// The diagnostics ts-node ignores unless told otherwise (its `ignoreDiagnostics` default).
const IGNORED_BY_TS_NODE = new Set([6059, 18002, 18003]);

const [tsconfig, ...roots] = process.argv.slice(2);
const searched = [process.cwd(), process.env.BLUEPRINT_PULUMI_SDK].filter(Boolean);
const ts = require(require.resolve("typescript", { paths: searched }));

const read = ts.readConfigFile(tsconfig, ts.sys.readFile);
const options = read.error ? {} : ts.parseJsonConfigFileContent(read.config, ts.sys, path.dirname(tsconfig)).options;
delete options.noCheck; // this run is the type check the program's run made
const program = ts.createProgram(roots, options);
// Each of the program's own files checked as ts-node checks the one it loads (its syntactic and
// semantic diagnostics), never the installed packages' declarations.
const own = program.getSourceFiles().filter((file) => !file.fileName.split(/[\\/]/).includes("node_modules")
    && !program.isSourceFileDefaultLibrary(file));
for (const file of own) {
    for (const diagnostic of [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]) {
        if (diagnostic.category !== ts.DiagnosticCategory.Error || IGNORED_BY_TS_NODE.has(diagnostic.code)) {
            continue;
        }
        const { line, character } = file.getLineAndCharacterOfPosition(diagnostic.start || 0);
        const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n  ");
        process.stdout.write(`${path.resolve(file.fileName)}(${line + 1},${character + 1}): error TS${diagnostic.code}: `
            + `${message}\n`);
    }
}
