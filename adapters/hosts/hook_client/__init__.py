"""The hook client: the small process a command-hook host starts for each hook.

Interface (what a host's installer writes into the host's hook settings)::

    plait-hook HOST EVENT [--keep]

``HOST`` is a host name the service knows (``claude-code``: ``COMMAND_HOSTS`` in
:mod:`plait.adapters.hosts.http.host_routes`, each a :class:`~.host.CommandHost` from the host's
folder), ``EVENT`` the host's own event name (``SessionStart``). ``--keep`` marks an
event that records something (a prompt, a tool result, a compaction, a stop): the client does
not answer it before it is kept. The host's JSON arrives on stdin; the client

1. reads it (a string longer than :data:`STRING_MAX` is cut, marked; broken JSON: a one-line
   reason on stderr, nothing on stdout);
2. finds the project's ``plait serve`` (``PLAIT_URL``, a comma-separated list tried in order
   for replicas of a shared service, else ``url`` in
   ``<data_dir>/services/<project_key>.json``; token ``PLAIT_TOKEN``, else ``<data_dir>/token``;
   ``data_dir`` is ``PLAIT_DATA_DIR``, else ``$XDG_DATA_HOME/plait``, else
   ``~/.local/share/plait``; the project is ``PLAIT_PROJECT_DIR``, else the working directory);
3. posts ``{"host", "event", "payload", "call_id"}`` to ``POST /v1/host`` (HTTP, or HTTPS for
   an ``https://`` URL, the certificate checked against the system's authorities or
   ``SSL_CERT_FILE``; a path in the URL is a proxy's prefix) and prints the body of a 200 answer
   (the host's JSON answer) on stdout;
4. with no service, starts one in the background (``PLAIT_SERVE_COMMAND``, else ``plait
   serve``; a JSON list or a command line; at most once per :data:`START_INTERVAL_S`) and
   answers nothing; a ``--keep`` call
   the service did not keep (no service, or ``503``) is written, redacted, to the project's spool
   (``<data_dir>/spool/<project_key>/hook-*.jsonl``, 0600), which the service adopts and runs
   when it is up;
5. with ``PLAIT_URL`` (a service chosen, perhaps shared and remote) it starts one only when
   the URLs name this machine, and a
   ``--keep`` call no listed service kept waits, redacted, in the client's outbox
   (``<data_dir>/outbox/<project_key>/*.json``, 0600); every later hook first sends what waits
   there, oldest first with its call id, and a ``--keep`` call waits behind it until it is sent.
   The hook that keeps a call also starts the outbox's flusher (``plait-hook --flush DATA_DIR
   PROJECT_KEY``, detached, one at a time: it holds ``.flusher`` with its pid), which tries
   again every few seconds (at most 4 s apart) until the outbox is empty, so what waits is
   recorded soon after the service answers again, with no other hook to carry it; it gives up
   after :data:`FLUSHER_LIFE_S` (the next hook starts another). With several URLs, a replica
   that answered a session's ``--keep`` call "spooled" (its spool holds it) gets the session's
   next ``--keep`` calls alone until it answers one "stored", for at most ``PLAIT_HOLD_MS``
   (60 s): while it does not answer they wait in the outbox, so another replica does not store
   them before it (``<outbox>/.hold-<digest>`` names it).

It always exits 0: whatever fails, the host goes on (fail open). It imports only the standard
library on its way (plait's redaction only when it writes the spool), so it starts fast.
"""

from __future__ import annotations

from plait.adapters.hosts.hook_client._client import (
    FLUSHER_LIFE_S,
    START_INTERVAL_S,
    STRING_MAX,
    HookCall,
    main,
    run,
)

__all__ = ["FLUSHER_LIFE_S", "START_INTERVAL_S", "STRING_MAX", "HookCall", "main", "run"]
