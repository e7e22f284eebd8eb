"""Print the schema the plugin serves (what `pulumi package get-schema` prints for it):
`python -m integration_blueprint.plugin.schema`. integration_blueprint.plugin.package_schema runs
it in a process of its own, as the engine runs the plugin: Pulumi's provider SDK registers protobuf
types (google.rpc.Status) that the offline engine's process registers too."""

from integration_blueprint.plugin.provider import BlueprintProvider

if __name__ == "__main__":
    print(BlueprintProvider().schema)
