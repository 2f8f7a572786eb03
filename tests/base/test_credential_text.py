"""Credentials a text gives away: masked in a URL, a command, an error, a tool's name."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.base.credential_text import mask_credential_text
from heartbeat.detect.detectors import summarize


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "GET https://api.example.com/v1/items?page=2&api_key=Q5ecret0123&sort=asc",
            "GET https://api.example.com/v1/items?page=2&api_key=***&sort=asc",
        ),
        ('curl -H "Authorization: Bearer abc.DEF-123_x"', 'curl -H "Authorization: Bearer ***"'),
        ("export OPENAI_API_KEY=anything-at-all && run", "export OPENAI_API_KEY=*** && run"),
        ("AWS_SECRET_ACCESS_KEY=wJalr/K7MDENG/bPx aws s3 ls", "AWS_SECRET_ACCESS_KEY=*** aws s3 ls"),
        ("postgres://app:pw-123@db:5432/main", "postgres://app:***@db:5432/main"),
        (
            '{\\"password\\": \\"hunter2\\", \\"user\\": \\"ann\\"}',
            '{\\"password\\": \\"***\\", \\"user\\": \\"ann\\"}',
        ),
        ("note: password: hunter2 ok", "note: password: *** ok"),
        ("uses sk-ant-api03-abcdefghijklmnopqrst here", "uses *** here"),
        ("sk_live_abcdefghijklmnop1234 ghp_abcdefghijklmnopqrstuvwxyz0123", "*** ***"),
        ("key AKIAABCDEFGHIJKLMNOP, xoxb-1234567890-abcdef", "key ***, ***"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w", "jwt ***"),
        ("Basic dXNlcjpwYXNzd29yZA==", "Basic ***"),
        # A PEM private key, as it is or escaped in JSON, whole or cut short (live round 51).
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz+/aC1=\n-----END OPENSSH PRIVATE KEY-----\nok",
            "***\nok",
        ),
        (
            '{"content": "-----BEGIN RSA PRIVATE KEY-----\\nMIIEpA+/\\n-----END RSA PRIVATE KEY-----"}',
            '{"content": "***"}',
        ),
        ('{"content": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADAN', '{"content": "***'),
        (
            "curl -u admin:pw123 https://x && wget --user=ann:s3cr3t y",
            "curl -u admin:*** https://x && wget --user=ann:*** y",
        ),
        (
            "npx server --api-key abc123 --port 8 --token=zz9x --password 'a b' --auth-token \"c d\"",
            "npx server --api-key *** --port 8 --token=*** --password *** --auth-token ***",
        ),
        ('["server", "--api-key", "abc123", "-v"]', '["server", "--api-key", "***", "-v"]'),
        # A base64 key and a generated password hold "=" (live round 52: the rest was kept).
        ("rejected: api_key=Zm9vYmFy=YmF6cXV4 password=x7=Qp9LmZ2vRw8", "rejected: api_key=*** password=***"),
        ("GET /v1?token=abc123==&page=2", "GET /v1?token=***&page=2"),
        # A cookie header's every pair (live round 52: `Cookie: ***=<session id>` was kept).
        ('curl -H "Cookie: session=8f7e6d5c4b3a; theme=dark" x', 'curl -H "Cookie: ***" x'),
        ("Set-Cookie: sid=abc123; Path=/; HttpOnly", "Set-Cookie: ***"),
        # A password run together with its program's name, and MySQL's -p (live round 52).
        ("PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=*** psql -h db"),
        ("mysqldump -uroot -pS3cr3t app | gzip", "mysqldump -uroot -p*** app | gzip"),
        # Live round 53: a URL's password with no user, -u's user:password in an argv list, and a
        # PEM key in JSON text behind a credential-named field (only its BEGIN line was masked).
        ("redis://:R3disPw0rd@cache:6379/0", "redis://:***@cache:6379/0"),
        ('["curl", "-u", "admin:Pw3d4f5g", "https://x"]', '["curl", "-u", "admin:***", "https://x"]'),
        (
            '{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvgIBADA\\n-----END PRIVATE KEY-----\\n"}',
            '{"private_key": "***\\n"}',
        ),
        # Live round 53's shapes the README did not name: a Slack app token, an incoming webhook's
        # path, a PGP private key block, a credential in a JSON text inside a JSON text's string.
        ("SLACK_APP=xapp-1-A0123BCDE-1234567890123-0a1b2c3d4e5f", "SLACK_APP=***"),
        # Live round 54's: SendGrid, Shopify, DigitalOcean, PyPI and Docker Hub tokens by their form,
        # and a signed URL's signature (Azure's SAS, S3's presigned URL), its other parameters kept.
        ("mail via SG.ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmb", "mail via ***"),
        ("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", "***"),
        ("doctl -t dop_v1_" + "1a2b3c4d" * 8, "doctl -t ***"),
        ("twine -p pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjAxLTIzNDUtNjc4OS1hYmNkLWVm", "twine -p ***"),
        ("docker login -p dckr_pat_Xy7Zq9Wv2Ut4Sr6Qp8On0Ml", "docker login -p ***"),
        (
            "GET https://a.blob.core.windows.net/c/f?sv=2022-11-02&sig=AzSig%2Bq1w2%3D&se=1",
            "GET https://a.blob.core.windows.net/c/f?sv=2022-11-02&sig=***&se=1",
        ),
        (
            "https://b.s3.amazonaws.com/k?X-Amz-Signature=abcdef0123456789&x=1",
            "https://b.s3.amazonaws.com/k?X-Amz-Signature=***&x=1",
        ),
        (
            "POST https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/Xq9sLkW3vTz8",
            "POST https://hooks.slack.com/services/***",
        ),
        (
            "https://discord.com/api/webhooks/1234567890/AbCdEfGhIjKlMnOpQrStUv-w",
            "https://discord.com/api/webhooks/***",
        ),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0KxYkB\n=x1Yz\n-----END PGP PRIVATE KEY BLOCK-----",
            "***",
        ),
        (
            '{"cmd":"body=\\"{\\\\\\"refresh_token\\\\\\": \\\\\\"rt-Qw3Er4Ty5\\\\\\"}\\""}',
            '{"cmd":"body=\\"{\\\\\\"refresh_token\\\\\\": \\\\\\"***\\\\\\"}\\""}',
        ),
        # Live round 54's INFO: a credential told in prose, the word before "is" naming it.
        (
            "Twilio says: the auth token is 9f8e7d6c5b4a39281706f5e4d3c2b1a0.",
            "Twilio says: the auth token is ***.",
        ),
        ("my password was hunter2, now rotated", "my password was ***, now rotated"),
        ("the password is: Tr0ub4dor&3 ok", "the password is: *** ok"),
        ("The API key is 'AbCdEf0123456789xyzQ'", "The API key is '***'"),
        # Live round 55's: GitLab's runner token, Twilio's and Mailgun's keys, a Terraform Cloud
        # token, a password given by -p to a registry's login or sshpass, a setting given by name
        # and value apart, a .netrc entry.
        ("registered with glrt-RunnerTok1a2b3c4d5e6f7g", "registered with ***"),
        ("twilio key SK0123456789abcdef0123456789abcdef", "twilio key ***"),
        ("mailgun key-BareMg3ax6xnjp29jd6fds4gc3", "mailgun ***"),
        (
            "TF_TOKEN_app_terraform_io=TfcTok1234.atlasv1.AbCdEfGhIjKlMnOpQrSt",
            "TF_TOKEN_app_terraform_io=***",
        ),
        (
            "docker login -u ci -p DockerShortPw-55 registry.acme.example",
            "docker login -u ci -p *** registry.acme.example",
        ),
        ("sshpass -p SshPassPw-66 ssh deploy@web1", "sshpass -p *** ssh deploy@web1"),
        (
            "aws configure set aws_secret_access_key AwsCfg0a1b2c3d",
            "aws configure set aws_secret_access_key ***",
        ),
        (
            "machine api.heroku.com login me@acme.example password NetrcPw-4433",
            "machine api.heroku.com login me@acme.example password ***",
        ),
        ("machine a.example\n  login x\n  password Pw-1\n", "machine a.example\n  login x\n  password ***\n"),
        # a value beside its credential's name, in a JSON text (live round 53's INFO: an error
        # quoting the header it sent)
        (
            'request failed: {"header_name": "X-Api-Key", "header_value": "RawSplit-77aa"}',
            'request failed: {"header_name": "X-Api-Key", "header_value": "***"}',
        ),
        ('[{"name": "DB_PASSWORD", "value": "s3cr3t!x"}]', '[{"name": "DB_PASSWORD", "value": "***"}]'),
        # live round 56's unnamed shapes: tokens whose form gives them away, and Okta's scheme
        ("token ya29.a0AfB_GcpOauthTok0a1b2c3d4e5f6g7h8i9j0k used", "token *** used"),
        ("VAULT_TOKEN_FOR_CI hvs.CAESIVaultTok0a1b2c3d4e5f6g7h8i9j", "VAULT_TOKEN_FOR_CI ***"),
        ("auth ATATT3xFfGF0AtlassianTok0a1b2c3d4e5f6g7h8i9j=AB12CD34 ok", "auth *** ok"),
        ("linear lin_api_LinearTok0a1b2c3d4e5f6g7h8i9j0k1l2m3n", "linear ***"),
        ("nr NRAK-NewRelicKey0A1B2C3D4E5F6G7H8I", "nr ***"),
        ("doppler dp.st.prd.DopplerTok0a1b2c3d4e5f6g7h8i9j0k", "doppler ***"),
        ("Authorization: SSWS 00OktaSswsTok0a1b2c3d4e5f6g7h8i9j", "Authorization: SSWS ***"),
        # live round 56's INFO: a Discord bot's token, Heroku's, a .pgpass file's lines
        (
            "Authorization: Bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
            "Authorization: Bot ***",
        ),
        ("bot token MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs set", "bot token *** set"),
        ("heroku HRKU-AAbcdefghijklmnopqrstuvwxyz0123456789_ABCDEFGHIJ", "heroku ***"),
        (
            "db.acme.example:5432:app:admin:S3cr3t-pw\n*:*:*:replica:Repl1ca!",
            "db.acme.example:5432:app:admin:***\n*:*:*:replica:***",
        ),
        ('echo "10.0.0.5:6432:*:svc:PgPw-99" >> ~/.pgpass', 'echo "10.0.0.5:6432:*:svc:***" >> ~/.pgpass'),
        ("~/.pgpass: db.internal:5432:orders:app:Pg57Pw!x", "~/.pgpass: db.internal:5432:orders:app:***"),
        # live round 57: npm's registry token, its name's "_" first
        ("//registry.npmjs.org/:_authToken=npm_L57aBcDeFgHiJkLmNoPq", "//registry.npmjs.org/:_authToken=***"),
        ('{"out": "localhost:5432:*:postgres:PgPw99\\n"}', '{"out": "localhost:5432:*:postgres:***\\n"}'),
        # live round 58's INFO: Databricks', an age secret key, a Telegram bot's, a kubeconfig's key
        ("DATABRICKS dapi0123456789abcdef0123456789abcdef-2 set", "DATABRICKS *** set"),
        ("AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGP0", "***"),
        (
            "curl api.telegram.org/bot110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe",
            "curl api.telegram.org/***/getMe",
        ),
        (
            "  user:\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=",
            "  user:\n    client-key-data: ***",
        ),
        # live round 59's INFO: Stripe's webhook secret, GitLab's trigger token, redis-cli's -a,
        # a Google OAuth client's secret, a Sentry DSN's key (a URL's user, no password)
        ("STRIPE_WEBHOOK whsec_L59aBcDeFgHiJkLmNoPqRsTuVwXyZ012", "STRIPE_WEBHOOK ***"),
        ("trigger glptt-L59aBcDeFgHiJkLmNoPqRsTu", "trigger ***"),
        ("redis-cli -h cache -a L59RedisCliPw55 ping", "redis-cli -h cache -a *** ping"),
        # live round 60's INFO: Pulumi's, Supabase's and Fly.io's tokens, an Azure client secret
        ("PULUMI_ACCESS_TOKEN pul-0123456789abcdef0123456789abcdef01234567", "PULUMI_ACCESS_TOKEN ***"),
        ("supabase login sbp_0123456789abcdef0123456789abcdef01234567", "supabase login ***"),
        ("FlyV1 fm2_lJPECAAAAAAAAMxyXBGbnxBLzXhmWmdP5Q0u", "FlyV1 ***"),
        ("secret abc8Q~aBcDeFgHiJkLmNoPqRsTuVwXyZ.0123456 set", "secret *** set"),
        # live round 60: its -p (a port) before -a kept the password in clear, and the command after
        # --no-auth-warning (a flag saying no takes no value) was masked instead
        (
            "redis-cli -h cache.internal -p 6380 -a L60RedisPw0x99 --no-auth-warning INFO",
            "redis-cli -h cache.internal -p 6380 -a *** --no-auth-warning INFO",
        ),
        ("client GOCSPX-L59aBcDeFgHiJkLmNoPqRsTuVwX", "client ***"),
        (
            "sentry https://L59sEnTrYpUbLiCkEy0a1b2c3d4e5f6@o59.ingest.sentry.io/4505",
            "sentry https://***@o59.ingest.sentry.io/4505",
        ),
    ],
)
def test_credentials_the_text_gives_away_are_masked(text: str, shown: str) -> None:
    """A credential-named key's value, a scheme's token, a URL's password, a token of a known form."""
    assert mask_credential_text(text) == shown
    assert mask_credential_text(shown) == shown  # masking again changes nothing


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=512 author=Bob key=cache-1 token_count=3",
        "docker run -u 1000:1000 img",  # a uid:gid
        '["docker", "run", "-u", "1000:1000"]',
        "password=",  # no value
        "mysql -u root -p app && grep -p x",  # -p alone: the client asks for it
        "if token==expected: ok",
        "search sk-learn tutorials, disk usage, the task-runner",
        "sed -n '1,20p' tests/test_tokens.py && echo a=b",
        "mail ann@example.com about https://example.com/a?page=2",
        "a Bearer of bad news",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",  # a public key: no secret
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQINBF\n-----END PGP PUBLIC KEY BLOCK-----",
        "GET https://api.example.com/api/webhooks/42/deliveries and https://hooks.slack.com/services/",
        "pip install pypi-simple && open SG.py; a design=1&sig= left empty",
        "docker run -u 1000:1000 img && git add -u",
        "llm --max-tokens 512 --token --verbose; use --token to log in; a--token abcd",
        # a path whose last part is named for a credential names a file (live round 48: "could" masked)
        "/srv/agent/github-token: could not save state: Not a directory",
        r"C:\keys\api_key: could not read",
        # prose that names a credential but gives none: no value of its form after "is"
        "the token is invalid; the password is wrong; the API key was revoked yesterday",
        "max tokens is 4096, token count is 1234567, the cache key is 1234567890",
        # what only looks like those: a key-value store, a SKU, git's -p, a setting that is no
        # credential's, a password spoken of
        "a key-value store; SKU 12345; git log -p -3; docker login -p; aws configure set region us-east-1",
        "forgot password reset flow; the state machine's password prompt",
        '{"name": "Accept", "value": "application/json"}',  # a name that is no credential's
        "see the hvs. docs; the ATATT prefix; udp.stats; NRAK- keys; ya29. tokens",  # prefixes alone
        "The Bot framework; Bot: ready; HRKU- keys",
        "at 12:30:AA; order 12345678:ABC; the dapi docs; client-certificate-data: LS0tCg==",
        # a URL's short user (git@, a person's name), redis-cli asking for its password, prefixes alone
        "git clone ssh://git@github.com/a/b.git; https://ann@example.com/x; redis-cli -a; whsec_ GOCSPX-",
        # a short pul- or sbp_, a tilde in a path
        "see pul-42 and sbp_docs; cd ~/Q~notes",
        # what only looks like a .pgpass line: a compiler's place, a clock, an IPv6 address
        "file.c:12:5: error: x:y\n12:30:45:123:456\nfe80::1:2:3:4\na:b:c:d:e",
    ],
)
def test_text_without_a_credential_is_left_as_it_is(text: str) -> None:
    """Names that are no credential's, words that only look like a prefix, an e-mail: unchanged."""
    assert mask_credential_text(text) == text


