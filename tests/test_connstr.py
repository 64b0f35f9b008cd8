"""ODBC connection strings: one tokenizer for every place that shows, logs, hashes or stores a target.

The property tests hold the security promise for any password: the masked text is the same whatever the
password was (so no part of it can show), and parsing what `render` wrote gives back the same pairs."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from queuetop.cli.config import expand
from queuetop.core.errors import UsageError
from queuetop.db import connstr
from queuetop.db.odbc import driver_name, resolve_driver, with_driver_defaults

# Passwords as users pick them: ODBC's own delimiters (; { } =), spaces, quotes and non-ASCII letters.
PASSWORDS = st.text(alphabet=st.sampled_from(list("ab}{;= '\"\\xyZ9é密🔑\t")) | st.characters(), min_size=1,
                    max_size=40)  # fmt: skip
TEMPLATE = "DRIVER={PostgreSQL Unicode};SERVER=db1.internal;PORT=5432;DATABASE=jobs;UID=ops;{secret};Encrypt=yes"


def connection_with(key: str, password: str) -> str:
    return TEMPLATE.replace("{secret}", f"{key}={connstr.quote(password)}")


@settings(max_examples=400, deadline=None)
@given(password=PASSWORDS, key=st.sampled_from(["PWD", "pwd", "Password", " PWD ", "SSLPassword", "AccessToken"]))
@example(password="=**", key="PWD")  # text the mask itself writes is no leak (the check once said it was)
def test_the_masked_text_is_the_same_whatever_the_password(password, key):
    masked = connstr.mask(connection_with(key, password))
    expected = connstr.mask(connection_with(key, "x"))
    # Which pieces of the password show, named before the whole-text comparison so a failure says what leaked.
    leaked = [password[i : i + 3] for i in range(len(password) - 2)
              if password[i : i + 3] in masked and password[i : i + 3] not in expected]  # fmt: skip
    assert not leaked, (masked, leaked)
    assert masked == expected


@settings(max_examples=300, deadline=None)
@given(pairs=st.lists(st.tuples(st.sampled_from(["DRIVER", "SERVER", "UID", "PWD", "Database", "pqopt"]),
                                PASSWORDS | st.just("")), min_size=1, max_size=6))  # fmt: skip
def test_parsing_what_render_wrote_gives_the_same_connection(pairs):
    written = connstr.render(pairs)
    assert [(p.key, p.value) for p in connstr.parse(written)] == pairs
    assert connstr.render([(p.key, p.value) for p in connstr.parse(written)]) == written


@settings(max_examples=200, deadline=None)
@given(password=PASSWORDS)
def test_a_password_inside_psqlodbc_s_libpq_options_is_masked(password):
    libpq = "'" + password.replace("\\", "\\\\").replace("'", "\\'") + "'"
    text = f"DRIVER={{PostgreSQL Unicode}};pqopt={connstr.brace(f'sslmode=require password={libpq} connect_timeout=3')}"
    masked = connstr.mask(text)
    assert masked == "DRIVER={PostgreSQL Unicode};pqopt={sslmode=require password=*** connect_timeout=3}"


@pytest.mark.parametrize(("text", "masked"), [
    ("PWD={a}}s3cr3t-VALUE}", "PWD=***"),  # the brace escape that leaked the tail before
    ("DRIVER={x};SERVER=db;UID=ops;PWD=p;Encrypt=yes;password={q;r}", "DRIVER={x};SERVER=db;UID=ops;PWD=***;"
                                                                       "Encrypt=yes;password=***"),
    ("SERVER=db; Pwd = hunter2 ;UID=ops", "SERVER=db; Pwd = ***;UID=ops"),
    ("PWD={never closed;UID=ops", "PWD=***"),  # an open brace runs to the end: hidden, never shown
    ("PWD={ab}trailing;UID=ops", "PWD=***;UID=ops"),  # text after a closing brace belongs to the value
    ("DRIVER={y};KeyStoreSecret=k;Authentication=ActiveDirectoryPassword", "DRIVER={y};KeyStoreSecret=***;"
                                                                           "Authentication=ActiveDirectoryPassword"),
    ("pqopt={password='never closed}", "pqopt={***}"),  # libpq options it cannot read: all hidden
])  # fmt: skip
def test_masking_examples(text, masked):
    assert connstr.mask(text) == masked


def test_keys_are_read_as_odbc_compares_them():
    text = " driver = {ODBC Driver 18 for SQL Server} ;Dsn=x;SERVER={a;b}}c}"
    assert connstr.get(text, "DRIVER") == "ODBC Driver 18 for SQL Server"
    assert connstr.get(text, "server") == "a;b}c"
    assert connstr.get(text, "uid") is None
    assert connstr.keys(text) == {"driver", "dsn", "server"}
    assert driver_name("PWD={DRIVER=evil};DRIVER={PostgreSQL Unicode}") == "PostgreSQL Unicode"


def test_a_driver_s_defaults_and_its_path_are_written_as_values(tmp_path):
    text = "DRIVER={PostgreSQL Unicode};PWD={x;Protocol=y}"  # a key's name inside a password is not that key
    assert with_driver_defaults(text, dict) == text + ";Protocol=7.4-1;UseServerSidePrepare=0"
    assert resolve_driver("DRIVER=/opt/lib.so;PWD={a}}b}", []) == "DRIVER=/opt/lib.so;PWD={a}}b}"


@pytest.mark.parametrize(("written", "secret", "password"), [
    ("PWD=${QT_PW}", "{a}}b;c}", "a}b;c"),  # the variable holds an ODBC braced value: taken as written
    ("PWD=${QT_PW}", "a;b}c", "a;b}c"),  # a bare value that needs braces gets them
    ("PWD={${QT_PW}}", "a}b;c", "a}b;c"),  # braces in the file: the variable's `}` escaped for them
    ("PWD=${QT_PW}", "plain", "plain"),
])  # fmt: skip
def test_a_secret_from_the_environment_stays_one_value(written, secret, password):
    db = f"DRIVER={{PostgreSQL Unicode}};SERVER=db;{written};UID=ops"
    expanded = expand(db, "here", {"QT_PW": secret}, connection_string=True)
    assert connstr.get(expanded, "pwd") == password
    assert connstr.get(expanded, "uid") == "ops"
    assert connstr.mask(expanded) == "DRIVER={PostgreSQL Unicode};SERVER=db;PWD=***;UID=ops"


def test_a_missing_variable_in_a_connection_string_is_named():
    with pytest.raises(UsageError, match=r"needs \$NOPE"):
        expand("SERVER=${NOPE};PWD=${X}", "here", {"X": "1"}, connection_string=True)
