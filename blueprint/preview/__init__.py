"""The offline preview, in parts that depend one way:

    project        the Pulumi project and its stack config, as the Pulumi CLI reads them
    interpreter    the interpreter a Python program runs under, as the Python language host picks it
    wire           property values as the engine passes them to a program, a provider, an analyzer
    provider/      the provider behind Check/Create/Read/Invoke (provider.contract.Provider): auto-names,
                   ids and ARNs, typed outputs from the SDK's declarations read from source, data sources
    engine         the engine's resource registry (OfflineEngine), which answers the program
    engine_services  the engine's gRPC services (ResourceMonitor, Engine), over a socket or in-process
    language_host  the one interface a program is run through, and what every host shares
    python_host    start a Python program as the language host does (python_exec.py runs in it)
    node_host      start a Node.js/TypeScript program as the Node.js language host does
    callbacks, stack_references  transforms called back into the program; StackReferences read offline
    private_channel, process_tree, plugin_process  the run's private channels, process groups, plugins
    recording      run a program against the engine and record every resource (RecordedStack)
    policy_config  read and check a policy pack config file (--policy-pack-config)
    analyzer       start the real policy pack and put a recording through its gRPC Analyzer
    run            `run_preview` (recording -> analyzer) and the JSON rendering
    redaction      what the reports may show of a value: secrets as [secret], unknowns as [unknown]
    failure        a run that could not judge the program, as every report tells it (exit 2)
    fix_language   the pack's Python fix snippets written in the program's language
    managed_policies  the AWS managed policies a stack attaches that the pack cannot judge
    reports        the reports: text and JSON, markdown, SARIF (reports/)
    suppressions   findings accepted with a reason, in the program's source or the stack file
    aws_imports, program_speed  speed patches applied in the program's own process

Public API: `integration_blueprint.preview.run.run_preview`, `recording.record_program`,
`analyzer.PolicyAnalyzer`.
"""
