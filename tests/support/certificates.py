"""A self-signed certificate for 127.0.0.1, made with the system's ``openssl``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def self_signed(folder: Path) -> tuple[Path, Path]:
    """Certificate and key files for ``127.0.0.1`` in ``folder`` (the test skips without openssl)."""
    key, cert = folder / "key.pem", folder / "cert.pem"
    try:
        made = subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                str(key),
                "-out",
                str(cert),
                "-days",
                "1",
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1",
            ],
            capture_output=True,
            timeout=60,
        )
    except FileNotFoundError:
        pytest.skip("no openssl on this machine to make a certificate")
    if made.returncode != 0:
        pytest.skip(f"openssl could not make a certificate: {made.stderr[-200:]!r}")
    return cert, key


__all__ = ["self_signed"]
