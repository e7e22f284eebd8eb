"""The local sandbox: a recorded stack realized in an AWS emulator, its handlers run in-process.

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
    shortcuts       speed changes to moto and botocore, moto_fixes: fixes to moto (both registered in
                    integration_blueprint.patches with the versions they were verified on)

It depends on the recording (integration_blueprint.preview.recording) and nothing above it.
"""
