"""Which files of ``assets/`` may be published: only those a browser will not run.

Assets are copied to the site's own origin, where ``script-src 'self'`` lets a page's
script load any same-origin file; and over file:// (or a host without the headers)
no header protects anything. So a file a browser would open as a document that runs
script — HTML, XML, XSLT, a script itself — is refused, whatever its name says (a
file whose name tells no inert type is looked at: markup is refused). An SVG is
welcome as a figure, but only if nothing in it can run: it is read with expat and
checked against an allowlist (no ``<script>``, no event attribute, no ``foreignObject``
or HTML inside, no link other than to its own fragments or to an embedded picture,
no entity declarations). Refusing, never rewriting: the publisher sees why, and what
is published is byte for byte what they wrote. Pure: bytes in, a reason out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from xml.parsers import expat

ACTIVE_EXTENSIONS = frozenset({
    ".htm", ".html", ".xhtml", ".xht", ".shtml", ".mht", ".mhtml", ".hta",
    ".xml", ".xsl", ".xslt", ".rdf", ".xul", ".svgz",  # (a compressed SVG cannot be checked)
    ".js", ".mjs", ".cjs", ".wasm", ".swf",
})
"""File types a browser runs or opens as a scriptable document."""

INERT_EXTENSIONS = frozenset({
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".bmp", ".ico", ".tif", ".tiff",
    ".mp3", ".ogg", ".oga", ".opus", ".wav", ".flac", ".m4a", ".aac", ".weba",
    ".mp4", ".m4v", ".webm", ".ogv", ".mov", ".vtt", ".srt",
    ".pdf", ".csv", ".tsv", ".txt", ".md", ".json", ".zip", ".gz", ".tar", ".7z",
    ".odt", ".ods", ".odp", ".odg", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".epub", ".rtf",
})
"""File types served and opened as what they are (with ``nosniff``, never as a page)."""

MAX_SVG_BYTES = 5_000_000
"""An SVG larger than this is not read to be checked (a figure is far smaller)."""

_MARKUP = re.compile(rb"^(?:\xef\xbb\xbf)?\s*<(?:!doctype|html|head|body|script|iframe|svg|\?xml|object|embed|"
                     rb"meta|style|link|frameset|x:|xsl:)", re.IGNORECASE)

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
XHTML = "http://www.w3.org/1999/xhtml"

SVG_ELEMENTS = frozenset(["svg", "g", "defs", "symbol", "use", "title", "desc", "metadata", "switch", "view", "a", "image", "style", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text", "tspan", "textPath", "linearGradient", "radialGradient", "stop", "pattern", "clipPath", "mask", "marker", "filter", "animateTransform", "animateMotion", "mpath", "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feConvolveMatrix", "feDiffuseLighting", "feDisplacementMap", "feDistantLight", "feDropShadow", "feFlood", "feFuncA", "feFuncB", "feFuncG", "feFuncR", "feGaussianBlur", "feImage", "feMerge", "feMergeNode", "feMorphology", "feOffset", "fePointLight", "feSpecularLighting", "feSpotLight", "feTile", "feTurbulence"])
"""SVG elements that draw and nothing else. Not here: ``script``, ``foreignObject``
(it embeds HTML), ``animate`` and ``set`` (they can rewrite a link into
``javascript:``), ``iframe``, ``handler``, ``listener``."""

_SAFE_PICTURE = re.compile(r"^data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$")
_SCHEME_SPACE = re.compile(r"[\x00-\x20]+")


@dataclass(frozen=True)
class AssetRefusal:
    """Why an asset is not published.

    Attributes:
        line: the line of the SVG where the problem is (``None`` for the whole file).
        reason: what was found, for the publisher.
        hint: what to do instead.
    """

    line: int | None
    reason: str
    hint: str


_CONVERT = ("Publish it as a PDF or an image instead, or write it as a note; an archive (.zip) is "
            "offered as a download.")


def asset_refusal(rel: str, head: bytes, read_all: Callable[[], bytes] | None = None) -> AssetRefusal | None:
    """Why the asset ``rel`` (its first bytes in ``head``) may not be published, or
    ``None``. ``read_all`` gives the whole file, asked for only for an SVG."""
    extension = posixpath.splitext(rel.lower())[1]
    if extension in ACTIVE_EXTENSIONS:
        return AssetRefusal(None, f"a {extension} file would be opened by browsers as a page of the site, able "
                                  "to run script on its origin", _CONVERT)
    if extension == ".svg":
        data = read_all() if read_all is not None else head
        if len(data) > MAX_SVG_BYTES:
            return AssetRefusal(None, f"this SVG is larger than {MAX_SVG_BYTES} bytes, too large to be checked",
                                "Simplify it, or publish it as a PNG.")
        return svg_refusal(data)
    if extension not in INERT_EXTENSIONS and _MARKUP.match(head):
        return AssetRefusal(None, "this file holds markup (HTML, XML or SVG) that browsers would open as a page "
                                  "of the site, since its name tells no other type", _CONVERT)
    return None


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def svg_refusal(data: bytes) -> AssetRefusal | None:
    """Why this SVG could run something, or ``None`` when it only draws."""
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    hint = ("Remove it from the SVG (an editor's 'plain SVG' export leaves only drawing), or publish "
            "the figure as a PNG.")

    def start(name: str, attributes: dict[str, str]) -> None:
        namespace, _, local = name.rpartition(" ")
        if namespace in ("", SVG):
            if local not in SVG_ELEMENTS:
                raise _Refused(f"the SVG holds a <{local}> element, which can run script or embed a page")
        elif namespace == XHTML:
            raise _Refused(f"the SVG holds an HTML <{local}> element")
        # other namespaces (Inkscape's, RDF metadata) are not rendered: inert
        for attribute, value in attributes.items():
            attribute_namespace, _, attribute_local = attribute.rpartition(" ")
            if attribute_local.lower().startswith("on"):
                raise _Refused(f"the SVG has an event attribute {attribute_local!r}, which runs script")
            if attribute_local == "href" and attribute_namespace in ("", XLINK):
                target = _SCHEME_SPACE.sub("", value)
                if not (target.startswith("#") or _SAFE_PICTURE.match(value)):
                    raise _Refused(f"the SVG links to {value[:80]!r}: only its own parts (#id) and embedded "
                                   "PNG, JPEG, GIF or WebP pictures may be referred to")
            if "javascript:" in _SCHEME_SPACE.sub("", value).lower():
                raise _Refused(f"the SVG's {attribute_local!r} attribute holds a javascript: address")
            if attribute_local == "attributeName" and value.rpartition(":")[2] == "href":
                raise _Refused("the SVG animates a link, which can turn it into script")

    def refuse_entity(*_args: object) -> None:
        raise _Refused("the SVG declares entities (they can expand without bound)")

    def refuse_instruction(target: str, _data: str) -> None:
        raise _Refused(f"the SVG holds a processing instruction <?{target}?> (a stylesheet can run script)")

    parser.StartElementHandler = start
    parser.EntityDeclHandler = refuse_entity
    parser.UnparsedEntityDeclHandler = refuse_entity
    parser.ExternalEntityRefHandler = refuse_entity  # type: ignore[assignment]
    parser.ProcessingInstructionHandler = refuse_instruction
    try:
        parser.Parse(data, True)
    except _Refused as refused:
        return AssetRefusal(parser.CurrentLineNumber, refused.reason, hint)
    except expat.ExpatError as error:
        return AssetRefusal(error.lineno, f"the SVG is not well-formed XML ({expat.ErrorString(error.code)})",
                            "Export it again from its editor, or publish it as a PNG.")
    return None
