"""A corpus of planted-secret shapes: each a line of real-looking text around a fresh secret.

Every call of :func:`corpus` draws new random secrets, so no test can pass by
knowing them. A shape is ``(name, line, secret)``: ``line`` holds ``secret``
and a redactor must leave no trace of ``secret`` in it. Shapes cover provider
tokens, secret-named assignments in shell, JSON (plain and escaped), YAML,
flags, URLs, headers and cookies, command-line password options, ``.netrc``,
Azure connection strings, URL-encoded and base64-wrapped forms, labels in
other languages, tokens right after and right before a non-ASCII letter, the
password options of common tools (``htpasswd -b``, ``smbclient -U u%pw``,
``ldapsearch -w``, ``openssl pass:``, ``keytool -storepass``, ``ssh-keygen -N``,
``mongosh -p``, ``redis-cli -a``), passwords piped to ``--password-stdin`` or
``sudo -S``, ``.pgpass`` lines, ``auth=(u, pw)``, ``Pwd=``, ``{"pass": …}``,
``<password>…</password>``, TOML ``secretKey``, JSON escaped twice, and
provider tokens (Stripe webhooks, Mailgun, Sentry, Discord, Telegram, Square,
Braintree, FCM, age, Grafana, Linear, Notion, Groq, Replicate).
"""

from __future__ import annotations

