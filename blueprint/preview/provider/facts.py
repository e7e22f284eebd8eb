"""AWS's facts by region, the same for every account: availability zones and their ids, the default
VPC, each region's Elastic Load Balancing account and its description.
"""

from __future__ import annotations

from integration_blueprint.preview.provider.values import hex_id


def zone_id_prefix(region: str) -> str:
    """AWS's short region code in availability-zone ids: us-east-1 -> use1, ap-southeast-2 -> apse2."""
    parts = region.split("-")
    if len(parts) < 3:
        return region
    directions = {"north": "n", "south": "s", "east": "e", "west": "w", "central": "c",
                  "northeast": "ne", "southeast": "se", "northwest": "nw", "southwest": "sw"}
    return parts[0] + "".join(directions.get(p, p[:1]) for p in parts[1:-1]) + parts[-1]


def default_vpc_id(region: str, account: str) -> str:
    """The default VPC's id, the same wherever it is asked for (ec2.get_vpc(default=True), a security
    group created without a VPC...)."""
    return f"vpc-{hex_id(f'{account}:{region}:default-vpc', 17)}"


def _availability_zone_count(region: str) -> int:
    return AZ_COUNTS.get(region, DEFAULT_AZ_COUNT)


# Availability zones per region (AWS Regions and Zones, 2026); other regions have three.
AZ_COUNTS = {"us-east-1": 6, "us-west-1": 2, "ap-northeast-1": 3, "us-west-2": 4, "ap-northeast-2": 4}
DEFAULT_AZ_COUNT = 3
# The AWS account of each region's Elastic Load Balancing (access logs bucket policies; ELB docs).
ELB_SERVICE_ACCOUNTS = {
    "us-east-1": "127311923021", "us-east-2": "033677994240", "us-west-1": "027434742980",
    "us-west-2": "797873946194", "ca-central-1": "985666609251", "eu-central-1": "054676820928",
    "eu-west-1": "156460612806", "eu-west-2": "652711504416", "eu-west-3": "009996457667",
    "eu-north-1": "897822967062", "ap-northeast-1": "582318560864", "ap-northeast-2": "600734575887",
    "ap-southeast-1": "114774131450", "ap-southeast-2": "783225319266", "ap-south-1": "718504428378",
    "sa-east-1": "507241528517",
}
REGION_DESCRIPTIONS = {
    "us-east-1": "US East (N. Virginia)", "us-east-2": "US East (Ohio)", "us-west-1": "US West (N. California)",
    "us-west-2": "US West (Oregon)", "eu-west-1": "Europe (Ireland)", "eu-central-1": "Europe (Frankfurt)",
    "eu-west-2": "Europe (London)", "ap-southeast-1": "Asia Pacific (Singapore)",
    "ap-southeast-2": "Asia Pacific (Sydney)", "ap-northeast-1": "Asia Pacific (Tokyo)",
}
DEFAULT_VPC_CIDR = "172.31.0.0/16"  # every default VPC's block (Amazon VPC User Guide, "Default VPCs")
NEW_VPC_CIDR = "10.0.0.0/16"  # the block the VPC console and most templates give a VPC of one's own


def zone_names(region: str) -> list[str]:
    return [f"{region}{letter}" for letter in "abcdefgh"[:_availability_zone_count(region)]]
