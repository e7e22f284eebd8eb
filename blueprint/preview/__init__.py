"""The offline preview, in parts that depend one way:

    recording      run a Pulumi program under the SDK's mock engine and record every resource
    policy_config  read and check a policy pack config file (--policy-pack-config)
    analyzer       start the real policy pack and put a recording through its gRPC Analyzer
    run            `run_preview` (recording -> analyzer) and the text/JSON renderings
    aws_imports    `blueprint preview`'s import of pulumi_aws: only the modules the program uses

Public API: `integration_blueprint.preview.run.run_preview`, `recording.record_program`,
`analyzer.PolicyAnalyzer`.
"""
