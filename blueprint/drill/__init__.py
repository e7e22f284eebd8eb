"""The reliability drill: every pattern of a stack end to end in the sandbox under faults.

    report     DrillOptions (what to run), PatternReport and DrillReport (what it found), rendering
    faults     transient AWS faults and crashes injected at the botocore layer
    invoker    a function as the drill sees it: counts, crashes, duplicate deliveries
    patterns   one driver per pattern (what to send, how to drive, what to check)
    progress   the progress line
    runner     run_drill: one sandbox (and process) per pattern

Dependencies run drill -> sandbox -> recording; nothing imports the drill.
"""
