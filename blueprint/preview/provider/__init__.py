"""The provider side of the offline engine: what the aws provider (or any provider whose Python SDK is
installed) would answer the engine, offline, in parts that depend one way:

    sdk               a provider SDK's declared outputs, inputs and data source results, read from its source
    values            deterministic made-up values (hashes of the URN), the placeholder account, one timestamp
    naming            the input that names a resource, AWS's limit for it, the auto-name Pulumi makes
    check             Check: auto-names and values encoded as declared
    identifiers       the resource being answered (Subject): its physical name, id and ARN
    facts             AWS's facts by region: zones, the default VPC, ELB accounts, region names
    shapes            AWS's shapes for particular outputs (invoke ARNs, queue URLs, endpoints...)
    maps              map outputs whose keys AWS documents (an AppSync API's `uris`, a stack's `outputs`)
    makers            a property's value by the SDK's stated default, its name, its declared type
    outputs           a resource's typed outputs after Create, and for Read (`Resource.get`)
    policy_documents  IAM policy documents: get_policy_document computed, get_policy from the managed catalogue
    data_sources      Invoke: a data source's typed answer, from facts or invented
    contract          the Provider the engine calls: check, create, read, invoke

Public API: `contract.Provider`.
"""
