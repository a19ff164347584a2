"""Backend URLs and the team's passphrase: what the engine is given, what is printed, what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterforge.pulumi.automation import Backend, SecretsMissing
from clusterforge.pulumi.backend_url import BackendUrl, BackendUrlError, mask

URL = "postgres://ops:s%40cret-pw@db.example:5432/pulumi?sslmode=require&table=cf_state"


def test_the_engine_gets_the_url_without_its_password() -> None:
    assert BackendUrl.parse(URL).engine_url == "postgres://ops@db.example:5432/pulumi?sslmode=require&table=cf_state"


def test_the_password_is_decoded_for_pgpassword() -> None:
    assert BackendUrl.parse(URL).password == "s@cret-pw"


def test_a_printed_url_masks_the_password() -> None:
    assert BackendUrl.parse(URL).masked() == "postgres://ops:****@db.example:5432/pulumi?sslmode=require&table=cf_state"


def test_mask_scrubs_the_password_as_written_and_decoded() -> None:
    text = "dial postgres://ops:s%40cret-pw@db: failed; password s@cret-pw rejected"
    assert "cret" not in mask(text, URL)


def test_psql_conninfo_drops_the_table_parameter_and_the_password() -> None:
    conninfo, env = BackendUrl.parse(URL).libpq()
    assert conninfo == "postgresql://ops@db.example:5432/pulumi?sslmode=require"
    assert env == {"PGPASSWORD": "s@cret-pw"}


def test_the_table_parameter_names_the_state_table() -> None:
    assert BackendUrl.parse(URL).table == "cf_state"
    assert BackendUrl.parse("postgres://ops@db/pulumi").table == "pulumi_state"


@pytest.mark.parametrize("url", ["s3://bucket", "postgresql://ops@db/pulumi", "https://app.pulumi.com", "file://"])
def test_a_url_of_another_kind_is_refused_naming_the_kinds(url: str) -> None:
    with pytest.raises(BackendUrlError, match="file://|no directory"):
        BackendUrl.parse(url)


def test_a_refused_url_never_shows_its_password() -> None:
    with pytest.raises(BackendUrlError) as caught:
        BackendUrl.parse("mysql://ops:hunter2@db/pulumi")
    assert "hunter2" not in str(caught.value)


def test_the_engine_environment_carries_the_password_only_in_pgpassword(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "team")
    env = Backend.resolve(tmp_path, URL).env()
    assert env["PGPASSWORD"] == "s@cret-pw"
    assert not [key for key, value in env.items() if "cret" in value and key != "PGPASSWORD"]


def test_a_shared_backend_refuses_a_passphrase_of_this_machine_alone(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    monkeypatch.delenv("CLUSTERFORGE_PASSPHRASE_FILE", raising=False)
    with pytest.raises(SecretsMissing, match="PULUMI_CONFIG_PASSPHRASE"):
        Backend.resolve(tmp_path, URL).env()
    assert not (tmp_path / "passphrase").exists()


def test_a_file_backend_still_generates_its_passphrase(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    monkeypatch.delenv("CLUSTERFORGE_PASSPHRASE_FILE", raising=False)
    env = Backend.resolve(tmp_path, f"file://{tmp_path}/pulumi").env()
    assert env["PULUMI_CONFIG_PASSPHRASE_FILE"] == str(tmp_path / "passphrase")
    assert (tmp_path / "passphrase").stat().st_mode & 0o777 == 0o600


def test_a_passphrase_file_given_explicitly_is_handed_to_the_engine(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    secret = tmp_path / "team-passphrase"
    secret.write_text("team\n")
    env = Backend.resolve(tmp_path, URL, passphrase_file=secret).env()
    assert env["PULUMI_CONFIG_PASSPHRASE_FILE"] == str(secret)


def test_a_missing_passphrase_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    with pytest.raises(SecretsMissing, match="nowhere: passphrase file"):
        Backend.resolve(tmp_path, URL, passphrase_file=tmp_path / "nowhere").env()


def test_a_passphrase_file_and_the_variable_together_are_refused(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "team")
    secret = tmp_path / "team-passphrase"
    secret.write_text("team\n")
    with pytest.raises(SecretsMissing, match="both given"):
        Backend.resolve(tmp_path, URL, passphrase_file=secret).env()


def test_the_cli_refuses_a_backend_of_another_kind_before_the_engine_starts(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from clusterforge.paths import workspace

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
           "CLUSTERFORGE_STATE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", "from clusterforge.cli import main; main()", "up",
                           str(workspace() / "inventory" / "lab.yaml"), "--stack", "x", "--yes",
                           "--backend-url", "mysql://ops:hunter2@db/pulumi"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and "--backend-url" in done.stderr and "postgres://" in done.stderr
    assert "hunter2" not in done.stderr + done.stdout
