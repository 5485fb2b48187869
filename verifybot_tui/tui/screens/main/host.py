"""What the main screen's parts need of the screen: the protocols they are typed against.

The parts (the loop controller, the target and LLM switchers, the resumed session's
view) are composed into the screen or called by it. Typed against the screen's class,
each would import the module that imports it; typed against these, each names only
what it uses, and the screen is checked against them where it hands itself over.
Textual's own methods are read as plain callables. Below the parts, this also holds
the one thing both switches say: which config file to add a target or an LLM to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.app import App
    from textual.binding import ActiveBinding
    from textual.worker import Worker
    from textual.worker_manager import WorkerManager

    from verifybot_tui.tui.output_buffer import OutputBuffer
    from verifybot_tui.tui.session import AppSession
    from verifybot_tui.tui.widgets.approval import ApprovalBar
    from verifybot_tui.tui.widgets.code import CodePane
    from verifybot_tui.tui.widgets.conversation import ConversationPane
    from verifybot_tui.tui.widgets.feedback import FeedbackBar
    from verifybot_tui.tui.widgets.output import OutputPane
    from verifybot_tui.tui.widgets.prompt import PromptBox
    from verifybot_tui.tui.widgets.status import StatusBar


class LoopHost(Protocol):
    """What the loop controller needs of the screen that owns it (the main screen).

    A protocol, not the screen's class: the screen composes its controller, so
    the controller naming the screen would make the two modules import each other.
    Textual's own methods are read as plain callables.
    """

    session: AppSession
    auto_accept: bool
    reviewing: bool
    editing: bool
    # The panes (typed Child getters on the screen).
    status_bar: StatusBar
    conversation: ConversationPane
    code_pane: CodePane
    output_pane: OutputPane
    prompt_box: PromptBox
    approval_bar: ApprovalBar
    feedback_bar: FeedbackBar

    @property
    def output_buffer(self) -> OutputBuffer: ...
    @property
    def app(self) -> App[Any]: ...
    @property
    def workers(self) -> WorkerManager: ...
    @property
    def notify(self) -> Callable[..., None]: ...
    @property
    def post_message(self) -> Callable[..., bool]: ...
    @property
    def run_worker(self) -> Callable[..., Any]: ...
    @property
    def query(self) -> Callable[..., Any]: ...
    @property
    def refresh_bindings(self) -> Callable[[], None]: ...

    def refresh_history(self) -> None: ...
    def prompt_ready(self) -> None: ...
    def show_top(self, which: str) -> None: ...


class SwitchHost(LoopHost, Protocol):
    """What the target and LLM switchers need of the screen besides the loop's part:
    the state the status bar shows, the prompt's state they reset, and the worker
    that connects a target."""

    target: str
    target_state: str
    llm_state: str
    new_chat_next: bool
    resume_id: int | None

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]: ...
    @property
    def call_later(self) -> Callable[..., bool]: ...

    def connect_target(self, name: str) -> Worker[None]: ...
    def clear_attempt(self) -> None: ...
    def prompt_hint(self) -> str: ...
    def show_criteria(self) -> None: ...


def config_name(screen: SwitchHost) -> str:
    """The config file the notices tell the user to add a target or an LLM to: the one
    read, else where the app would read one (by its full path, as the first start says)."""
    from verifybot_tui.tui.session import config_file

    path = config_file(screen.session.config)
    return str(path) if path.is_file() else f"a new file {path}"
