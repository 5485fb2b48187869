"""The command palette's VerifyBot commands: every key's action, found by name.

Built from the same binding lists as the footer and the help screen, plus one
command per configured target, so nothing has to be kept in step by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from verifybot_tui.tui.keys import APP_BINDINGS, MAIN_BINDINGS, effective_key, readable_key

# Footer labels are short; the palette has room to say what a command does.
TITLES = {
    "help": "Help: list the keys",
    "change_theme": "Change theme",
    "switch_target": "Switch to the next target",
    "switch_llm": "Switch to the next LLM",
    "toggle_auto_accept": "Toggle auto-accept",
    "toggle_review_feedback": "Toggle feedback review",
    "new_chat": "New chat",
    "retry": "Retry the last prompt",
    "stop": "Stop the run",
    "toggle_history": "Show or hide history",
    "toggle_diff": "Toggle diff against the previous version",
    "focus_prompt": "Focus the prompt box",
}


class VerifyBotCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = self.app
        main = getattr(app, "main_screen", None)
        found: list[tuple[str, str, Callable[[], object]]] = []
        keymap = getattr(app, "keymap", {})
        for b in MAIN_BINDINGS:
            if main is not None:
                found.append((_titled(b, keymap), b.tooltip, partial(main.run_action, b.action)))
        for b in APP_BINDINGS:
            found.append((_titled(b, keymap), b.tooltip, partial(app.run_action, b.action)))
        session = getattr(app, "session", None)
        if main is not None and session is not None:
            found.append(("Success criteria…", "Edit the criteria every run is checked "
                          "against (before or during a session)", partial(edit_criteria, main)))
            found.append(("Prompts as sent: show in full / fold", "Show every prompt and "
                          "feedback text in full, as sent to the LLM (kept for the next start)",
                          partial(toggle_verbose, main)))
            found.append(("Open recipe…", "Load a recipe (LLM, target, criteria, judge) and "
                          "send its prompt", partial(open_recipe, main)))
            found.append(("Compare LLMs…", "Run recipes with several LLMs; a table fills "
                          "in as cells finish (as verifybot compare)",
                          partial(compare_llms, main)))
            found.append(("Race LLMs…", "Send one prompt to several LLMs at once; the first "
                          "VERIFIED wins, the others stop (as run --race)",
                          partial(race_llms, main)))
            for cid in main.history_pane.comparison_ids[:20]:
                found.append((f"Show a comparison: {cid}", f"The history pane shows "
                              f"comparison {cid}'s cells (its filter compare:{cid})",
                              partial(show_comparison, main, cid)))
            for name in session.target_names:
                found.append((f"Target: {name}", f"Run on {name} from the next attempt on",
                              partial(main.target_switch.switch_to, name)))
        return found

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        """Titles first; a command whose description matches is found too, a little lower."""
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
            elif (score := matcher.match(help_text or "")) > 0:
                yield Hit(score * 0.8, title, callback, help=matcher.highlight(help_text))


def _titled(binding: Binding, keymap: Mapping[str, str]) -> str:
    """The palette's title for a key's action, its key beside it: "New chat  (Ctrl+N)"
    (the user's remapped key, if any)."""
    title = TITLES.get(binding.action, binding.description)
    return f"{title}  ({readable_key(effective_key(binding, keymap))})"


def edit_criteria(main: Any) -> None:
    """The criteria editor; saved criteria apply from the session's next run on."""
    from verifybot_tui.tui.screens.criteria import CriteriaScreen

    session = main.session

    def saved(found: list[Any] | None) -> None:
        if found is None:
            return
        session.verification.criteria = found
        main.notify(f"{len(found)} success criteria" if found else "no success criteria",
                    title="Criteria")
        main.show_criteria()

    main.app.push_screen(CriteriaScreen(session.verification.criteria), callback=saved)


def toggle_verbose(main: Any) -> None:
    """The conversation's prompts in full as sent, or long ones folded; remembered."""
    pane = main.conversation
    pane.verbose = not pane.verbose
    main.app.save_ui_choice("verbose_prompts", pane.verbose)
    main.notify("Prompts are shown in full, as sent." if pane.verbose
                else "Long prompts are folded (Enter or a click unfolds one).")


def open_recipe(main: Any) -> None:
    from verifybot_tui.tui.screens.recipe import RecipeScreen

    def opened(recipe: Any) -> None:
        if recipe is not None:
            main.run_worker(apply_recipe(main, recipe), group="llm-switch", exclusive=True)

    main.app.push_screen(RecipeScreen(), callback=opened)


async def apply_recipe(main: Any, recipe: Any) -> None:
    """What the recipe says becomes the session's, as `recipe run` would run it: its
    LLM (a new chat), its target, its criteria, judge and build, its auto_accept;
    then its prompt is sent. A name the config lacks stops it with a message."""
    from verifybot_tui.core.base.errors import VerifyBotError
    from verifybot_tui.core.settings.config import check_llm_spec, check_target_name
    from verifybot_tui.core.settings.trust import RefusedFile

    session = main.session
    spec = recipe.resolve(recipe.llm)
    try:
        if main.running:
            raise VerifyBotError("a run is going on: stop it (ctrl+g) before opening a recipe")
        if spec:
            check_llm_spec(session.config, spec)
        if recipe.target:
            check_target_name(session.config, recipe.target)
        # A compiler or flags that run programs: asked about before anything is applied.
        await session.approve_files([recipe.to_trust_in(session.config)])
        if spec and spec != session.llm_spec:
            await main.llm_switch.switch_to(spec)
        if recipe.target and recipe.target != session.target_name:
            main.target_switch.chosen = True
            session.use_target(recipe.target)
            main.target_switch.show(recipe.target)
            main.target_switch.connect(recipe.target)
        session.use_recipe(recipe)
    except RefusedFile:
        return  # the dialog's answer was told where it was given
    except VerifyBotError as e:
        main.notify(f"{recipe.name}: {e}", title="Recipe not opened", severity="error",
                    timeout=12)
        return
    if recipe.auto_accept is not None:
        main.auto_accept = recipe.auto_accept
    main.show_criteria()
    accept = "auto-accept on" if main.auto_accept else "each version asks first"
    main.notify(f"{recipe.name}: LLM {session.llm_spec}, target {session.target_name}, "
                f"{len(recipe.criteria)} criteria, judge {session.verification.judge}, "
                f"{accept}", title="Recipe")
    main.submit(recipe.task, new_chat=True)


def compare_llms(main: Any) -> None:
    from verifybot_tui.tui.screens.compare import open_compare

    open_compare(main)


def show_comparison(main: Any, cid: int) -> None:
    """The history pane, shown, filtered to one comparison (Esc in it clears)."""
    pane = main.history_pane
    shown = main.history_overlay if main.narrow else pane.display
    if not shown:
        main.action_toggle_history()
    pane.filtering = False
    pane.set_filter(f"compare:{cid}")
    pane.focus()


def race_llms(main: Any) -> None:
    from verifybot_tui.tui.screens.race import open_race

    open_race(main)
