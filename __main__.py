"""The blueprint program: reads the stack's config and instantiates the patterns the stack enables.

Each pattern has one section in stacks/Pulumi.<stack>.yaml; blueprint/stack_config.py checks every
value before any resource is declared.
"""

import pulumi

from blueprint import stack_config

platform = stack_config.platform_settings()
