"""Named offsets of the numbering plan: every ASN and address below is base + offset + a stable id.

Address offsets inside a block (``NODE_OFFSET``, the switch/PDU offsets) are computed per envelope
in clusterforge.plan.ipam; the fixed ones are here, with the ASN offsets, so the rule is read once.
"""

from __future__ import annotations

__all__ = ["NODE_OFFSET", "CONTROL_OFFSET", "API_VIP_OFFSET", "SITE_ACCESS_OFFSET", "SVI_FIRST_OFFSET",
           "STORAGE_LEAF_ASN_OFFSET", "STORAGE_ASN_OFFSET"]

NODE_OFFSET = 16  # first host address in a block: .1 is the gateway, .2-.15 are kept for services and SVIs
# Control nodes: .12-.14 of the site management and oob blocks, inside the .2-.15 kept for services, so
# declaring them (or going from one to three) renumbers nothing and grows no pool.
CONTROL_OFFSET = 12
# The Kubernetes API's virtual address with three control nodes (plan/control_plane.py): .15 of the site management
# block, the last of the kept .2-.15, just above the control nodes' .12-.14: planning it renumbers nothing.
API_VIP_OFFSET = 15
# Site access switches (plan/site_access.py): .8-.11 of the site oob block, below the control nodes' .12-.14 and
# above the gateway SVIs (.2 and .3: one per top switch of a plane), so adding them renumbers nothing.
SITE_ACCESS_OFFSET = 8
SVI_FIRST_OFFSET = 2  # per-switch SVI addresses .2, .3, ...; the gateway .1 is the pair's shared address
# Storage leaves: leaf_base + 1,000,000 + global leaf index, clear of every data leaf ASN (leaf_base + index).
STORAGE_LEAF_ASN_OFFSET = 1_000_000
# The storage top tier shares one ASN, spine_base + 9,000, clear of the per-SU data spine ASNs (spine_base + SU);
# three-tier storage pod spines follow it.
STORAGE_ASN_OFFSET = 9_000
