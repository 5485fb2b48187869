"""Recipes: validation that names the file and the key; reports CI reads (JUnit, JSON)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from junit import check_junit_shape, junit_schema
from project import ROOT

from verifybot_tui.core.base.errors import EXIT_USAGE, ConfigError
from verifybot_tui.core.verify.recipe import load_recipe, recipe_toml
from verifybot_tui.core.verify.reports import RecipeResult, json_report, junit_xml, summary_table

EXAMPLES = ROOT / "examples"


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "r.toml"
    p.write_text(text)
    return p


def test_the_example_recipes_load():
    r = load_recipe(EXAMPLES / "rocket.toml")
    assert (r.name, r.target, r.max_retries, r.timeout) == ("rocket-apogee", "local", 2, 20.0)
    assert [c.text for c in r.criteria][:2] == ["contains:Apogee",
                                                "range:Apogee: ([0-9.]+) m:100..5000"]
    assert r.resolve(r.llm) == f"replay:{EXAMPLES / 'rocket.md'}"
    assert load_recipe(EXAMPLES / "squares.toml").judge == "replay:squares_judge.md"


@pytest.mark.parametrize("text, says", [
    ('prompt = "x"', "key 'name' is missing"),
    ('name = "a"\nprompt = "x"\nretries = 2', "unknown key 'retries'"),
    ('name = "a"\nprompt = "x"\nmax_retries = "2"', "key 'max_retries' must be an integer"),
    ('name = "a"\nprompt = "x"\ncriteria = "contains:a"', "key 'criteria' must be a list"),
    ('name = "a"\nprompt = "x"\ncriteria = ["bogus:1"]', "key 'criteria': bad criterion"),
    ('name = "a"\nprompt = "x"\ntimeout = 0', "key 'timeout' must be more than 0"),
    ('name = "a"\nprompt = "x"\nflags = ["-Wall"]', "key 'flags' needs a 'compiler'"),
    ('name = "a"\nprompt = ', "not valid TOML"),
])
def test_a_bad_recipe_names_the_file_and_the_key(tmp_path: Path, text: str, says: str):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_recipe(path)
    assert str(e.value).startswith(str(path)) and says in str(e.value)
    assert e.value.exit_code == EXIT_USAGE


def test_a_compiler_makes_compiles_clean_a_criterion_and_goes_in_the_prompt(tmp_path: Path):
    r = load_recipe(write(tmp_path, 'name = "c"\nprompt = "Print 42"\nlanguage = "C"\n'
                                    'compiler = "gcc"\nflags = ["-Wall", "-Werror"]\n'))
    assert [c.text for c in r.criteria] == ["compiles-clean"]
    assert r.task == ("Print 42\n\nWrite it in C.\n\nIt is compiled with gcc -Wall -Werror; "
                      "it must compile without any warning.")


def test_recipe_new_text_loads_back(tmp_path: Path):
    text = recipe_toml(name="rocket", prompt="Fly", target="local", llm="replay:x.md",
                       criteria=["contains:Apogee"], judge="off")
    r = load_recipe(write(tmp_path, text))
    assert (r.name, r.prompt, r.target, r.judge) == ("rocket", "Fly", "local", "off")
    assert [c.text for c in r.criteria] == ["contains:Apogee"]


RESULTS = [
    RecipeResult("ok", "a.toml", "VERIFIED", 0, 1.5, "all 2 success criteria met", 2),
    RecipeResult("bad", "b.toml", "FAILED", 1, 2.0, "still failing <after> 3 attempts", 3,
                 judgements=["judgement 1: FAIL: zero"]),
    RecipeResult("gone", "c.toml", "LLM_ERROR", 3, 0.1, "not logged in", 0),
    RecipeResult("meh", "d.toml", "PASSED", 0, 0.2, "exit 0", 1),
]


@pytest.mark.parametrize("change, says", [
    (('classname="verifybot.recipe" ', ''), "classname"),
    (('tests="4"', 'tests="5"'), "count(testcase)"),  # in the suite and the total alike
    (('<system-out>', '<system-out/><failure message="x" type="y"/><system-out>'), "failure"),
    (('type="FAILED"', ''), "type"),
    (('hostname="', 'hostnam="'), "hostnam"),
    (('time="1.500"', 'time="-1"'), "time"),
])
def test_the_junit_schema_refuses_what_ci_tools_cannot_read(change: tuple[str, str], says: str):
    xml = junit_xml(RESULTS)
    assert junit_schema().is_valid(xml)
    bad = xml.replace(*change)
    assert bad != xml
    errors = list(junit_schema().iter_errors(bad))
    assert errors and says in str(errors[0]), errors


def test_junit_xml_has_the_shape_ci_reads():
    root = check_junit_shape(junit_xml(RESULTS))
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "2", "1")
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["ok"].find("failure") is None and cases["ok"].find("error") is None
    fail = cases["bad"].find("failure")
    assert fail.get("message") == "FAILED: still failing <after> 3 attempts"  # escaped, read back
    assert "judgement 1: FAIL: zero" in fail.text
    assert cases["gone"].find("error").get("type") == "LLM_ERROR"
    assert cases["meh"].find("failure").get("type") == "PASSED"  # passed is not verified


def test_json_report_and_summary():
    report = json_report(RESULTS)
    assert (report["total"], report["verified"], report["all_verified"]) == (4, 1, False)
    assert json.loads(json.dumps(report))["recipes"][1]["status"] == "FAILED"
    table = summary_table(RESULTS).splitlines()
    assert table[0].split() == ["RECIPE", "STATUS", "ATTEMPTS", "SECONDS", "MESSAGE"]
    assert table[1].split()[:4] == ["ok", "VERIFIED", "2", "1.5"]
    assert table[-1] == "1 of 4 verified"


def test_the_config_example_documents_the_judge_key():
    text = (EXAMPLES.parent / "config.toml.example").read_text()
    assert tomllib.loads(text)["run"]["judge"] == ""
