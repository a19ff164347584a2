"""The BMC seam's pure parts: BIOS comparison (current / pending / wrong), value equality across Redfish's
string/int/bool spellings, the one-line error, the endpoint (password hidden, CA contained, vaulted password)."""

from __future__ import annotations

import pytest

from clusterforge.baremetal.credentials import contained, endpoint_for
from clusterforge.baremetal.types import BiosState, BmcEndpoint, BmcError, same_value
from clusterforge.model.management import SecretRef
from clusterforge.plan.baremetal import BmcFacts


def _facts(**changes) -> BmcFacts:
    base = dict(server="su01-r01-gpu01", address="198.18.14.11", prefix=24, gateway=None, kind="redfish", port=443,
                username="admin", password=SecretRef(pulumi="bmcPassword"), ca=None, verify_tls=True,
                boot_mode="uefi", boot_target="pxe", bios=())
    return BmcFacts(**{**base, **changes})


@pytest.mark.parametrize(("have", "want", "same"), [
    ("Enabled", "Enabled", True), ("enabled", "Enabled", False), ("10", 10, True), ("true", True, True),
    ("True", True, True), (True, "true", True), ("false", True, False), (None, "x", False), ("1", True, False),
])
def test_redfish_values_compare_across_spellings(have, want, same):
    assert same_value(have, want) is same


def test_bios_check_separates_applied_pending_and_wrong():
    state = BiosState(current={"A": "Enabled", "B": "Disabled", "C": "5"}, pending={"B": "Enabled"})
    result = state.check({"A": "Enabled", "B": "Enabled", "C": 6, "D": "x"})
    assert result.applied == ("A",)
    assert result.pending == ("B",)
    assert result.wrong == (("C", 6, "5"), ("D", "x", None))


def test_a_bmc_error_is_one_line_naming_the_server_and_its_bmc():
    error = BmcError("su01-r01-gpu01", "https://198.18.14.11", "unreachable", "no answer\nwithin 5 s")
    assert str(error) == "su01-r01-gpu01: BMC https://198.18.14.11 does not answer: no answer within 5 s"


def test_the_endpoint_never_shows_its_password():
    endpoint = BmcEndpoint("s", "https://198.18.14.11", "admin", "s3cret-value")
    assert "s3cret-value" not in repr(endpoint) and "s3cret-value" not in str(endpoint)


def test_a_pulumi_reference_takes_the_stacks_secret(tmp_path):
    endpoint = endpoint_for(_facts(port=8443), repo=tmp_path, secrets={"bmcPassword": "pw"})
    assert (endpoint.url, endpoint.username, endpoint.password, endpoint.ca_file) == (
        "https://198.18.14.11:8443", "admin", "pw", None)


def test_a_missing_secret_is_one_config_error_naming_the_key(tmp_path):
    with pytest.raises(BmcError) as caught:
        endpoint_for(_facts(), repo=tmp_path, secrets={})
    assert caught.value.kind == "config" and "clusterforge:bmcPassword" in str(caught.value)
    assert str(caught.value).startswith("su01-r01-gpu01: BMC https://198.18.14.11 ")


def test_a_ca_outside_the_repository_is_refused_even_through_a_link(tmp_path):
    repo = tmp_path / "repo"
    (repo / "pki").mkdir(parents=True)
    (repo / "pki" / "ca.pem").write_text("x")
    (repo / "pki" / "out.pem").symlink_to("/etc/hostname")
    assert contained(repo, "pki/ca.pem") == (repo / "pki" / "ca.pem").resolve()
    with pytest.raises(BmcError) as caught:
        endpoint_for(_facts(ca="pki/out.pem"), repo=repo, secrets={"bmcPassword": "pw"})
    assert "leaves the repository" in str(caught.value)


def test_a_vaulted_password_is_decrypted_with_the_vault_password_file(tmp_path):
    from ansible.parsing.vault import VaultLib, VaultSecret

    (tmp_path / "vault-pass").write_text("vault-key\n")
    secret = VaultLib([("default", VaultSecret(b"vault-key"))]).encrypt("bmc-pass-1\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "bmc.vault").write_bytes(secret)
    facts = _facts(password=SecretRef(vault="secrets/bmc.vault"))
    endpoint = endpoint_for(facts, repo=tmp_path, vault_password_file=str(tmp_path / "vault-pass"))
    assert endpoint.password == "bmc-pass-1"
    (tmp_path / "vault-pass").write_text("wrong\n")
    with pytest.raises(BmcError) as caught:
        endpoint_for(facts, repo=tmp_path, vault_password_file=str(tmp_path / "vault-pass"))
    assert caught.value.kind == "config" and "bmc-pass-1" not in str(caught.value)
