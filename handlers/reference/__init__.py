"""The reference handlers the components deploy by default; each module's `lambda_handler` is the
entry point:

    billing_dispatcher          FifoBillingQueue's scheduled dispatcher
    billing_consumer            FifoBillingQueue's consumer (one conditional ledger write per charge)
    ledger_idempotent_consumer  IdempotentStreamConsumer's default consumer (reference_ledger)
    ledger_app_dlq_consumer     NonIdempotentStreamConsumer's default consumer (reference_ledger)
    invoice_enricher            DistributedMapBatch's item handler
    reference_ledger            the account ledger both stream consumers apply records to
"""
