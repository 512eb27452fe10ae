"""The workbench's HTTP adapter: the standard library's threading HTTP server (SPEC §12).

``http.server`` parses requests; this module only decides who may ask and
what they may send, then hands the body to ``dcx.ops.workbench``. Each
request is checked in this order, first failure wins:

1. the Host header must name this server (``127.0.0.1:PORT`` or
   ``localhost:PORT``) — 421 otherwise, against DNS rebinding;
2. the per-run token must match (``?token=`` for the page, ``X-DCX-Token``
   for the API) — 403;
3. POSTs only: a same-origin ``Origin`` (403), ``Content-Type:
   application/json`` (415), a ``Content-Length`` (411) of at most 64 KiB
   (413), a JSON object without duplicate keys (400).

Answers are the ``dcx_result_v0`` / ``dcx_error_v0`` envelopes that
``--format json`` prints. Nothing is logged: the request line holds the
token, and bodies hold the posted configuration and the query.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
import socket
import sys
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from dcx.core.clock import Clock
from dcx.core.errors import DcxError, InternalError, InvalidInput
from dcx.core.result import Result
from dcx.ops import workbench as ops
from dcx.providers.reasons import hint as reason_hint
from dcx.web.page import render_page

MAX_BODY = 64 * 1024
# a request whose client stops sending is dropped after this many seconds; and a request (or
# an idle keep-alive connection) that has not fully arrived this long after it began is dropped
# too, however steadily it trickles in (SPEC §12 v4)
SOCKET_TIMEOUT = 15
REQUEST_DEADLINE = 15
HOST = "127.0.0.1"
# http.server's own refusals (a request line or header it cannot parse, an unknown method),
# answered by dcx's error page as the codes below; the raw request is never echoed
HTTP_ERROR_CODES = {
    400: "bad_request",
    408: "request_timeout",
    414: "uri_too_long",
    431: "headers_too_large",
    501: "method_not_allowed",
    505: "http_version_not_supported",
}


def strict_json(raw: bytes) -> Any:
    """Parse a JSON body; refuses duplicate keys and non-UTF-8 bytes (400 naming the problem)."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise InvalidInput(
                    f"{key}: duplicate key in the request body", field=key, code="duplicate_key"
                )
            out[key] = value
        return out

    try:
        text = raw.decode("utf-8")
        value = json.loads(text, object_pairs_hook=pairs)
    except UnicodeDecodeError:
        raise InvalidInput("request body: not UTF-8", code="invalid_json") from None
    except (ValueError, RecursionError):
        raise InvalidInput("request body: not valid JSON", code="invalid_json") from None
    if not isinstance(value, dict):
        raise InvalidInput("request body: must be a JSON object", code="invalid_json")
    return value


