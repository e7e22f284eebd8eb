"""The local sandbox: a recorded stack realized in an AWS emulator; the blueprint's handlers run
in-process, a team's in execution environments of their own.

    errors          SandboxError, FunctionCrashed (importable without boto3)
    emulator        moto answering every AWS call of the process, and clients for it
    realization     Sandbox: queues, streams, tables, functions, schedules from the recording
    sqs_esm         Lambda's SQS event source mapping semantics
    kinesis_esm     Lambda's Kinesis event source mapping semantics
    lambda_context  a Lambda-like context object
    interception    the one seam for a caller: function wrappers, a request interceptor, the journal
                    of every invocation and its successful AWS calls
    faults          throttles, outages and crashes injected into functions' calls (an interceptor)
    async_invoke    Lambda's asynchronous invocation (retries, event age, on-failure record)
    execution_environment  a team's function in a process of its own, as Lambda runs it (its archive,
                    layers, environment, /tmp, timeout and memory; its AWS calls made here through a
                    pipe); lambda_bootstrap: the first code of that process (standard library only)
    shortcuts       speed changes to moto and botocore, moto_fixes: fixes to moto (both registered in
                    integration_blueprint.core.patches with the versions they were verified on)

It depends on the recording (integration_blueprint.preview.recording) and nothing above it.
"""
