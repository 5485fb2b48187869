"""The notice line: the app's notices in a line of their own above the footer.

Textual's toasts float over the panes, and at 80x24 they covered the code tab, the
diff's header, history rows, the compare table's right columns and the help's text.
Here a notice takes rows of its own while it lasts (the content gives them up,
nothing is covered), the newest first, each for as long as its timeout, up to half
the screen (a long path in a notice of what to do wraps to many rows); the same
notices still go out as Textual's Notify messages. Every screen has one (a dialog
inside itself); the app routes each notice to the topmost (``App.on_notify``).
"""

from __future__ import annotations

from textual.content import Content
from textual.notifications import Notification
from textual.timer import Timer
from textual.widgets import Static

MARKS = {"error": ("✘", "$error"), "warning": ("!", "$warning"),
         "information": ("•", "$accent")}
KEPT = 3  # notices shown at once: older ones give way to newer ones


class NoticeLine(Static):
    DEFAULT_CSS = """
    NoticeLine {
        height: auto;
        max-height: 50vh;
        padding: 0 1;
        background: $panel;
        display: none;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        self.notices: list[Notification] = []
        self._expiry: dict[str, Timer] = {}

    def add(self, notice: Notification) -> None:
        """Show ``notice`` for what is left of its timeout (one carried from a screen
        that closed has had some); a repeat of one shown replaces it (its title may say
        more: "your prompt is kept")."""
        for old in [n for n in self.notices if n.message == notice.message]:
            self._drop(old.identity)
        self.notices = [*self.notices, notice][-KEPT:]
        self._expiry[notice.identity] = self.set_timer(
            max(notice.time_left, 0.5), lambda: self.remove_notice(notice.identity))
        self._show()

    def remove_notice(self, identity: str) -> None:
        self._drop(identity)
        self._show()

    def clear(self) -> None:
        for identity in list(self._expiry):
            self._drop(identity)
        self.notices = []
        self._show()

    @property
    def text(self) -> str:
        """What the line says now, plain (the tests read it)."""
        return "\n".join(_plain(n) for n in self.notices)

    def _drop(self, identity: str) -> None:
        timer = self._expiry.pop(identity, None)
        if timer is not None:
            timer.stop()
        self.notices = [n for n in self.notices if n.identity != identity]

    def _show(self) -> None:
        self.display = bool(self.notices)
        parts: list[Content] = []
        for n in reversed(self.notices):  # the newest first: a tall one cuts the oldest
            mark, colour = MARKS.get(n.severity, MARKS["information"])
            parts.append(Content.from_markup(f"[b {colour}]{mark}[/] ")
                         + Content(_plain(n)))
        self.update(Content("\n").join(parts))


def _plain(notice: Notification) -> str:
    return f"{notice.title}: {notice.message}" if notice.title else notice.message