def test_a_url_or_command_in_an_argument_shows_no_credential_in_the_summary() -> None:
    """The summary masks what the text gives away, also where the cut would split a token."""
    url = "https://api.example.com/items?api_key=Q5ecret0123&page=2"
    assert (
        summarize("fetch", {"url": url})
        == 'fetch({"url":"https://api.example.com/items?api_key=***&page=2"})'
    )
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    shown = summarize("run", {"cmd": "x" * 180 + " " + token})  # the token straddles the 200-character cut
    assert "ghp_" not in shown and "abcdefghij" not in shown


@settings(max_examples=300, deadline=None, print_blob=True)
@given(
    text=st.text(max_size=80)
    | st.from_regex(r"[a-z_]{1,12}[:=] ?(Bearer )?[A-Za-z0-9]{0,20}", fullmatch=True)
)
def test_masking_any_text_never_raises_and_is_stable(text: str) -> None:
    """Whatever an agent writes: masking returns a text that masking leaves as it is."""
    once = mask_credential_text(text)
    assert mask_credential_text(once) == once


def test_a_text_of_many_private_key_markers_is_masked_marker_by_marker() -> None:
    """A key's body ends at the next ``-----``: a text of many BEGIN lines without an END (2,400
    markers) is masked one marker at a time, no body running on over the others (that took 2.4 s
    on 67 KB, each marker scanning to the text's end; milliseconds now)."""
    text = "-----BEGIN PRIVATE KEY----- MIIEv\n" * 2400
    assert mask_credential_text(text) == "***" * 2400


