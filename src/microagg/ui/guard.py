"""Who may talk to the web app: an ASGI middleware in front of Shiny that checks every HTTP
and WebSocket request.

- **Host**: a loopback name (``localhost``, ``127.0.0.1``, ``::1``), the address the server
  is bound to, or a name given with ``--allow-host``. Anything else is answered 403: a page
  on another site that points a name of its own at this machine (DNS rebinding) is refused.
- **Origin**: when a browser sends one, it names the same host and port as ``Host``.
  Otherwise 403 (HTTP) or the WebSocket is closed before it opens: another site's page
  cannot open a session on the app (cross-site WebSocket).
- **Token** (required for an address beyond loopback, optional on it): every request
  carries it, in the cookie set after a first visit to ``/?token=TOKEN``, or in the header
  ``X-Microagg-Token``. Without it, 403.
- **Upload size**: a file sent to the app's upload address over :attr:`Guard.max_upload`
  bytes is answered 413 before the rest is read.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

__all__ = ["COOKIE", "HEADER", "LOOPBACK", "Guard", "is_loopback"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
COOKIE = "microagg_token"
HEADER = "x-microagg-token"


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves this machine only (a loopback name or address)."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_name(value: str) -> str:
    """The name in a Host header (``[::1]:8000`` → ``::1``, ``Example:80`` → ``example``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class _TooLarge(Exception):
    """An upload passed the limit while it was read."""


class Guard:
    """The middleware (see the module docstring) around the ASGI ``app``."""

    def __init__(self, app: ASGIApp, *, bound: str = "127.0.0.1",
                 allow_hosts: Iterable[str] = (), token: str | None = None,
                 max_upload: int | None = None) -> None:
        self.app = app
        self.hosts = set(LOOPBACK) | {_host_name(h) for h in allow_hosts if h.strip()}
        if bound.strip("[]") not in ("0.0.0.0", "::", ""):
            self.hosts.add(_host_name(bound if ":" not in bound.strip("[]")
                                      else f"[{bound.strip('[]')}]"))
        self.token = token or None
        self.max_upload = max_upload

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        refusal = self._refusal(headers)
        if refusal is None and self.token is not None:
            granted = self._token_of(scope, headers)
            if granted == "query" and scope["type"] == "http" and scope["method"] == "GET":
                await self._set_cookie(scope, send)
                return
            if granted is None:
                refusal = ("this server needs its token: open the address it printed when "
                           "it started (…/?token=…)")
        if refusal is not None:
            await self._refuse(scope, send, 403, refusal)
            return
        if scope["type"] == "http" and self._is_upload(scope):
            await self._upload(scope, receive, send, headers)
            return
        await self.app(scope, receive, send)

    def _refusal(self, headers: dict[str, str]) -> str | None:
        """Why the Host or the Origin of a request is refused, or ``None``."""
        host = headers.get("host", "")
        if _host_name(host) not in self.hosts:
            return (f"host {host!r} is not served here (serve it with --allow-host "
                    f"{_host_name(host) or 'NAME'})")
        origin = headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or parts.netloc.lower() != host.lower():
                return f"requests from {origin!r} are not accepted (another site's page)"
        return None

    def _token_of(self, scope: Scope, headers: dict[str, str]) -> str | None:
        """Where the request carries the right token (``header``, ``cookie``, ``query``)."""
        assert self.token is not None
        if hmac.compare_digest(headers.get(HEADER, "").encode(), self.token.encode()):
            return "header"
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header carries no token
            cookie = SimpleCookie()
        if COOKIE in cookie and hmac.compare_digest(cookie[COOKIE].value.encode(),
                                                    self.token.encode()):
            return "cookie"
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if hmac.compare_digest(query.get("token", "").encode(), self.token.encode()):
            return "query"
        return None

    async def _set_cookie(self, scope: Scope, send: Send) -> None:
        """A first visit with ``?token=``: the cookie is set and the address given again
        without the token (so that it stays out of the history and the page's links)."""
        query = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"))
                 if k != "token"]
        location = (scope.get("root_path", "") + scope["path"]
                    + (f"?{urlencode(query)}" if query else ""))
        await send({"type": "http.response.start", "status": 303, "headers": [
            (b"location", location.encode("latin-1")),
            (b"set-cookie", f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; "
                            "Path=/".encode("latin-1")),
            (b"cache-control", b"no-store"), (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    @staticmethod
    async def _refuse(scope: Scope, send: Send, status: int, text: str) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: 403
            return
        body = f"{text}\n".encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    def _is_upload(self, scope: Scope) -> bool:
        return (self.max_upload is not None and scope.get("method") == "POST"
                and "/upload/" in scope.get("path", ""))

    async def _upload(self, scope: Scope, receive: Receive, send: Send,
                      headers: dict[str, str]) -> None:
        """Pass an upload on while it stays under the limit; 413 once it does not."""
        assert self.max_upload is not None
        limit = self.max_upload
        text = (f"the file is larger than this server accepts ({limit / 1e6:,.0f} MB; the "
                "server's operator sets it with microagg ui --max-upload-mb)")
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await self._refuse(scope, send, 413, text)
            return
        seen = 0
        started = over = False

        async def counted() -> Message:
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    over = True
                    raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if over:  # the app's answer to the error raised above: the 413 replaces it
                return
            started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if not started:
                await self._refuse(scope, send, 413, text)
