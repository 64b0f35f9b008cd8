"""The config file and the effective settings: what each command runs with, and where each value came from.

`~/.config/queuetop/config.toml` (or `--config FILE`, or `$QUEUETOP_CONFIG`) names targets and sets defaults:

    interval = 2                       # defaults for every target
    default_target = "prod"            # used when no -t and no --db / $QUEUETOP_DB is given
    [slo]                              # SLOs for every job type of every target
    max_oldest_age_s = 300
    [targets.prod]
    db = "DRIVER={ODBC Driver 18 for SQL Server};SERVER=db1;DATABASE=jobs;UID=ops;PWD=${PROD_QUEUE_PWD}"
    layout = "job_queue"
    read_only = true
    [targets.prod.slo]
    max_depth = 5000
    [targets.prod.slo.types.email]     # one job type's own limits beat the defaults
    max_wait_p95_s = 30

Secrets come from the environment: `${NAME}` is replaced by the variable's value when the target is used (a
missing variable is an error naming it), and a password written into the file is refused, so the file can be
shared and committed. Precedence, per setting: the command line, then the environment (`$QUEUETOP_DB`,
`$QUEUETOP_LAYOUT`), then the file (the target's section, then the file's top level), then the built-in default.
Naming a target with `-t NAME` is a command-line choice, so where that target keeps its queue (db, layout,
table, completed_table) beats `$QUEUETOP_DB` and `$QUEUETOP_LAYOUT`; a `default_target` from the file does not.
SLOs add up the same way, limit by limit: the command line's beat the target's, which beat the file's top level.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from queuetop.core.errors import UsageError
from queuetop.core.files import writable_by_others
from queuetop.db import connstr
from queuetop.db.target import ENV_VAR as DB_ENV_VAR
from queuetop.watch.slo import Limit, Slo, Slos

CONFIG_ENV_VAR = "QUEUETOP_CONFIG"
LAYOUT_ENV_VAR = "QUEUETOP_LAYOUT"


class Origin(Enum):
    COMMAND_LINE = "command line"
    ENVIRONMENT = "environment"
    FILE = "config file"
    DEFAULT = "default"


# name -> (built-in default, type, environment variable)
SETTINGS: dict[str, tuple[Any, type, str | None]] = {
    "db": (None, str, DB_ENV_VAR),
    "layout": (None, str, LAYOUT_ENV_VAR),
    "table": (None, str, None),
    "completed_table": (None, str, None),
    "interval": (1.0, float, None),
    "read_only": (False, bool, None),
    "lost_after": (60.0, float, None),
}
RANGES = {"interval": (0.1, 3600.0), "lost_after": (0.001, 10.0**7)}  # as the command line's checks
WHERE_THE_QUEUE_IS = ("db", "layout", "table", "completed_table")  # what -t NAME chooses, over the environment
TOP_LEVEL_ONLY = ("default_target", "targets", "slo")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def default_config_path() -> Path:
    """`~/.config/queuetop/config.toml` on Linux (the platform's user config directory elsewhere)."""
    from platformdirs import user_config_path

    return user_config_path("queuetop", appauthor=False) / "config.toml"


@dataclass(frozen=True)
class Setting:
    value: Any
    origin: Origin
    where: str  # "--db", "$QUEUETOP_DB", "/home/ops/.config/queuetop/config.toml [targets.prod]", "built in"


@dataclass(frozen=True)
class ConfigFile:
    """A config file as written: `${VAR}` not yet expanded (only the target in use is)."""

    path: Path | None = None  # None: no file (the default path holds none)
    top: Mapping[str, Any] = field(default_factory=dict)
    slos: Slos = field(default_factory=Slos)
    targets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    target_slos: Mapping[str, Slos] = field(default_factory=dict)
    default_target: str | None = None
    warning: str | None = None  # said once on stderr: the file can be written by others

    def where(self, target: str | None = None) -> str:
        """Where in the file (the file itself is named once, at the top of `queuetop config`)."""
        return f"[targets.{target}]" if target else "top level"


def find_config(explicit: str | None, environ: Mapping[str, str] | None = None) -> tuple[Path, bool]:
    """The file to read and whether the user named it (a named file must exist; the default one may not)."""
    environ = os.environ if environ is None else environ
    if explicit:
        return Path(explicit).expanduser(), True
    if environ.get(CONFIG_ENV_VAR):
        return Path(environ[CONFIG_ENV_VAR]).expanduser(), True
    return default_config_path(), False


def load_config(path: Path, required: bool) -> ConfigFile:
    """Read and check a config file. Unknown keys are errors (a typo must not silently do nothing)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if required:
            raise UsageError(f"the config file {path} does not exist",
                             "check the path given to --config or $QUEUETOP_CONFIG") from None  # fmt: skip
        return ConfigFile()
    except OSError as exc:
        raise UsageError(f"cannot read the config file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        line = _line_of(path.read_bytes(), exc.start)
        raise UsageError(f"the config file {path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} on line "
                         f"{line})", "save it as UTF-8") from None  # fmt: skip
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"the config file {path} is not valid TOML: {exc}") from None
    mode = writable_by_others(path)
    warning = (f"the config file {path} can be written by others (mode {mode}): whoever writes it chooses the "
               f"database queuetop connects to; `chmod go-w {path}`") if mode else None  # fmt: skip
    top = {k: v for k, v in data.items() if k not in TOP_LEVEL_ONLY}
    _check_settings(top, f"{path}", allow_db=False)
    targets = data.get("targets", {})
    if not isinstance(targets, dict):
        raise UsageError(f"{path}: `targets` must be a table of named targets, like [targets.prod]")
    target_settings, target_slos = {}, {}
    for name, section in targets.items():
        where = f"{path} [targets.{name}]"
        if not isinstance(section, dict):
            raise UsageError(f"{where} must be a table with at least db = \"...\"")
        settings = {k: v for k, v in section.items() if k != "slo"}
        _check_settings(settings, where, allow_db=True)
        if "db" not in settings:
            raise UsageError(f"{where} has no db", 'add db = "<connection string or file>"')
        _refuse_literal_password(settings["db"], where)
        target_settings[name] = settings
        target_slos[name] = parse_slos(section.get("slo", {}), f"{where}.slo", f"config file [targets.{name}.slo]")
    default_target = data.get("default_target")
    if default_target is not None and default_target not in target_settings:
        raise UsageError(f"{path}: default_target {default_target!r} is not one of its targets",
                         f"targets: {', '.join(target_settings) or 'none'}")  # fmt: skip
    return ConfigFile(path, top, parse_slos(data.get("slo", {}), f"{path} [slo]", "config file [slo]"),
                      target_settings, target_slos, default_target, warning)  # fmt: skip


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _check_settings(values: Mapping[str, Any], where: str, allow_db: bool) -> None:
    for key, value in values.items():
        if key not in SETTINGS or (key == "db" and not allow_db):
            known = [k for k in SETTINGS if allow_db or k != "db"]
            extra = ", slo" + ("" if allow_db else ", targets, default_target")
            raise UsageError(f"{where}: unknown setting {key!r}", f"known: {', '.join(known)}{extra}")
        kind = SETTINGS[key][1]
        ok = isinstance(value, bool) if kind is bool else (
            isinstance(value, int | float) and not isinstance(value, bool) if kind is float else isinstance(value, str))
        if not ok:
            raise UsageError(f"{where}: {key} must be {_kind_words(kind)}, not {value!r}")
        low, high = RANGES.get(key, (None, None))
        if low is not None and not low <= value <= high:
            raise UsageError(f"{where}: {key} must be from {low:g} to {high:g} seconds, not {value!r}")


def _kind_words(kind: type) -> str:
    return {bool: "true or false", float: "a number", str: "a quoted string"}[kind]


def _refuse_literal_password(db: str, where: str) -> None:
    hidden, _ = _hide_variables(db)
    for pair in connstr.parse(hidden):
        secret = pair.value.strip()
        if connstr.is_secret(pair.name) and secret and not (len(secret) == 1 and _HIDDEN.match(secret)):
            raise UsageError(f"{where}: db holds a password ({pair.key}=...) written into the file",
                             f"put it in the environment and write {pair.key}=${{NAME_OF_THE_VARIABLE}} "
                             f"(or {pair.key}={{${{NAME}}}} when it holds ; or }})")


def parse_slos(section: Any, where: str, source: str) -> Slos:
    """`{max_depth = 10, types = {email = {max_depth = 5}}}` → Slos; every name and value checked."""
    if not isinstance(section, dict):
        raise UsageError(f"{where} must be a table of SLOs, like max_oldest_age_s = 60")
    limits = [_limit(name, value, None, where, source) for name, value in section.items() if name != "types"]
    types = section.get("types", {})
    if not isinstance(types, dict) or not all(isinstance(v, dict) for v in types.values()):
        raise UsageError(f"{where}.types must hold one table per job type, like [slo.types.email]")
    for job_type, own in types.items():
        limits += [_limit(name, value, job_type, f"{where}.types.{job_type}", source) for name, value in own.items()]
    return Slos(tuple(limits))


def _limit(name: str, value: Any, job_type: str | None, where: str, source: str) -> Limit:
    try:
        slo = Slo(name)
    except ValueError:
        raise UsageError(f"{where}: unknown SLO {name!r}", f"known: {', '.join(s.value for s in Slo)}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise UsageError(f"{where}: {name} must be a number, zero or more, not {value!r}")
    return Limit(slo, float(value), job_type, source)


def slo_from_option(text: str) -> Limit:
    """`--slo [TYPE:]NAME=VALUE`: one limit from the command line."""
    job_type, _, rest = text.rpartition(":") if ":" in text.partition("=")[0] else (None, "", text)
    name, sep, value = rest.partition("=")
    if not sep:
        raise UsageError(f"--slo {text!r} needs NAME=VALUE", "e.g. --slo max_depth=100 or --slo email:max_depth=100")
    try:
        number = float(value)
    except ValueError:
        raise UsageError(f"--slo {text!r}: {value!r} is not a number") from None
    return _limit(name.strip(), number, job_type or None, "--slo", "command line (--slo)")


def expand(value: Any, where: str, environ: Mapping[str, str], *, connection_string: bool = False) -> Any:
    """`${NAME}` in a string replaced by the environment variable's value; a missing one is an error.

    In a connection string a variable is expanded as a value, so a password holding `;` or `}` stays one value:
    inside braces (`PWD={${NAME}}`) the value is escaped for them; bare (`PWD=${NAME}`) it is taken as written
    when it is itself a braced ODBC value (`{a}}b;c}`), else braced when it needs to be."""
    if not isinstance(value, str):
        return value

    def value_of(name: str) -> str:
        if name not in environ:
            raise UsageError(f"{where} needs ${name}, which is not set in the environment",
                             f"export {name}=... before running queuetop; secrets are never kept in the file")
        return environ[name]

    if not connection_string or "=" not in value:
        return _VARIABLE.sub(lambda match: value_of(match.group(1)), value)
    # `${NAME}` stands in the text as one character the tokenizer passes over, so `PWD={${NAME}}` reads as a
    # braced variable, not as `}}` (an escaped brace) after `${NAME`.
    hidden, names = _hide_variables(value)

    def restore(text: str) -> str:
        return _HIDDEN.sub(lambda match: value_of(names[ord(match.group()) - _FIRST_HIDDEN]), text)

    out, last = [], 0
    for pair in connstr.parse(hidden):
        written = hidden[pair.start : pair.end]
        if _HIDDEN.search(written):
            expanded = restore(pair.value)
            written = connstr.brace(expanded) if pair.braced else \
                expanded if connstr.is_braced(expanded) else connstr.quote(expanded)  # fmt: skip
        out += [restore(hidden[last : pair.start]), written]
        last = pair.end
    return "".join(out) + restore(hidden[last:])


_FIRST_HIDDEN = 0xF0000  # Unicode's private use plane: never in a connection string a user writes
_HIDDEN = re.compile("[\U000F0000-\U000FFFFD]")


def _hide_variables(text: str) -> tuple[str, list[str]]:
    """`text` with each `${NAME}` replaced by one private-use character; the names, in order."""
    names: list[str] = []

    def hide(match: re.Match[str]) -> str:
        names.append(match.group(1))
        return chr(_FIRST_HIDDEN + len(names) - 1)

    return _VARIABLE.sub(hide, text), names


# -- the effective settings ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Effective:
    """What one command runs with for one target, and where each value came from."""

    target: str | None  # the named target, or None (--db, $QUEUETOP_DB or the embedded default)
    target_origin: str  # how the target was chosen: "-t prod", "default_target in <file>", ...
    config_path: Path | None
    settings: Mapping[str, Setting]
    slos: Slos

    def __getitem__(self, name: str) -> Any:
        return self.settings[name].value

    def lines(self) -> list[str]:
        """For `queuetop config`: every setting and SLO, where it came from, passwords masked."""
        out = [f"target: {self.target or '(unnamed)'}  ({self.target_origin})"]
        for name, setting in self.settings.items():
            out.append(f"  {name:<16} {shown(name, setting.value):<48} {setting.origin.value}: {setting.where}")
        if self.slos:
            out.append("  SLOs:")
            for limit in self.slos.limits:
                scope = limit.job_type or "every type"
                out.append(f"    {limit.slo.value:<22} {scope:<16} {_number(limit.value):<12} {limit.source}")
        else:
            out.append("  SLOs: none (set them in the config file's [slo] or with --max-oldest-age, --slo ...)")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "chosen_by": self.target_origin,
                "settings": {name: {"value": _masked(name, s.value), "origin": s.origin.value, "where": s.where}
                             for name, s in self.settings.items()},
                "slos": [{"slo": lim.slo.value, "job_type": lim.job_type, "limit": lim.value, "source": lim.source}
                         for lim in self.slos.limits]}  # fmt: skip


def _masked(name: str, value: Any) -> Any:
    return connstr.mask(value) if name == "db" and isinstance(value, str) else value


def shown(name: str, value: Any) -> str:
    if value is None:
        return {"db": "— (the embedded SQLite file)", "layout": "— (the native schema, else the table found)",
                "table": "— (the layout's own)", "completed_table": "— (the layout's own)"}.get(name, "—")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _number(value)
    return str(_masked(name, value))


def _number(value: float) -> str:
    return f"{value:g}"


def resolve(cli: Mapping[str, Any], file: ConfigFile, target: str | None, *, cli_slos: Slos | None = None,
            environ: Mapping[str, str] | None = None, chosen_by: str | None = None) -> Effective:  # fmt: skip
    """The settings for one target. `cli` maps setting names to what the command line gave (None: not given);
    `target` is the name given with -t (None: the file's default_target, if the command line and the
    environment do not name a database)."""
    environ = os.environ if environ is None else environ
    chosen_on_cli = target is not None
    origin = chosen_by or f"-t {target}" if chosen_on_cli else ""
    if target is not None and target not in file.targets:
        names = ", ".join(file.targets) or "none"
        where = file.path or "no config file was found"
        raise UsageError(f"no target named {target!r} in {where}", f"targets: {names}; see `queuetop config`")
    if chosen_on_cli and cli.get("db") is not None:
        raise UsageError(f"-t {target} and --db both name a database", "give one of them")
    if target is None and file.default_target and cli.get("db") is None and not environ.get(DB_ENV_VAR):
        target, origin = file.default_target, f"default_target in {file.path}"
    if target is None:
        origin = "--db" if cli.get("db") is not None else f"${DB_ENV_VAR}" if environ.get(DB_ENV_VAR) else \
            "no target named: the embedded default"  # fmt: skip
    section = file.targets.get(target, {}) if target else {}
    settings: dict[str, Setting] = {}
    for name, (default, kind, env_var) in SETTINGS.items():
        settings[name] = _pick(name, default, kind, env_var, cli.get(name), section, file, target,
                               chosen_on_cli, environ)  # fmt: skip
    slos = file.slos
    if target:
        slos = file.target_slos.get(target, Slos()).over(slos)
    return Effective(target, origin, file.path, settings, (cli_slos or Slos()).over(slos))


def _pick(name: str, default: Any, kind: type, env_var: str | None, given: Any, section: Mapping[str, Any],
          file: ConfigFile, target: str | None, chosen_on_cli: bool,
          environ: Mapping[str, str]) -> Setting:  # fmt: skip
    if given is not None:
        return Setting(given, Origin.COMMAND_LINE, "--" + name.replace("_", "-"))
    in_target = name in section

    def in_section() -> Any:
        return expand(section[name], f"{file.path} {file.where(target)} {name}", environ,
                      connection_string=name == "db")  # fmt: skip

    if in_target and chosen_on_cli and name in WHERE_THE_QUEUE_IS:
        return Setting(in_section(), Origin.FILE, file.where(target) + " (chosen on the command line)")
    if env_var and environ.get(env_var):
        return Setting(environ[env_var], Origin.ENVIRONMENT, f"${env_var}")
    if in_target:
        value = in_section()
        return Setting(float(value) if kind is float else value, Origin.FILE, file.where(target))
    if name in file.top:
        value = expand(file.top[name], f"{file.path} {name}", environ)
        return Setting(float(value) if kind is float else value, Origin.FILE, file.where())
    return Setting(default, Origin.DEFAULT, "built in")


def targets_to_use(names: Sequence[str], all_targets: bool, file: ConfigFile) -> list[str | None]:
    """The targets a command runs on: those named with -t, every one in the file with --all, else one unnamed."""
    if all_targets:
        if not file.targets:
            raise UsageError("--all: the config file names no targets" if file.path else "--all: there is no config "
                             "file", f"add [targets.NAME] sections to {file.path or default_config_path()}")
        return list(file.targets)
    return list(dict.fromkeys(names)) or [None]
