"""The HTTP surface of ``carnet serve --edit``: what its handler hands over.

Reading stays as it was (GET and HEAD of the built files). Edit mode adds:

- ``GET /any/page?carnet-key=SECRET`` (the address the terminal prints): the per-run
  secret exchanged for a ``SameSite=Strict; HttpOnly`` cookie, then a redirect to the
  page without it (so it leaves the address bar and the history);
- the edit layer's script and style under :data:`PREFIX` (files of the default theme's
  ``edit/`` folder, which no build copies), and, in each HTML page served to a browser
  holding the cookie, a link to each and a ``<meta name="carnet-edit">`` with the
  request token, the note and the digest of its files (no inline script: the pages'
  Content-Security-Policy stays as published);
- ``POST /_carnet-edit/api/<operation>``: a JSON body, accepted only from a browser of
  this server — ``Host`` 127.0.0.1 or localhost (DNS rebinding), no foreign ``Origin``
  or cross-site fetch (CSRF), the cookie, and the token in :data:`TOKEN_HEADER` — and of
  bounded size. Each refusal answers JSON with its reason and writes nothing.
"""

from __future__ import annotations

import hmac
import html
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from generator.authoring.operations import Done, Editor, EditRefused
from generator.site import DEFAULT_THEME

PREFIX = "/_carnet-edit/"
API = PREFIX + "api/"
KEY = "carnet-key"
"""The query parameter carrying the per-run secret in the address the terminal prints."""
TOKEN_HEADER = "X-Carnet-Token"
MAX_BODY = 64 * 1024
"""Largest JSON body of a write (bytes): a selection's context and a comment fit many times."""
EDIT_FOLDER = DEFAULT_THEME / "edit"
ASSET_TYPES = {"edit.js": "text/javascript; charset=utf-8", "edit.css": "text/css; charset=utf-8"}
STRING_PREFIX = "edit_"
"""The theme strings of the edit layer (``strings/<lang>.yaml``), handed to its script."""
LOCAL_HOSTS = ("127.0.0.1", "localhost")

_NOTE_PAGE = re.compile(r"^/notes/([^/]+)\.html$")
_LANG = re.compile(rb'<html lang="([A-Za-z0-9-]{1,40})"')


@dataclass(frozen=True)
class Reply:
    """An answer of the edit layer: status, extra headers, media type and body."""

    status: int
    body: bytes
    kind: str = "application/json; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()


def _json(status: int, value: Mapping[str, Any]) -> Reply:
    return Reply(status, json.dumps(value, ensure_ascii=False).encode("utf-8"))


def refusal(status: int, message: str, code: str = "refused") -> Reply:
    return _json(status, {"ok": False, "code": code, "error": message})