def test_a_credential_in_a_json_text_three_levels_deep_is_masked_in_the_summary() -> None:
    """A response body quoting a JSON text that quotes another (live round 55: its ``api_key`` was
    kept; a call's summary escapes it once more, seven backslashes before a quote)."""
    inner = json.dumps({"api_key": "DoubleNest-77"})
    body = json.dumps({"body": json.dumps({"inner": inner})})
    shown = summarize("http.get", {"out": body})
    assert "DoubleNest-77" not in shown and "***" in shown


@pytest.mark.parametrize("between", ["\n", "\r\n", "\t"])
def test_an_assignment_on_a_line_of_its_own_is_masked_in_the_summary(between: str) -> None:
    """``env`` or a ``.env`` file printed into an argument (live round 56): in the call's summary
    each line break is a JSON escape (``\\n``) before the next name, and that name starts a line."""
    env = between.join(["HOME=/root", "PGPASSWORD=NlPgPw-1234", "DB_PASSWORD=NlDbPw-1234", "TERM=xterm"])
    shown = summarize("bash", {"command": "env", "printed": env})
    assert "NlPgPw" not in shown and "NlDbPw" not in shown
    assert "HOME=/root" in shown and "TERM=xterm" in shown
    assert mask_credential_text(env) == between.join(
        ["HOME=/root", "PGPASSWORD=***", "DB_PASSWORD=***", "TERM=xterm"]
    )