import base64
import json
import secrets
import string
from collections.abc import Callable
from urllib.parse import quote

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def _r(alphabet: str, n: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


def _password() -> str:
    return "Pw" + _r(ALNUM, 10) + "7!x"


def _aws_secret() -> str:
    return "Xq7" + _r(ALNUM + "/+", 36) + "9"


TOKENS: dict[str, Callable[[], str]] = {
    "openai": lambda: "sk-proj-" + _r(ALNUM, 48),
    "openai_legacy": lambda: "sk-" + _r(ALNUM, 48),
    "anthropic": lambda: "sk-ant-api03-" + _r(ALNUM, 40),
    "google": lambda: "AIza" + _r(ALNUM, 35),
    "aws_id": lambda: "AKIA" + _r(string.ascii_uppercase + string.digits, 16),
    "github_ghp": lambda: "ghp_" + _r(ALNUM, 36),
    "github_gho": lambda: "gho_" + _r(ALNUM, 36),
    "github_pat": lambda: "github_pat_11" + _r(ALNUM, 60),
    "gitlab": lambda: "glpat-" + _r(ALNUM, 20),
    "slack_bot": lambda: "xoxb-1234-5678-" + _r(ALNUM, 24),
    "slack_user": lambda: "xoxp-1234-5678-" + _r(ALNUM, 24),
    "slack_webhook": lambda: "https://hooks.slack.com/services/T0/B0/" + _r(ALNUM, 24),
    "jwt": lambda: "eyJhbGciOiJIUzI1NiJ9.eyJ" + _r(ALNUM, 30) + "." + _r(ALNUM, 40),
    "stripe_live": lambda: "sk_live_" + _r(ALNUM, 24),
    "stripe_restricted": lambda: "rk_live_" + _r(ALNUM, 24),
    "stripe_test": lambda: "sk_test_" + _r(ALNUM, 24),
    "huggingface": lambda: "hf_" + _r(ALNUM, 34),
    "npm": lambda: "npm_" + _r(ALNUM, 36),
    "pypi": lambda: "pypi-AgEIcHlwaS5vcmc" + _r(ALNUM, 60),
    "sendgrid": lambda: "SG." + _r(ALNUM, 22) + "." + _r(ALNUM, 43),
    "google_oauth": lambda: "ya29." + _r(ALNUM, 40),
    "google_client_secret": lambda: "GOCSPX-" + _r(ALNUM, 28),
    "digitalocean": lambda: "dop_v1_" + _r(HEX, 64),
    "shopify": lambda: "shpat_" + _r(HEX, 32),
    "databricks": lambda: "dapi" + _r(HEX, 32),
    "stripe_webhook": lambda: "whsec_" + _r(ALNUM, 32),
    "mailgun": lambda: "key-" + _r(HEX, 32),
    "sentry_token": lambda: "sntrys_" + _r(ALNUM, 60),
    "discord": lambda: "MT" + _r(ALNUM, 22) + "." + _r(ALNUM, 6) + "." + _r(ALNUM, 38),
    "telegram": lambda: "123456789:AA" + _r(ALNUM, 33),
    "square": lambda: "sq0atp-" + _r(ALNUM, 22),
    "square_secret": lambda: "sq0csp-" + _r(ALNUM, 43),
    "braintree": lambda: "access_token$production$" + _r(HEX, 16) + "$" + _r(HEX, 32),
    "fcm": lambda: "AAAA" + _r(ALNUM, 7) + ":" + _r(ALNUM, 140),
    "age": lambda: "AGE-SECRET-KEY-1" + _r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    "grafana_sa": lambda: "glsa_" + _r(ALNUM, 32) + "_" + _r(HEX, 8),
    "grafana_cloud": lambda: "glc_" + _r(ALNUM, 40),
    "linear": lambda: "lin_api_" + _r(ALNUM, 40),
    "notion": lambda: "ntn_" + _r(ALNUM, 46),
    "notion_legacy": lambda: "secret_" + _r(ALNUM, 43),
    "groq": lambda: "gsk_" + _r(ALNUM, 52),
    "replicate": lambda: "r8_" + _r(ALNUM, 37),
}

# Where a token can appear: {s} is the token.
TOKEN_CONTEXTS = (
    "echo {s}",
    '{{"config": {{"value": "{s}"}}}}',
    "é{s} après",
    "clé:{s}",
    "密钥{s}",
    "{s}é suivant",  # any non-token character ends a token, of any script
    "«{s}»中文",
)

# Lines that name a secret: {s} is a random password.
LABELLED = (
    ("colon", "password: {s}"),
    ("env", "PASSWORD={s} ./deploy.sh"),
    ("export", "export DB_PASSWORD={s}"),
    ("export_quoted", "export DB_PASSWORD='{s}'"),
    ("json", '{{"user": "bob", "password": "{s}"}}'),
    ("json_escaped", '{{"keystrokes": "{{\\"password\\":\\"{s}\\"}}"}}'),
    ("json_escaped_spaced", '"cmd": "echo \\"api_key\\": \\"{s}\\""'),
    ("yaml_secret_key", "secret_key: {s}"),
    ("yaml_client_secret", "  client_secret: '{s}'"),
    ("python_api_key", "api_key = '{s}'"),
    ("camel_api", "apiKey: {s}"),
    ("camel_user_password", '{{"userPassword": "{s}"}}'),
    ("camel_access_token", '{{"accessToken":"{s}"}}'),
    ("pascal_secret_access_key", "SecretAccessKey={s}"),
    ("header_api_key", "x-api-key: {s}"),
    ("flag", "deploy --password {s}"),
    ("flag_equals", "deploy --password={s}"),
    ("flag_prefixed", "psql --db-password {s}"),
    ("flag_token", "gh auth --token={s}"),
    ("flag_api_key", "tool --api-key {s}"),
    ("curl_user", "curl -u admin:{s} https://x.org"),
    ("curl_user_glued", "curl -uadmin:{s} https://x.org"),
    ("curl_user_long", "curl --user admin:{s} https://x.org"),
    ("mysql_glued", "mysql -uroot -p{s} shop"),
    ("mysqldump_glued", "mysqldump -p{s} shop > dump.sql"),
    ("sshpass", "sshpass -p {s} ssh deploy@host"),
    ("sshpass_glued", "sshpass -p{s} ssh deploy@host"),
    ("docker_login", "docker login -u bob -p {s} registry.example.com"),
    ("podman_login", "podman login -p {s} quay.io"),
    ("netrc", "machine api.example.com login bob password {s}"),
    ("netrc_lines", "machine example.org\n  login bob\n  password {s}\n"),
    ("postgres_url", "psql postgres://admin:{s}@db:5432/app"),
    ("https_url", "git clone https://bob:{s}@git.example.com/r.git"),
    ("redis_url", "redis-cli -u redis://:{s}@cache:6379"),
    ("authorization_bearer", "Authorization: Bearer {s}"),
    ("authorization_basic", "curl -H 'Authorization: Basic {s}' x"),
    ("authorization_token", 'curl -H "Authorization: token {s}" x'),
    ("cookie_header", "Cookie: theme=dark; session={s}"),
    ("set_cookie", "Set-Cookie: sid={s}; Path=/; HttpOnly"),
    ("curl_cookie_b", "curl -b 'sid={s}' https://x.org"),
    ("curl_cookie_long", 'curl --cookie "sid={s}" https://x.org'),
    (
        "azure_storage",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};"
        "EndpointSuffix=core.windows.net",
    ),
    ("azure_service_bus", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKey={s}"),
    ("sas_url", "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig={s}"),
    ("query_api_key", "GET /v1/items?api_key={s}&page=2"),
    ("query_access_token", "https://x.org/cb?access_token={s}"),
    ("urlencoded_value", "body=user%3Dbob%26password%3D{s}"),
    ("urlencoded_json", "q=%7B%22password%22%3A%22{s}%22%7D"),
    ("urlencoded_name", "user%5Bpassword%5D={s}&commit=Save"),
    ("spanish", "contraseña: {s}"),
    ("german", "Passwort={s}"),
    ("french", "mot de passe : {s}"),
    ("russian", "пароль: {s}"),
    ("chinese", "密码：{s}"),
    ("japanese", "パスワード: {s}"),
    ("korean", "비밀번호={s}"),
    ("portuguese", "senha: {s}"),
    ("polish", "hasło: {s}"),
    ("dutch", "wachtwoord = {s}"),
    ("token_colon", "token: {s}"),
    ("upper_token", "TOKEN={s}"),
    ("github_token_env", "GITHUB_TOKEN={s}"),
    ("french_secret_key", "clé secrète : {s}"),
    ("htpasswd", "htpasswd -b /etc/nginx/.htpasswd bob {s}"),
    ("htpasswd_create", "htpasswd -bc .htpasswd alice {s}"),
    ("smbclient", "smbclient //fs/share -U bob%{s}"),
    ("ldapsearch", "ldapsearch -x -D cn=admin,dc=x -w {s} -b dc=x"),
    ("openssl_pass", "openssl enc -aes-256-cbc -pass pass:{s} -in a -out b"),
    ("openssl_passin", "openssl rsa -in k.pem -passin pass:{s}"),
    ("keytool", "keytool -list -keystore ks.jks -storepass {s}"),
    ("keytool_keypass", "keytool -genkey -alias a -keypass {s} -keystore ks.jks"),
    ("ssh_keygen", "ssh-keygen -t ed25519 -N '{s}' -f id"),
    ("mongosh", "mongosh -u admin -p {s} --authenticationDatabase admin"),
    ("redis_cli", "redis-cli -h cache -a {s} ping"),
    ("password_stdin", "echo {s} | docker login -u bob --password-stdin ghcr.io"),
    ("password_stdin_quoted", "echo '{s}' | podman login --password-stdin quay.io"),
    ("sudo_stdin", "echo {s} | sudo -S systemctl restart nginx"),
    ("pgpass", "cat ~/.pgpass\ndb.example.com:5432:app:bob:{s}\n"),
    ("requests_auth", 'requests.get(url, auth=("bob", "{s}"))'),
    ("connection_pwd", "Server=db;Database=app;User Id=bob;Pwd={s};"),
    ("json_pass", '{{"user": "bob", "pass": "{s}"}}'),
    ("xml_password", "<user>bob</user><password>{s}</password>"),
    ("toml_secret_key", 'secretKey = "{s}"'),
    (
        "json_escaped_twice",
        '{{"a": "{{\\"b\\": \\"{{\\\\\\"password\\\\\\": \\\\\\"{s}\\\\\\"}}\\"}}"}}',
    ),
    ("hindi", "पासवर्ड: {s}"),
    ("thai", "รหัสผ่าน: {s}"),
    ("indonesian", "kata sandi: {s}"),
    ("ukrainian", "пароль={s}"),
    ("serbian", "лозинка: {s}"),
    ("persian", "رمز عبور: {s}"),
)


def _pem(kind: str) -> tuple[str, str]:
    body = _r(ALNUM + "+/", 64)
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----", body


def corpus() -> list[tuple[str, str, str]]:
    """Fresh ``(name, line, secret)`` shapes, at least 100 of them."""
    shapes: list[tuple[str, str, str]] = []
    for name, make in TOKENS.items():
        for i, context in enumerate(TOKEN_CONTEXTS):
            common = ("openai", "github_ghp", "aws_id", "huggingface", "stripe_live")
            if i in (0, 5, 6) or name in common:
                token = make()
                shapes.append((f"{name}/{i}", context.format(s=token), token))
    for name, template in LABELLED:
        value = _password()
        shapes.append((name, template.format(s=value), value))
    aws = _aws_secret()
    shapes.append(("aws_secret_env", f"export AWS_SECRET_ACCESS_KEY={aws}", aws))
    aws = _aws_secret()
    shapes.append(("aws_secret_ini", f"aws_secret_access_key = {aws}", aws))
    for kind in ("", "RSA ", "EC ", "OPENSSH "):
        pem, body = _pem(kind)
        shapes.append((f"pem/{kind.strip() or 'pkcs8'}", pem, body))
    pem, body = _pem("RSA ")
    shapes.append(("pem/json_escaped", json.dumps({"content": pem})[1:-1], body))
    token = TOKENS["openai"]()
    wrapped = base64.b64encode(f"OPENAI_API_KEY={token}".encode()).decode()
    shapes.append(("base64/env", f"echo {wrapped} | base64 -d", wrapped))
    value = _password()
    wrapped = base64.b64encode(f'{{"password": "{value}"}}'.encode()).decode()
    shapes.append(("base64/json", f"data:\n  creds: {wrapped}", wrapped))
    key = _r(HEX, 32)
    shapes.append(("sentry_dsn", f"SENTRY_DSN=https://{key}@o1.ingest.sentry.io/42", key))
    hook = _r(ALNUM + "_-", 68)
    shapes.append(("discord_webhook", f"https://discord.com/api/webhooks/1234567890/{hook}", hook))
    value = _password()
    shapes.append(("urlencoded_symbols", f"password={quote(value, safe='')}", quote(value)))
    return shapes


def split_across_turns() -> tuple[list[str], str]:
    """Two tool outputs: the first names the secret, the second prints it bare."""
    value = _password()
    return [f"$ cat .env\nAPI_TOKEN={value}\n", f"$ echo $API_TOKEN\n{value}\n"], value