def header_map(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """A request's headers by lower-case name; a name given twice reads as no valid value
    (two ``Host`` or ``Origin`` headers are a smuggling attempt, never a browser's)."""
    found: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        found[key] = "\0given twice" if key in found else value
    return found


def host_allowed(host: str | None, port: int) -> bool:
    """Whether a ``Host`` header names this server (127.0.0.1 or localhost, on its port)."""
    if not host:
        return False
    name, _, given = host.strip().lower().rpartition(":") if ":" in host else (host.strip().lower(), "", "")
    return name in LOCAL_HOSTS and given in ("", str(port))


def origin_allowed(origin: str | None, port: int) -> bool:
    """Whether an ``Origin`` header (absent: a request no browser script made) is this server's."""
    if origin is None:
        return True
    return origin.strip().lower() in {f"http://{name}:{port}" for name in LOCAL_HOSTS}


class EditApi:
    """What ``carnet serve``'s handler asks in edit mode (see the module)."""

    header_map = staticmethod(header_map)

    def __init__(self, editor: Editor, log: Callable[[str], None] = lambda line: None) -> None:
        self.editor = editor
        self.log = log
        self.operations: dict[str, Callable[[dict[str, Any]], Done]] = {
            "extract": editor.extract, "comment": editor.comment, "withdraw": editor.withdraw,
            "mask": editor.mask, "verdict": editor.verdict, "contest": editor.contest, "apply": editor.apply,
            "adopt": editor.adopt, "undo": editor.undo,
        }

    @staticmethod
    def cookie_name(port: int) -> str:
        return f"carnet_edit_{port}"  # one per port: two runs on one machine keep their own

    def address(self, url: str) -> str:
        """The address the terminal prints: the site's, with the secret to exchange."""
        return f"{url}?{KEY}={quote(self.editor.secret)}"

    def _holds_cookie(self, headers: Mapping[str, str], port: int) -> bool:
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except CookieError:
            return False
        morsel = cookie.get(self.cookie_name(port))
        return morsel is not None and hmac.compare_digest(morsel.value.encode(), self.editor.secret.encode())

    def authorised(self, headers: Mapping[str, str], port: int) -> bool:
        """A browser of this run: the right host, and the cookie."""
        return host_allowed(headers.get("host"), port) and self._holds_cookie(headers, port)

    # --- GET / HEAD -----------------------------------------------------------------------

    def read(self, target: str, path: str, headers: Mapping[str, str], port: int) -> Reply | None:
        """The edit layer's answer to a GET or HEAD, or None: the file, as without --edit."""
        query = urlsplit(target).query
        if KEY in parse_qs(query):
            if not host_allowed(headers.get("host"), port):
                return refusal(403, "this address is only for http://127.0.0.1 or http://localhost", "host")
            given = parse_qs(query)[KEY][0]
            if not hmac.compare_digest(given.encode(), self.editor.secret.encode()):
                return refusal(403, "this key is not this run's: use the address 'carnet serve --edit' printed",
                               "key")
            cookie = f"{self.cookie_name(port)}={self.editor.secret}; Path=/; HttpOnly; SameSite=Strict"
            return Reply(303, b"", "text/plain; charset=utf-8", (("Set-Cookie", cookie), ("Location", quote(path))))
        if path == API + "proposals":  # what the article's pending proposals would change: read, for this browser only
            if not self.authorised(headers, port):
                return refusal(403, "this browser has not opened the address 'carnet serve --edit' printed", "key")
            slug = (parse_qs(query).get("note") or [""])[0]
            if self.editor.note_rel(slug) is None:
                return refusal(404, f"there is no note {slug!r}", "missing")
            return _json(200, {"ok": True, "proposals": self.editor.proposals(slug),
                               "extractions": self.editor.extraction_proposals(slug)})
        if path.startswith(PREFIX):
            name = path.removeprefix(PREFIX)
            if name not in ASSET_TYPES or not (EDIT_FOLDER / name).is_file():
                return refusal(404, "no such file of the edit layer", "missing")
            return Reply(200, (EDIT_FOLDER / name).read_bytes(), ASSET_TYPES[name])
        return None

    def inject(self, page: bytes, path: str, headers: Mapping[str, str], port: int) -> bytes:
        """``page`` with the edit layer linked, for a browser of this run; as it is otherwise."""
        if not self.authorised(headers, port):
            return page
        found = _NOTE_PAGE.match(path)
        slug = found.group(1) if found else ""
        digest = self.editor.page_digest(slug) if slug else None
        language = _LANG.search(page)
        state = {
            "token": self.editor.token, "api": API, "author": self.editor.author or "",
            "note": slug if digest else "", "digest": digest or "", **(self.editor.page_info(slug) if digest else {}),
            "strings": edit_strings(language.group(1).decode() if language else "fr"),
        }
        head = (f'<meta name="carnet-edit" content="{html.escape(json.dumps(state, ensure_ascii=False))}">'
                f'<link rel="stylesheet" href="{PREFIX}edit.css">'
                f'<script src="{PREFIX}edit.js" defer></script>').encode()
        return page.replace(b"</head>", head + b"</head>", 1)

    # --- POST ---------------------------------------------------------------------------

    def write(self, path: str, headers: Mapping[str, str], read_body: Callable[[int], bytes], port: int) -> Reply:
        """A write request, checked (see the module) before its operation runs."""
        operation = self.operations.get(path.removeprefix(API)) if path.startswith(API) else None
        if operation is None:
            return refusal(404, "no such operation of the edit layer", "missing")
        if not host_allowed(headers.get("host"), port):
            return refusal(403, "the Host header does not name this server (127.0.0.1 or localhost)", "host")
        if not origin_allowed(headers.get("origin"), port):
            return refusal(403, "a write comes only from this server's own pages (the Origin is another site)",
                           "origin")
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return refusal(403, "a write comes only from this server's own pages (a cross-site request)", "origin")
        if not self._holds_cookie(headers, port):
            return refusal(403, "this browser has not opened the address 'carnet serve --edit' printed", "key")
        token = headers.get(TOKEN_HEADER.lower(), "")
        if not hmac.compare_digest(token.encode(), self.editor.token.encode()):
            return refusal(403, f"the {TOKEN_HEADER} header is missing or wrong", "token")
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return refusal(415, "the body must be JSON (Content-Type: application/json)", "type")
        if "transfer-encoding" in headers:
            return refusal(411, "send the body with a Content-Length", "length")
        length = headers.get("content-length", "")
        if not length.isdigit():
            return refusal(411, "send the body with a Content-Length", "length")
        if int(length) > MAX_BODY:
            return refusal(413, f"the body is over {MAX_BODY} bytes", "too-large")
        try:
            body = json.loads(read_body(int(length)).decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return refusal(400, "the body is not JSON", "json")
        if not isinstance(body, dict):
            return refusal(400, "the body must be a JSON object", "json")
        try:
            done = operation(body)
        except EditRefused as exc:
            self.log(f"carnet serve --edit: {int(exc.status)} {path}: {exc}")
            return refusal(int(exc.status), str(exc), exc.code)
        self.log(f"carnet serve --edit: {done.message} ({', '.join(done.files)})")
        return _json(200, {"ok": True, "message": done.message, "files": list(done.files), "record": done.record})


def edit_layer(content: Path, author: str | None = None, log: Callable[[str], None] = print) -> EditApi:
    """The edit layer ``carnet serve --edit`` hands its requests to, over ``content``, its
    records by ``author`` (asked at the first write when None); ``log`` takes one line per write."""
    return EditApi(Editor(content, author), log)


def edit_strings(language: str) -> dict[str, str]:
    """The edit layer's UI strings in ``language`` (a regional tag falls back; French otherwise)."""
    from generator.site.theme import _load_strings

    strings = _load_strings(DEFAULT_THEME, language)
    return {key: str(value) for key, value in strings.items() if key.startswith(STRING_PREFIX)}
