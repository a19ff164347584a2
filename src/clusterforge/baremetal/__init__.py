"""Bare metal: servers managed through their BMCs (Redfish), the seam the bring-up flow and doctor use."""
