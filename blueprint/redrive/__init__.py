"""Redrive: "fix the cause, then redrive" as code, the same for the real account and the sandbox.

    parked     what is parked in a queue and why (one reason per message, read from its body)
    move       moving a dead-letter queue's messages back: SQS StartMessageMoveTask, or a
               receive/send/delete move that keeps attributes and FIFO group order
    stream     the Kinesis patterns' Unrecoverable-DLQ back into the Retry-DLQ; metadata-only
               ranges only while the stream still holds them (expired ranges stay, reported)
    dispatch   asynchronous invocations parked by Lambda's on-failure destination, re-run
    map_items  a Distributed Map run's failed items, re-run as a new execution

Every function takes boto3 clients (so a drill passes the emulator's) and an `invoke` callable where
it must run a function; it imports neither the sandbox nor the drill. The `blueprint redrive`
command wires it to the account's clients.
"""
