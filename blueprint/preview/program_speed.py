"""What the program's process need not pay for in an offline preview, as registered speed patches
(integration_blueprint.core.patches) that python_exec.py applies when the program's interpreter has this
package: outside their verified versions they are skipped and the program runs as it always does.

The SDK sends each DEBUG message (a few per resource: "Registering resource ...", "Preparing
resource ...") to the engine as a blocking gRPC call; the Pulumi CLI shows them only at high
verbosity, and the offline engine shows none of them. Dropped in the program's process, the
run registers the same resources with a fifth of the calls.
"""

from __future__ import annotations

from integration_blueprint.core.patches import PULUMI_VERIFIED, SPEED, Patcher, patch

DEBUG_LOGS_PATCH = "engine_debug_logs_not_sent"


@patch(DEBUG_LOGS_PATCH, target="pulumi.log.debug", package="pulumi", verified=PULUMI_VERIFIED, kind=SPEED,
       buys="466 of the prod program's 582 blocking engine calls (DEBUG log messages the offline engine never "
            "shows): benchmarks/preview_overhead.py")
def engine_debug_logs_not_sent(patcher: Patcher) -> None:
    import pulumi.log

    def debug(msg, resource=None, stream_id=None, ephemeral=None) -> None:
        """Pulumi's log.debug, for an engine that shows no debug messages: nothing is sent."""

    patcher.replace(pulumi.log, "debug", debug)
