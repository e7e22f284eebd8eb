"""The provider side of the offline engine: what the aws provider (or any provider whose Python SDK is
installed) would answer the engine, offline.

    sdk    a provider SDK's declared outputs, inputs and data source results, read from its source
    maps   map outputs whose keys AWS documents (an AppSync API's `uris`, a stack's `outputs`)
"""
