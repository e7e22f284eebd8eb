"""The gate's reports: each renders one PreviewResult (integration_blueprint.preview.run), whose
findings, notes, suppressions and failure are the same for all, masked by its redaction.

    text            the terminal and CI log (control characters escaped), and JSON
    markdown        the pull request comment (GitHub markdown and Mermaid, user text escaped)
    sarif           code scanning (SARIF 2.1.0: locations, suppressions, a run that could not judge)
    skipped_checks  checks a rule could not make during preview (a value unknown until apply)
    formats         the table `blueprint preview --format` offers
"""
