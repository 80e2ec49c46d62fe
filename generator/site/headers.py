"""HTTP headers the published site is served with. One source for every server of the
site (``carnet serve``, the tests' server, netlify.toml's headers), so that a theme
violating the Content-Security-Policy fails a test, not a deploy."""

from __future__ import annotations

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",  # no inline script; Pagefind needs WebAssembly
    "style-src 'self'",
    "img-src 'self' data:",
    "media-src 'self'",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])

META_CONTENT_SECURITY_POLICY = "; ".join(
    directive for directive in CONTENT_SECURITY_POLICY.split("; ") if not directive.startswith("frame-ancestors"))
"""The same policy in every page's ``<meta http-equiv>``, so a host without the headers
(or file://) still runs no injected script. ``frame-ancestors`` is left out: browsers
ignore it in a meta element (and say so in the console); it stays a header."""

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
