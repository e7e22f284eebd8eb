"""A sandbox function's container: its handler module is loaded once per container, however many
invocations arrive at once (a Distributed Map runs its items in parallel)."""

import sys
import threading

from integration_blueprint.sandbox.realization import LocalFunction

SLOW_HANDLER = '''
import time
import load_log
load_log.loads.append(1)
time.sleep(0.05)  # a cold start long enough for every concurrent first invocation to arrive


def handler(event, context):
    return event
'''


def test_concurrent_first_invocations_load_the_handler_module_once(tmp_path, monkeypatch):
    (tmp_path / "load_log.py").write_text("loads = []\n")
    (tmp_path / "slow_handler.py").write_text(SLOW_HANDLER)
    monkeypatch.syspath_prepend(str(tmp_path))
    import load_log

    function = LocalFunction(name="enricher", arn="arn:aws:lambda:eu-west-1:123456789012:function:enricher",
                             handler="slow_handler.handler", environment={}, timeout=30, region="eu-west-1")
    barrier = threading.Barrier(8)
    results = []

    def invoke(i):
        barrier.wait()
        results.append(function({"item": i}))

    threads = [threading.Thread(target=invoke, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(r["item"] for r in results) == list(range(8))
    assert len(load_log.loads) == 1
    function.reset()  # the container died: the next invocation is a cold start
    function({"item": 8})
    assert len(load_log.loads) == 2
    sys.modules.pop("load_log", None)
