"""One figure at a time, chosen from a list: :func:`figure_picker` (chapter *permutation sweeps*).

The book is a static site (no kernel behind it), so the picker is plain HTML: every figure is drawn
once as a PNG inside the page (a ``data:`` URI), a ``<select>`` lists them, and one inline
``onchange`` handler shows the chosen one. Without JavaScript (a notebook viewer that strips scripts
and handlers, an untrusted notebook) the first figure stays shown and the others hidden: the static
fallback. The HTML is deterministic (no random ids, no timestamps in the PNGs), so nbval keeps
comparing it between executions.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Mapping

from IPython.display import HTML
from matplotlib.figure import Figure

from .style import FIGURE_DPI, shown_png

__all__ = ["figure_picker",]

# Show the option at selectedIndex, hide the rest (scoped to this picker's own images).
_ONCHANGE = (
    "var p=this.closest('.rgr-picker').querySelectorAll('img[data-rgr-pick]');"
    "for(var i=0;i<p.length;i++){p[i].hidden=(i!==this.selectedIndex);}"
)


# 1.5 PNG pixels per CSS pixel: sharp on high-DPI screens at about 70% of the bytes of 2x; a picker
# carries every one of its figures in the page (12 single-cell F1 figures: about 75 KB each as base64)
_PICKER_DPI = 1.5 * FIGURE_DPI


def _uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def figure_picker(figures: Mapping[str, Figure], label: str, dpi: float = _PICKER_DPI) -> HTML:
    """A drop-down of ``figures``' names (in order) above the chosen figure; the first is shown first.

    ``label``: what the names are (shown before the drop-down, e.g. ``"cell (m, d_model)"``).
    ``dpi``: pixels per inch of the PNGs; each is shown at ``FIGURE_DPI`` CSS pixels per inch of
    figure (its drawn size, as the book's other figures), so a ``dpi`` above that keeps it sharp on
    high-DPI screens.
    """
    if not isinstance(figures, Mapping) or not figures:
        raise ValueError(f"figures must be a non-empty mapping of name -> Figure, got {figures!r}")
    bad = [name for name, fig in figures.items() if not isinstance(name, str) or not isinstance(fig, Figure)]
    if bad:
        raise TypeError(f"figures must map names (str) to matplotlib Figures; not so for {bad!r}")
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"label must be a non-empty string, got {label!r}")
    uid = "rgr-picker-" + hashlib.sha256("|".join([label, *figures]).encode()).hexdigest()[:8]
    options, images = [], []
    for i, (name, fig) in enumerate(figures.items()):
        text = html.escape(name, quote=True)
        png, width, _ = shown_png(fig, dpi)  # shown at its drawn size, at most the style's widest
        options.append(f'<option value="{i}"{" selected" if i == 0 else ""}>{text}</option>')
        images.append(
            f'<img data-rgr-pick="{i}" src="{_uri(png)}" alt="{text}" width="{round(width)}"'
            f' style="max-width:100%;height:auto"{"" if i == 0 else " hidden"}>'
        )
    return HTML(
        f'<div class="rgr-picker" id="{uid}">'
        f'<label for="{uid}-select">{html.escape(label)}: </label>'
        f'<select id="{uid}-select" onchange="{_ONCHANGE}">{"".join(options)}</select>'
        f'<div class="rgr-picker-figures">{"".join(images)}</div></div>'
    )
