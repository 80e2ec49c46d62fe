"""HTTP headers the published site is served with. One source for every server of the
site (``carnet serve``, the tests' server, netlify.toml's headers), so that a theme
violating the Content-Security-Policy fails a test, not a deploy."""

from __future__ import annotations

import functools
import posixpath

from generator.corpus.assets import ASSET_TYPES


@functools.lru_cache(maxsize=8)  # serve asks for it at every response; the hosts change only with the settings
def content_security_policy(image_hosts: tuple[str, ...] = ()) -> str:
    """The site's policy; ``image_hosts`` (carnet.yaml's ``csp: img_hosts``, checked as host
    names when the settings are read) widen ``img-src`` for them alone."""
    return "; ".join([
        "default-src 'self'",
        "script-src 'self' 'wasm-unsafe-eval'",  # no inline script; Pagefind needs WebAssembly
        "style-src 'self'",
        " ".join(["img-src 'self' data:", *image_hosts]),
        "media-src 'self'",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ])


def meta_content_security_policy(image_hosts: tuple[str, ...] = ()) -> str:
    """The same policy in every page's ``<meta http-equiv>``, so a host without the headers
    (or file://) still runs no injected script. ``frame-ancestors`` is left out: browsers
    ignore it in a meta element (and say so in the console); it stays a header."""
    return "; ".join(directive for directive in content_security_policy(image_hosts).split("; ")
                     if not directive.startswith("frame-ancestors"))


CONTENT_SECURITY_POLICY = content_security_policy()
META_CONTENT_SECURITY_POLICY = meta_content_security_policy()

PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"
"""A wiki asks for no device: no page (nor a script that got in) may."""

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "Permissions-Policy": PERMISSIONS_POLICY,
    # browsers keep to https once they saw it over https (ignored over plain http, as in serve)
    "Strict-Transport-Security": "max-age=31536000",
}

ASSETS = "/assets/"
"""Where a content asset is published (``content/assets/x.pdf`` → ``/assets/x.pdf``)."""

ASSET_CONTENT_SECURITY_POLICY = "; ".join([
    "sandbox",  # no script, no form, no plugin, and an origin of its own: whatever it is, it reaches nothing
    "default-src 'none'",
    "img-src 'self' data:",
    "media-src 'self'",
    "style-src 'unsafe-inline'",  # a figure's own <style>, the browser's viewers: styles run no script
    "frame-ancestors 'none'",
])
"""The policy of a file under :data:`ASSETS`, opened on its own: only types that run
nothing are published (generator/corpus/assets.py), and should one slip through, this
stops it where the headers are sent. Chromium still shows images, SVG figures, sound,
video and PDF under it (tests/browser/test_hostile_assets.py)."""

ASSET_HEADERS: dict[str, str] = {"Content-Security-Policy": ASSET_CONTENT_SECURITY_POLICY}
"""What a file under :data:`ASSETS` is sent instead of the site's own values (netlify.toml's
``/assets/*`` rule comes after ``/*``, so its policy replaces the site's; were both sent,
both would hold, the stricter winning)."""

SITE_TYPES: dict[str, str] = {
    ".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8", ".json": "application/json", ".jsonld": "application/ld+json",
    ".txt": "text/plain; charset=utf-8", ".md": "text/markdown; charset=utf-8", ".xml": "application/xml",
    ".svg": "image/svg+xml", ".wasm": "application/wasm", ".webmanifest": "application/manifest+json",
    ".woff2": "font/woff2", ".woff": "font/woff", ".png": "image/png", ".ico": "image/vnd.microsoft.icon",
}
"""Media types of the files Carnet writes itself (pages, their text and data, the theme);
any other is sent as bytes to download (Pagefind's shards are fetched, never opened)."""

DOWNLOAD = "application/octet-stream"


def site_path(path: str) -> str:
    """``path`` (a decoded request path) as the address of one file of the site: empty
    and ``.`` segments dropped, as a server finding the file drops them."""
    return "/" + "/".join(part for part in path.split("/") if part not in ("", "."))


def is_asset(path: str) -> bool:
    """Whether the file at ``path`` is a content asset (in any case: a file system that
    ignores case would find it under ``/ASSETS/``)."""
    return site_path(path).casefold().startswith(ASSETS)


def headers_for(path: str, image_hosts: tuple[str, ...] = ()) -> dict[str, str]:
    """The security headers of the file at ``path``: the site's (its images' hosts allowed),
    with the assets' own policy."""
    if is_asset(path):
        return {**SECURITY_HEADERS, **ASSET_HEADERS}
    if image_hosts:
        return {**SECURITY_HEADERS, "Content-Security-Policy": content_security_policy(image_hosts)}
    return SECURITY_HEADERS


def content_type(path: str) -> str:
    """The media type the file at ``path`` is served with, from Carnet's own maps, never the
    host's: an asset's from the allowlist it was published by, any other file's from
    :data:`SITE_TYPES`; bytes to download when neither knows its extension."""
    extension = posixpath.splitext(site_path(path).lower())[1]
    if is_asset(path):
        return ASSET_TYPES.get(extension, DOWNLOAD)
    return SITE_TYPES.get(extension, DOWNLOAD)
