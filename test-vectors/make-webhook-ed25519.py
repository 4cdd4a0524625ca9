#!/usr/bin/env python3
"""Writes webhook-ed25519.json: Standard Webhooks `v1a` (Ed25519) known answers.

Every signature, public key and key id is computed by the `openssl` command (pkey, pkeyutl -sign
-rawin, dgst); Python only builds the keys' PKCS #8 form from fixed seeds and writes the JSON. No
code of this repository is used. Run from this folder: python3 make-webhook-ed25519.py
"""
import base64
import json
import os
import subprocess
import tempfile

PKCS8_ED25519_PREFIX = bytes.fromhex("302e020100300506032b657004220420")
NOW = 1700000000


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def openssl(*args, data=None):
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


class Key:
    def __init__(self, seed_hex, folder):
        self.seed = seed_hex
        self.der = os.path.join(folder, f"{seed_hex[:8]}.der")
        with open(self.der, "wb") as f:
            f.write(PKCS8_ED25519_PREFIX + bytes.fromhex(seed_hex))
        spki = openssl("pkey", "-inform", "DER", "-in", self.der, "-pubout", "-outform", "DER")
        self.x = b64url(spki[-32:])
        canonical = '{"crv":"Ed25519","kty":"OKP","x":"%s"}' % self.x
        self.kid = b64url(openssl("dgst", "-sha256", "-binary", data=canonical.encode()))

    def jwk(self):
        return {"kty": "OKP", "crv": "Ed25519", "x": self.x, "kid": self.kid, "use": "sig", "alg": "EdDSA"}

    def v1a(self, msg_id, ts, body):
        content = f"{msg_id}.{ts}.".encode() + body.encode()
        # Ed25519 signs the whole message at once: openssl reads it from a file, not a pipe.
        message = self.der + ".msg"
        with open(message, "wb") as f:
            f.write(content)
        sig = openssl("pkeyutl", "-sign", "-rawin", "-keyform", "DER", "-inkey", self.der, "-in", message)
        assert len(sig) == 64
        return "v1a," + base64.b64encode(sig).decode()


def case(name, expected, msg_id, ts, body, signature, kids, now=NOW + 10):
    return {
        "name": name,
        "headers": {
            "webhook-id": msg_id,
            "webhook-timestamp": str(ts),
            "webhook-signature": signature,
            "X-Service-Signing-Key-Ids": " ".join(kids),
        },
        "body": body,
        "now": now,
        "expected": expected,
    }


def main():
    with tempfile.TemporaryDirectory() as folder:
        a = Key("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", folder)
        b = Key("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", folder)
        other = Key("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7", folder)
        body = '{"id":1001,"title":"Mug","price":"5.00"}'
        accented = '{"id":1002,"title":"Tasse \u00e0 caf\u00e9 \u2615"}'
        mid, ts = "wh_01HZY3V5K9Q2", NOW
        hmac_entry = "v1," + base64.b64encode(
            openssl("dgst", "-sha256", "-binary", "-hmac", "sg_cs_vectorsecret", data=f"{mid}.{ts}.{body}".encode())
        ).decode()
        cases = [
            case("valid, one v1a entry by the first key", "valid", mid, ts, body, a.v1a(mid, ts, body), [a.kid]),
            case(
                "valid, during a key rotation: the new key's entry first, then the old key's",
                "valid", mid, ts, body, f"{b.v1a(mid, ts, body)} {a.v1a(mid, ts, body)}", [b.kid, a.kid],
            ),
            case(
                "valid, beside a v1 HMAC entry (not needed with public keys)",
                "valid", mid, ts, body, f"{hmac_entry} {a.v1a(mid, ts, body)}", [a.kid],
            ),
            case("valid, a UTF-8 body beyond ASCII", "valid", mid, ts, accented, a.v1a(mid, ts, accented), [a.kid]),
            case("valid, without the key id header", "valid", mid, ts, body, b.v1a(mid, ts, body), []),
            case("body changed after signing", "WEBHOOK_SIGNATURE_INVALID", mid, ts, body.replace("5.00", "0.05"), a.v1a(mid, ts, body), [a.kid]),
            case("webhook-id changed after signing", "WEBHOOK_SIGNATURE_INVALID", "wh_01HZY3V5K9Q3", ts, body, a.v1a(mid, ts, body), [a.kid]),
            case("webhook-timestamp changed after signing", "WEBHOOK_SIGNATURE_INVALID", mid, ts + 1, body, a.v1a(mid, ts, body), [a.kid]),
            case(
                "signed by a key the JWKS does not list (unknown kid)",
                "WEBHOOK_SIGNATURE_INVALID", mid, ts, body, other.v1a(mid, ts, body), [other.kid],
            ),
            case(
                "signed by a key the JWKS does not list, naming a listed kid",
                "WEBHOOK_SIGNATURE_INVALID", mid, ts, body, other.v1a(mid, ts, body), [a.kid],
            ),
            case("a signature cut short", "WEBHOOK_SIGNATURE_INVALID", mid, ts, body, a.v1a(mid, ts, body)[:60], [a.kid]),
            case("only a v1 HMAC entry", "WEBHOOK_SIGNATURE_MISSING", mid, ts, body, hmac_entry, []),
            case(
                "a valid signature, 301 s before the verifier's clock",
                "WEBHOOK_TIMESTAMP_OUT_OF_RANGE", mid, ts, body, a.v1a(mid, ts, body), [a.kid], now=NOW + 301,
            ),
        ]
        out = {
            "about": (
                "Standard Webhooks v1a: webhook-signature entries `v1a,<base64 Ed25519 signature of "
                "\"webhook-id.webhook-timestamp.body\">`, checked against the public keys of `jwks` "
                "(RFC 7517/8037; kid = RFC 7638 thumbprint). X-Service-Signing-Key-Ids names the key of each "
                "entry. Each case: headers, body (UTF-8), the verifier's clock `now` (unix seconds; 300 s "
                "tolerance) and the verdict: \"valid\" or the error code. `other_key` signs but is not in "
                "`jwks`. Seeds are test keys only. Made by make-webhook-ed25519.py with the openssl command "
                "(pkeyutl -sign -rawin), not with any implementation under test."
            ),
            "tolerance_seconds": 300,
            "jwks": {"keys": [b.jwk(), a.jwk()]},
            "seeds": {a.kid: a.seed, b.kid: b.seed, other.kid: other.seed},
            "other_key": other.jwk(),
            "hmac_secret": "sg_cs_vectorsecret",
            "cases": cases,
        }
    with open("webhook-ed25519.json", "w", encoding="utf-8") as f:
        json.dump(out, f, indent=2, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
