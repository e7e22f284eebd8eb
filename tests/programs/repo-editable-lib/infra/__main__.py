"""Every resource tagged by the organisation's own library, kept in the same repository and installed
editable into the program's virtualenv (`pip install -e ../libs/tagging`: a `.pth` naming its folder)."""
import pulumi_aws as aws
from tagging import standard_tags

aws.s3.Bucket("artifacts", tags=standard_tags("ingest"))
aws.sqs.Queue("jobs", message_retention_seconds=345600, tags=standard_tags("ingest"))