class WorkbenchServer(ThreadingHTTPServer):
    daemon_threads = True  # a hung provider call never keeps the process alive after Ctrl-C
    allow_reuse_address = True

    def __init__(self, session: ops.Session, *, port: int, clock: Callable[[], Clock]) -> None:
        self.session = session
        self.clock = clock
        self.token = secrets.token_urlsafe(32)
        super().__init__((HOST, port), Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def allowed_hosts(self) -> tuple[str, ...]:
        return (f"127.0.0.1:{self.port}", f"localhost:{self.port}")

    def allowed_origins(self) -> tuple[str, ...]:
        return tuple(f"http://{host}" for host in self.allowed_hosts())

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line naming the exception type, never a traceback (its text may quote a request)."""
        kind = type(sys.exc_info()[1]).__name__
        sys.stderr.write(f"workbench: a connection failed ({kind})\n")
        sys.stderr.flush()

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="dcx-workbench", daemon=True)
        thread.start()
        return thread


class Refusal(Exception):
    def __init__(self, status: HTTPStatus, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class _Expired(Exception):
    """The request did not arrive in time; its connection is already shut."""


class Handler(BaseHTTPRequestHandler):
    server: WorkbenchServer
    timeout = SOCKET_TIMEOUT
    server_version = "dcx-workbench"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    default_request_version = "HTTP/1.1"  # so even a refused request line gets headers

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the request line carries the token."""

    # --- the deadline of one request (SPEC §12 v4) ---------------------------

    def handle_one_request(self) -> None:
        self._arrival = threading.Lock()
        self._arrived = self._expired = False
        timer = threading.Timer(REQUEST_DEADLINE, self._expire)
        timer.daemon = True
        timer.start()
        try:
            super().handle_one_request()
        finally:
            timer.cancel()

    def _expire(self) -> None:
        with self._arrival:
            if self._arrived:
                return
            self._expired = True
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

    def _request_read(self) -> None:
        """The whole request is in: the deadline stops; too late is ``_Expired``."""
        with self._arrival:
            self._arrived = True
            if self._expired:
                raise _Expired

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's refusals through dcx's own answer: JSON, the same CSP and nosniff."""
        self.close_connection = True
        try:
            self._request_read()
        except _Expired:
            return
        status = HTTPStatus(code)
        error = DcxError(status.phrase, code=HTTP_ERROR_CODES.get(code, "bad_request"))
        self._send_json(status, error.envelope())

    # --- checks -----------------------------------------------------------

    def _check_host(self) -> None:
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1 or hosts[0] not in self.server.allowed_hosts():
            raise Refusal(
                HTTPStatus.MISDIRECTED_REQUEST,
                "host_refused",
                "this server answers only to its own address",
            )

    def _check_token(self, given: str | None) -> None:
        if not given or not hmac.compare_digest(given.encode(), self.server.token.encode()):
            raise Refusal(HTTPStatus.FORBIDDEN, "token_refused", "missing or wrong workbench token")

    def _read_body(self) -> dict[str, Any]:
        if self.headers.get("Origin") not in self.server.allowed_origins():
            raise Refusal(
                HTTPStatus.FORBIDDEN, "origin_refused", "cross-origin requests are refused"
            )
        media = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            raise Refusal(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                "json_required",
                "send Content-Type: application/json",
            )
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise Refusal(HTTPStatus.LENGTH_REQUIRED, "length_required", "send a Content-Length")
        if int(length) > MAX_BODY:
            raise Refusal(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                "body_too_large",
                f"bodies are at most {MAX_BODY} bytes",
            )
        raw = self.rfile.read(int(length))
        self._request_read()
        return strict_json(raw)

    # --- answers ----------------------------------------------------------

    def _send(
        self,
        status: HTTPStatus,
        body: bytes,
        content_type: str,
        *,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_json(self, status: HTTPStatus, value: Any) -> None:
        body = json.dumps(value, sort_keys=True, ensure_ascii=True).encode()
        self._send(
            status,
            body,
            "application/json; charset=utf-8",
            extra={"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'"},
        )

    def _send_refusal(self, refusal: Refusal) -> None:
        self.close_connection = True
        try:
            self._request_read()  # a refusal answers before the body: the deadline stops here
        except _Expired:
            return
        self._send_json(refusal.status, DcxError(refusal.message, code=refusal.code).envelope())

    # --- methods ----------------------------------------------------------

    def do_GET(self) -> None:
        try:
            self._request_read()
        except _Expired:
            return
        try:
            self._check_host()
            parts = urlsplit(self.path)
            tokens = parse_qs(parts.query).get("token") or []
            self._check_token(tokens[0] if tokens else None)
            if parts.path != "/":
                raise Refusal(HTTPStatus.NOT_FOUND, "not_found", "no such page")
        except Refusal as refusal:
            self._send_refusal(refusal)
            return
        nonce = secrets.token_urlsafe(18)
        page = render_page(
            nonce=nonce,
            profile_text=self.server.session.profile_text,
            agent_id=self.server.session.agent_id,
            goal_id=self.server.session.ws.goal_id,
        )
        csp = (
            f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
            "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
        self._send(
            HTTPStatus.OK,
            page.encode(),
            "text/html; charset=utf-8",
            extra={"Content-Security-Policy": csp},
        )

    do_HEAD = do_GET

    def do_POST(self) -> None:
        try:
            self._check_host()
            self._check_token(self.headers.get("X-DCX-Token"))
            route = ROUTES.get(urlsplit(self.path).path)
            if route is None:
                raise Refusal(HTTPStatus.NOT_FOUND, "not_found", "no such API call")
            body = self._read_body()
        except _Expired:
            return
        except Refusal as refusal:
            self._send_refusal(refusal)
            return
        except InvalidInput as exc:
            self._send_json(HTTPStatus.BAD_REQUEST, exc.envelope())
            return
        self._answer(route, body)

    def _answer(
        self, route: Callable[[WorkbenchServer, dict[str, Any]], Result], body: dict[str, Any]
    ) -> None:
        try:
            result = route(self.server, body)
        except DcxError as exc:
            internal = isinstance(exc, InternalError) or exc.code == "internal_error"
            status = HTTPStatus.INTERNAL_SERVER_ERROR if internal else HTTPStatus.BAD_REQUEST
            self._send_json(status, exc.envelope())
            return
        except Exception as exc:
            # one line, the type only: an exception's text may carry the posted config or the query
            sys.stderr.write(f"workbench: internal error ({type(exc).__name__})\n")
            sys.stderr.flush()
            self._send_json(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                InternalError(f"internal error ({type(exc).__name__})").envelope(),
            )
            return
        envelope = result.envelope()
        if isinstance(result.data, dict) and result.data.get("reason_code"):
            envelope["hint"] = reason_hint(result.data["reason_code"])
        if result.text_only:  # the page is a view for the person at this host, as text is
            envelope["view"] = result.text_only
        self._send_json(HTTPStatus.OK, envelope)

    def _method_not_allowed(self) -> None:
        try:
            self._check_host()
        except Refusal as refusal:
            self._send_refusal(refusal)
            return
        self._send_refusal(
            Refusal(
                HTTPStatus.METHOD_NOT_ALLOWED, "method_not_allowed", "GET / and POST /api/… only"
            )
        )

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _method_not_allowed


def _inspect(server: WorkbenchServer, body: dict[str, Any]) -> Result:
    return ops.inspect(ws=server.session.ws, agent_id=server.session.agent_id, body=body)


def _recall(server: WorkbenchServer, body: dict[str, Any]) -> Result:
    return ops.recall(
        ws=server.session.ws, agent_id=server.session.agent_id, body=body, clock=server.clock()
    )


ROUTES: dict[str, Callable[[WorkbenchServer, dict[str, Any]], Result]] = {
    "/api/inspect": _inspect,
    "/api/recall": _recall,
}
