"""Which files of ``assets/`` may be published: only those of a type a browser will not run.

Assets are copied to the site's own origin, where ``script-src 'self'`` lets a page's
script load any same-origin file; and over file:// (or a host without the headers) no
header protects anything, while a host's or a browser's own map of types decides how a
file opens. So assets go by an allowlist, :data:`ASSET_TYPES`: images other than SVG,
audio, video, subtitles, plain text and data (.txt, .csv, .json…), PDF, office documents
and archives, each with the one media type Carnet gives it (``carnet serve`` sends it,
never the host's). Any other name — no extension, HTML, XML of any flavour, scripts,
stylesheets, WebAssembly — is refused at its file with a hint; none is published as a
download, since no header can be forced over file://.

Three checks more, because types are guessed where no header says ``nosniff``:
- a file that begins with markup (``<``, after any byte order mark and blanks: a comment,
  a doctype, ``<?xml``…) is refused whatever its name, since a browser guessing its type
  opens it as a page; no image, sound, PDF, office or archive format begins so, and a text
  file that does can start with a line of text instead;
- an SVG is welcome as a figure, but only if nothing in it can run or pull anything in: it
  is read with expat and checked against an allowlist (no ``<script>``, no event
  attribute, no ``foreignObject``, HTML, XInclude or XSLT inside, no link in any
  namespace but to its own fragments or to an embedded picture, no ``xml:base``, no
  ``@import``, ``image-set()`` or ``url()`` to anything but its own fragments in its styles
  or attributes, no entity declarations, no processing instruction);
- a name a link cannot carry as written (a control character, a newline, a bidi control,
  ``#``, ``?``, ``%``, a backslash) is refused: every link to it would break.

Refusing, never rewriting: the publisher sees why, and what is published is byte for byte
what they wrote. Pure: a name and bytes in, a reason out. docs/content-format.md (Assets)
lists the types; tests/corpus/test_assets_allowlist.py keeps the two in step.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from xml.parsers import expat

IMAGES = {
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
    ".avif": "image/avif", ".bmp": "image/bmp", ".ico": "image/vnd.microsoft.icon", ".tif": "image/tiff",
    ".tiff": "image/tiff",
}
AUDIO = {
    ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".oga": "audio/ogg", ".opus": "audio/ogg", ".wav": "audio/wav",
    ".flac": "audio/flac", ".m4a": "audio/mp4", ".aac": "audio/aac", ".weba": "audio/webm",
}
VIDEO = {
    ".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".ogv": "video/ogg", ".mov": "video/quicktime",
    ".mkv": "video/x-matroska",
}
TEXT = {  # shown as text, never as a page: no browser opens these types as HTML
    ".txt": "text/plain", ".csv": "text/csv", ".tsv": "text/tab-separated-values", ".md": "text/markdown",
    ".json": "application/json", ".vtt": "text/vtt", ".srt": "text/plain",
}
DOCUMENTS = {
    ".pdf": "application/pdf", ".rtf": "application/rtf", ".epub": "application/epub+zip",
    ".odt": "application/vnd.oasis.opendocument.text", ".ods": "application/vnd.oasis.opendocument.spreadsheet",
    ".odp": "application/vnd.oasis.opendocument.presentation",
    ".odg": "application/vnd.oasis.opendocument.graphics",
    ".doc": "application/msword", ".xls": "application/vnd.ms-excel", ".ppt": "application/vnd.ms-powerpoint",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}
ARCHIVES = {
    ".zip": "application/zip", ".gz": "application/gzip", ".tgz": "application/gzip", ".tar": "application/x-tar",
    ".7z": "application/x-7z-compressed", ".bz2": "application/x-bzip2", ".xz": "application/x-xz",
}
DRAWINGS = {".svg": "image/svg+xml"}  # only once svg_refusal found nothing

ASSET_TYPES: dict[str, str] = {**IMAGES, **AUDIO, **VIDEO, **TEXT, **DOCUMENTS, **ARCHIVES, **DRAWINGS}
"""The allowlist: the extensions (lower case) an asset may have, each with the media type
Carnet serves it with. A name ending otherwise is refused."""

MAX_SVG_BYTES = 5_000_000
"""An SVG larger than this is not read to be checked (a figure is far smaller)."""

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
XHTML = "http://www.w3.org/1999/xhtml"
XML = "http://www.w3.org/XML/1998/namespace"
FOREIGN = {XHTML: "an HTML", "http://www.w3.org/2001/XInclude": "an XInclude",
           "http://www.w3.org/2003/XInclude": "an XInclude", "http://www.w3.org/1999/XSL/Transform": "an XSLT"}
"""Namespaces whose elements do something inside an SVG (other foreign namespaces, such
as Inkscape's or RDF metadata, are not rendered: inert)."""

SVG_ELEMENTS = frozenset(["svg", "g", "defs", "symbol", "use", "title", "desc", "metadata", "switch", "view", "a", "image", "style", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text", "tspan", "textPath", "linearGradient", "radialGradient", "stop", "pattern", "clipPath", "mask", "marker", "filter", "animateTransform", "animateMotion", "mpath", "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feConvolveMatrix", "feDiffuseLighting", "feDisplacementMap", "feDistantLight", "feDropShadow", "feFlood", "feFuncA", "feFuncB", "feFuncG", "feFuncR", "feGaussianBlur", "feImage", "feMerge", "feMergeNode", "feMorphology", "feOffset", "fePointLight", "feSpecularLighting", "feSpotLight", "feTile", "feTurbulence"])
"""SVG elements that draw and nothing else. Not here: ``script``, ``foreignObject``
(it embeds HTML), ``animate`` and ``set`` (they can rewrite a link into
``javascript:``), ``iframe``, ``handler``, ``listener``."""

_SAFE_PICTURE = re.compile(r"^data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$")
_SCHEME_SPACE = re.compile(r"[\x00-\x20]+")
_UNLINKABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
                         "\ufeff#?%\\\\]")
"""Characters a link cannot carry as written: controls (a browser drops a newline or a tab
from an address, the rest break the page's text), invisible bidi controls, and ``#``,
``?``, ``%`` and ``\\``, which an address reads as a fragment, a query, an escape, a slash."""
_BLANKS = b" \t\n\r\x0b\x0c"
_UTF8_BOM = b"\xef\xbb\xbf"


class RefusalKind(Enum):
    """What is wrong with an asset, as the problem's code says it."""

    ACTIVE = "active-asset"  # a type that is not on the list, markup, an SVG that does more than draw
    NAME = "asset-name"  # a name no link can carry


@dataclass(frozen=True)
class AssetRefusal:
    """Why an asset is not published.

    Attributes:
        line: the line of the SVG where the problem is (``None`` for the whole file).
        reason: what was found, for the publisher.
        hint: what to do instead.
        kind: which check refused it.
    """

    line: int | None
    reason: str
    hint: str
    kind: RefusalKind = RefusalKind.ACTIVE


_PUBLISHABLE = ("Publish it as one of the types a browser only shows: images (.png .jpg .gif .webp .avif), audio "
                "(.mp3 .ogg .opus .m4a), video (.mp4 .webm), .pdf, text (.txt .csv .json), office documents "
                "(.odt .docx .xlsx…) or archives (.zip), listed in docs/content-format.md (Assets); write a page "
                "as a note; put anything else in a .zip to offer it as a download.")


def _escaped(character: str) -> str:
    code = ord(character)
    if character in "#?%\\":
        return repr(character)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown_name(rel: str) -> str:
    """``rel`` with every character no link can carry that a terminal would obey shown as
    its escape (``\\x0a``): the problem about it then prints on one line."""
    return _UNLINKABLE.sub(lambda match: match.group() if match.group() in "#?%\\" else _escaped(match.group()), rel)


def name_refusal(rel: str) -> AssetRefusal | None:
    """Why no link could reach the asset ``rel`` as it is named, or ``None``."""
    found = _UNLINKABLE.search(rel)
    if found is None:
        return None
    return AssetRefusal(None, f"its name holds {_escaped(found.group())}, which a link to it cannot carry as "
                              "written: every link to it would break",
                        "Rename the file with letters, digits, spaces, '-', '_', '.' and the like: no control or "
                        "invisible character, and none of # ? % \\ (update the links to it).", RefusalKind.NAME)


def begins_with_markup(head: bytes) -> bool:
    """Whether a browser guessing this file's type would take it for a page: its first
    character, past byte order marks and blanks, is ``<`` (a tag, a comment, ``<?xml``,
    a doctype)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16
        text = head[2:].decode("utf-16-le" if head.startswith(b"\xff\xfe") else "utf-16-be", errors="ignore")
        return text.lstrip(" \t\n\r\x0b\x0c\ufeff").startswith("<")
    while head.startswith(_UTF8_BOM):
        head = head[len(_UTF8_BOM):]
    return head.lstrip(_BLANKS).startswith(b"<")


def asset_refusal(rel: str, head: bytes, read_all: Callable[[], bytes] | None = None) -> AssetRefusal | None:
    """Why the asset ``rel`` (its first bytes in ``head``) may not be published, or
    ``None``. ``read_all`` gives the whole file, asked for only for an SVG."""
    named = name_refusal(rel)
    if named is not None:
        return named
    extension = posixpath.splitext(posixpath.basename(rel).lower())[1]
    if extension not in ASSET_TYPES:
        what = f"a {extension} file" if extension not in ("", ".") else "a file without an extension"
        return AssetRefusal(None, f"{what} is not of a type published as it is (browsers could open it as a page "
                                  "of the site, able to run script on its origin)", _PUBLISHABLE)
    if extension == ".svg":
        data = read_all() if read_all is not None else head
        if len(data) > MAX_SVG_BYTES:
            return AssetRefusal(None, f"this SVG is larger than {MAX_SVG_BYTES} bytes, too large to be checked",
                                "Simplify it, or publish it as a PNG.")
        return svg_refusal(data)
    if begins_with_markup(head):
        return AssetRefusal(None, f"this {extension} file begins with markup ('<'), which a browser guessing its "
                                  "type (a host sending no type, file://) would open as a page of the site",
                            "Export it again in its real format; a text file may begin with a line of text "
                            "instead, or go in a .zip to be offered as a download.")
    return None


class _Refused(Exception):
    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})[ \t\r\n\f]?|(.))", re.DOTALL)
_CSS_LOADS = re.compile(r"(?:-webkit-)?image-set\(|(?<![\w-])(?:src|image)\(", re.IGNORECASE)


def _unescaped_css(text: str) -> str:
    """CSS as a browser reads its names: ``u\\72l(`` is ``url(``."""
    def one(match: re.Match[str]) -> str:
        if match.group(1):
            code = int(match.group(1), 16)
            return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
        return "" if match.group(2) == "\n" else match.group(2)
    return _CSS_ESCAPE.sub(one, text)


def css_refusal(text: str) -> str | None:
    """Why this CSS (a ``<style>``, a ``style`` or presentation attribute) would load
    something, or ``None``. Every ``url(`` counts, in a comment or a string too: parsing
    those out is where a checker and a browser start to disagree."""
    css = _unescaped_css(text)
    lowered = css.lower()
    if "@import" in lowered:
        return "the SVG's style holds an @import, which loads another stylesheet"
    loads = _CSS_LOADS.search(css)
    if loads:
        return f"the SVG's style uses {loads.group().lower()}, which loads a picture from elsewhere"
    for match in re.finditer(r"url\(", lowered):
        target = css[match.end():].split(")", 1)[0].strip(" \t\r\n\f'\"")
        if not (target.startswith("#") or _SAFE_PICTURE.match(target)):
            return (f"the SVG's style refers to url({target[:80]!r}): only its own parts (#id) and embedded "
                    "PNG, JPEG, GIF or WebP pictures may be")
    return None


def svg_refusal(data: bytes) -> AssetRefusal | None:
    """Why this SVG could run or pull in something, or ``None`` when it only draws."""
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    hint = ("Remove it from the SVG (an editor's 'plain SVG' export leaves only drawing), or publish "
            "the figure as a PNG.")
    style: list[str] = []  # the text of the <style> being read
    style_line: list[int] = []  # where it began (empty outside a <style>)

    def start(name: str, attributes: dict[str, str]) -> None:
        namespace, _, local = name.rpartition(" ")
        if namespace in ("", SVG):
            if local not in SVG_ELEMENTS:
                raise _Refused(f"the SVG holds a <{local}> element, which can run script or embed a page")
            if local == "style":
                style.clear()
                style_line[:] = [parser.CurrentLineNumber]
        elif namespace in FOREIGN:
            raise _Refused(f"the SVG holds {FOREIGN[namespace]} <{local}> element")
        for attribute, value in attributes.items():
            attribute_namespace, _, attribute_local = attribute.rpartition(" ")
            if attribute_local.lower().startswith("on"):
                raise _Refused(f"the SVG has an event attribute {attribute_local!r}, which runs script")
            if attribute_namespace == XML and attribute_local == "base":
                raise _Refused("the SVG sets xml:base, which changes where every link in it leads")
            if attribute_local == "href":  # in any namespace: xlink:, none, or one a checker would not expect
                target = _SCHEME_SPACE.sub("", value)
                if not (target.startswith("#") or _SAFE_PICTURE.match(value)):
                    raise _Refused(f"the SVG links to {value[:80]!r}: only its own parts (#id) and embedded "
                                   "PNG, JPEG, GIF or WebP pictures may be referred to")
            if "javascript:" in _SCHEME_SPACE.sub("", value).lower():
                raise _Refused(f"the SVG's {attribute_local!r} attribute holds a javascript: address")
            if attribute_local == "attributeName" and value.rpartition(":")[2] == "href":
                raise _Refused("the SVG animates a link, which can turn it into script")
            if attribute_namespace == "":  # style="…" and presentation attributes (fill="url(…)") are CSS
                refused = css_refusal(value)
                if refused:
                    raise _Refused(refused)

    def text(data: str) -> None:
        if style_line:
            style.append(data)

    def end(name: str) -> None:
        namespace, _, local = name.rpartition(" ")
        if local == "style" and namespace in ("", SVG) and style_line:
            refused = css_refusal("".join(style))
            if refused:
                raise _Refused(refused, style_line[0])
            style_line.clear()

    def refuse_entity(*_args: object) -> None:
        raise _Refused("the SVG declares entities (they can expand without bound)")

    def refuse_instruction(target: str, _data: str) -> None:
        raise _Refused(f"the SVG holds a processing instruction <?{target}?> (a stylesheet can run script)")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.EntityDeclHandler = refuse_entity
    parser.UnparsedEntityDeclHandler = refuse_entity
    parser.ExternalEntityRefHandler = refuse_entity  # type: ignore[assignment]
    parser.ProcessingInstructionHandler = refuse_instruction
    try:
        parser.Parse(data, True)
    except _Refused as refused:
        return AssetRefusal(refused.line or parser.CurrentLineNumber, refused.reason, hint)
    except expat.ExpatError as error:
        return AssetRefusal(error.lineno, f"the SVG is not well-formed XML ({expat.ErrorString(error.code)})",
                            "Export it again from its editor, or publish it as a PNG.")
    return None
