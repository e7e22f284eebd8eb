"""The reliability drill: every pattern of a stack end to end in the sandbox under faults.

    report     DrillOptions (what to run), PatternReport and DrillReport (what it found), rendering
    invoker    a function as the drill sees it: counts, planned crashes, duplicate deliveries (the
               faults themselves are the sandbox's, sandbox/faults.py, given through its one seam)
    patterns   one driver per pattern (what to send, how to drive, what to check); team_code: the
               drivers for a team's own handlers
    effects    judging code the drill did not write by the writes it makes per record
    hot_key    the per-key state bound of a pattern's hot key
    cost       what the handlers' AWS calls would cost per million records
    progress   the progress line
    runner     run_drill: one sandbox (and process) per pattern

Dependencies run drill -> sandbox -> recording; nothing imports the drill.
"""
