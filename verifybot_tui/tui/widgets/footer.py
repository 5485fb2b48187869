"""The footer that fits: at 80 columns it still shows ^t (the target) and F1 (help).

Textual's footer lays its keys out in binding order and cuts what does not fit,
and F1 (an app binding) comes last: at 80x24 it was the first to go. This one
turns compact when the screen is narrow and leaves out the least useful keys
first (they stay in F1's help and in the palette), so the ones a newcomer needs
keep their place.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# Left out first when the footer is too narrow (the rest of the keys, after these,
# from the end); never left out: the keys below.
DROP_FIRST = ("toggle_review_feedback", "copy_shown", "new_chat", "toggle_auto_accept",
              "switch_llm", "toggle_top", "retry", "toggle_history", "toggle_diff")
KEEP = frozenset({"app.quit", "switch_target", "help", "stop"})
PALETTE_WIDTH = 13  # "▏^p palette" docked on the right
COMPACT_BELOW = 120  # columns


def key_width(key: FooterKey, compact: bool) -> int:
    """The cells a key takes: its padding and margin as Textual's footer CSS has them."""
    return len(key.key_display) + len(key.description) + (2 if compact else 3)


def fit(keys: list[FooterKey], width: int, compact: bool) -> list[FooterKey]:
    """The keys that fit in ``width`` cells, the least useful left out first."""
    shown = list(keys)
    for action in [*DROP_FIRST, *(k.action for k in reversed(keys))]:
        if sum(key_width(k, compact) for k in shown) <= width:
            break
        if action not in KEEP:
            shown = [k for k in shown if k.action != action]
    return shown


class FittingFooter(Footer):
    """Compact below 120 columns, and no key of KEEP ever cut off."""

    def compose(self) -> ComposeResult:
        items = list(super().compose())
        if not all(isinstance(w, FooterKey) for w in items):
            yield from items  # grouped keys: Textual's own layout
            return
        width = self.size.width or self.app.size.width
        self.compact = width < COMPACT_BELOW
        palette = [w for w in items if w.has_class("-command-palette")]
        keys = [w for w in items if not w.has_class("-command-palette")
                and self._applies(w.action)]
        room = width - (PALETTE_WIDTH if palette else 0)
        for key in keys:  # born as compact as the footer (each is bound to it): at mount
            # none is restyled on its own, each a pass over the stylesheet, at every
            # recompose (a focus change); the palette's key is unbound, compact always
            key.set_reactive(FooterKey.compact, self.compact)
            key.set_class(self.compact, "-compact", update=False)
        yield from _in_order(fit(keys, room, self.compact), palette)

    def _applies(self, action: str) -> bool:
        """Whether the screen says a key applies now. A key that does not is left out
        here but still answers when pressed, saying why not (ctrl+g with nothing running)."""
        applies = getattr(self.screen, "applies", None)
        return applies(action) if callable(applies) else True

    _laid_out_for = 0
    _composed_for: tuple[object, ...] | None = None

    def _shows(self) -> tuple[object, ...]:
        """What a compose would lay out now: the width, and each active binding as the
        footer draws it (key, how the key is shown, label, action, enabled, tooltip)."""
        if not self._bindings_ready:
            return ()
        bindings = tuple((b.key, self.app.get_key_display(b), b.description, b.action,
                          b.show, b.group, enabled, tooltip, self._applies(b.action))
                         for _node, b, enabled, tooltip in self.screen.active_bindings.values())
        return (self.size.width or self.app.size.width, self.show_command_palette, bindings)

    async def recompose(self) -> None:
        """Only when what it shows changed: Textual's footer recomposes at every change
        of the screen's bindings (each focus change), mounting and restyling every key
        again, most times to show the same keys."""
        shows = self._shows()
        if shows and shows == self._composed_for:
            return
        self._composed_for = shows
        await super().recompose()

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._laid_out_for:
            self._laid_out_for = event.size.width
            self.refresh(recompose=True)


def _in_order(keys: list[FooterKey], palette: list[FooterKey]) -> Iterable[Widget]:
    yield from keys
    yield from palette
