"""Words that name a secret: in text (``password:``, ``пароль=``) and as JSON keys.

:data:`SECRET_WORDS` and :data:`LOCAL_WORDS` are regular-expression alternations
used by the rules of :mod:`aw_lookahead.redact.rules`; :func:`secret_field`
tells which keys of a record name a secret whatever their value looks like.
"""

from __future__ import annotations

import re

__all__ = ["LOCAL_WORDS", "SECRET_WORDS", "secret_field"]

# Names that say "this value is a secret", shared by text assignments and JSON keys.
SECRET_WORDS = (
    r"password|passwd|passphrase|secret|token|credentials?|"
    r"api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key"
)
# The same in other languages (labels in config files, prompts and tool output).
LOCAL_WORDS = (
    "passwort|kennwort|contraseña|contrasena|senha|mot de passe|mot_de_passe|motdepasse|"
    "wachtwoord|hasło|haslo|lösenord|losenord|salasana|adgangskode|passord|parola|şifre|sifre|"
    "heslo|jelszó|clé secrète|clave secreta|chave secreta|пароль|密码|密碼|口令|"
    "パスワード|비밀번호|κωδικός|סיסמה|كلمة المرور|mật khẩu|पासवर्ड|รหัสผ่าน|kata sandi|"
    "kata laluan|كلمة السر|رمز عبور|лозинка|lozinka|geslo|parool|slaptažodis|contrasenya"
)
_FIELD_NAME = re.compile(
    rf"(?:^|[_.\- ])(?:{SECRET_WORDS}|{LOCAL_WORDS}|pwd|authorization|cookie|"
    r"account_?key|shared_?access_?key|connection_?string|session_?id|sessid)"
    r"(?:[_-](?:key|value|hash|b64|base64))?$"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def secret_field(name: str) -> bool:
    """Whether a JSON key names a secret whatever its value looks like.

    Words are found in snake, kebab, dotted and camel case alike (``password``,
    ``userPassword``, ``SecretAccessKey``, ``x-api-key``, ``db.client_secret``),
    and upper-case environment names ending in ``_KEY`` count too.
    """
    if re.fullmatch(r"[A-Z0-9_]*_KEY", name):
        return True
    return _FIELD_NAME.search(_CAMEL.sub("_", name).lower()) is not None
