"""The blueprint's CrossGuard policy pack (run by `pulumi preview --policy-pack policies` or by
`python -m blueprint preview`)."""
