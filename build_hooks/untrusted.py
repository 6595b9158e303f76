"""Strings from results files, kept out of Markdown and shown as text.

A results file comes from whoever opened the pull request, so a machine name such as
`![x](x){: onerror=alert(1) }` must never reach a Markdown parser: `html.escape` alone
leaves `[]()!{}` alone, and `attr_list` would turn it into an element with a handler.

Prose that is Markdown (facts, exec blocks that print Markdown) therefore carries a
placeholder made of letters and digits only, which no Markdown or HTML syntax touches.
`restore()` swaps each placeholder for the escaped text after Markdown has run, inside
`<bdi>` so a stray bidirectional control character cannot reorder the words around it.
HTML renderers use `escape()` (render.esc) or `html_text()` directly; both return
`Html` (markupsafe's Markup), the one type that `render` accepts as ready-made HTML.

The placeholder carries a random nonce drawn once per process, so a results string that
imitates the syntax is plain text that matches nothing and stays as it is.
"""

from __future__ import annotations

import hashlib
import html
import re
import secrets

from markupsafe import Markup as Html

# Letters and digits only: inert in Markdown, in HTML text and in slugs. The nonce makes a
# placeholder unguessable to a results file written before this process started.
_PREFIX, _SUFFIX = "CROSSOVERTEXT" + secrets.token_hex(8).upper(), "TXETREVOSSORC"
_PLACEHOLDER = re.compile(_PREFIX + r"([0-9A-F]{24})" + _SUFFIX)
_texts: dict[str, str] = {}
_TAG = re.compile(r"<[^<>]*>")  # a start or end tag: escaped text holds no < or >, so none ends early
# Bidirectional controls (LRE..RLO, LRI..PDI, LRM, RLM, ALM): an unclosed one can make
# "16" read "61". A machine name never needs them.
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def escape(value: object) -> Html:
    """`value` as text, escaped for HTML text or a quoted attribute, bidi controls removed."""
    return Html(html.escape(_BIDI_CONTROLS.sub("", str(value)), quote=True))


def html_text(value: object) -> Html:
    """`value` as HTML text: escaped, with its direction isolated from the sentence."""
    return Html("<bdi>{}</bdi>").format(escape(value))


# C0 and C1 controls, DEL, and the bidi controls: what can move a cursor, recolour or reorder a terminal.
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def terminal(value: object) -> str:
    """`value` safe to print: control characters shown as escapes (an ANSI sequence in a CPU brand
    could otherwise repaint a reviewer's screen). Newlines and tabs are kept."""
    return _TERMINAL_UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                else f"\\u{ord(m.group()):04x}", str(value))


def placeholder(value: object) -> str:
    """A placeholder for `value` that Markdown leaves alone; `restore()` shows it as text."""
    value = str(value)
    key = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:24].upper()
    _texts[key] = value
    return f"{_PREFIX}{key}{_SUFFIX}"


def portable(rendered: str) -> list[str]:
    """`rendered` as [prose, value, prose, ..., prose]: each placeholder replaced by the string it
    stands for, so a cached rendering can be used by another process (whose nonce differs)."""
    parts = _PLACEHOLDER.split(rendered)  # the captured keys land at the odd indices
    missing = [key for key in parts[1::2] if key not in _texts]
    if missing:
        raise LookupError(f"untrusted text placeholder {missing[0]} has no text (was it made in another process?)")
    return [_texts[part] if i % 2 else part for i, part in enumerate(parts)]


def from_portable(parts: list[str]) -> str:
    """The rendering `portable` split, with fresh placeholders of this process for its values."""
    return "".join(placeholder(part) if i % 2 else part for i, part in enumerate(parts))


def restore(rendered: str) -> str:
    """Replace every placeholder in rendered HTML by its escaped text: direction-isolated (`<bdi>`) in the page's
    text, escaped alone inside a tag, where an attribute (a card's label, a table's name) shows markup as letters."""
    def text(match: re.Match) -> str:
        key = match.group(1)
        if key not in _texts:
            raise LookupError(f"untrusted text placeholder {match.group(0)} has no text "
                              "(was it made in another process?)")
        return _texts[key]

    in_tags = _TAG.sub(lambda tag: _PLACEHOLDER.sub(lambda m: escape(text(m)), tag.group(0)), rendered)
    return _PLACEHOLDER.sub(lambda m: html_text(text(m)), in_tags)

