"""The JUnit XML shape CI tools read, checked against our schema (tests/support/junit.xsd).

Used by the recipe reports' tests and by ``recipe run --junit``'s.
"""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from pathlib import Path

import xmlschema

JUNIT_XSD = Path(__file__).resolve().parent / "junit.xsd"


@functools.cache
def junit_schema() -> xmlschema.XMLSchema11:
    return xmlschema.XMLSchema11(JUNIT_XSD)



def check_junit_shape(xml: str) -> ET.Element:
    """Validate against our JUnit schema (tests/support/junit.xsd): the shape CI tools read.

    The schema's XSD 1.1 assertions also check that every count is the count of
    its testcases, so nothing is left for a hand-written check."""
    junit_schema().validate(xml)
    return ET.fromstring(xml)
