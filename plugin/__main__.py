"""The blueprint's components as a Pulumi component package: programs in TypeScript, Go, C#, Java
or YAML use the same four components as Python programs.

The engine (and `pulumi package add`) runs this folder as it runs every Python plugin: `python <this
folder> <engine address>`; it serves Pulumi's ResourceProvider interface over gRPC on a loopback
port and prints the port. The provider itself is integration_blueprint.plugin.provider.
"""

import sys

from pulumi.provider import main

from integration_blueprint import patches
from integration_blueprint.plugin.provider import BlueprintProvider

if __name__ == "__main__":
    # As pulumi.provider.experimental.component_provider_host runs a component provider: the
    # arguments after the program are the engine's address and its flags.
    with patches.applied(["plugin_integer_inputs_stay_whole"]):
        main(BlueprintProvider(), sys.argv[1:])
