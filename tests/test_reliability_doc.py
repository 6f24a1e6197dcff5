"""docs/RELIABILITY.md names tests that exist, and its bad-input table has a row for every class the test raises."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "RELIABILITY.md").read_text()
NAMED = re.findall(r"`(tests/\w+\.py)::(\w+)(?:\[(\w+)\])?`", DOC)


def test_every_named_test_exists():
    assert NAMED
    for path, name, param in NAMED:
        source = (ROOT / path).read_text()
        assert f"def {name}(" in source, (path, name)
        assert not param or f'"{param}"' in source, (path, param)


def test_every_bad_input_class_has_a_row():
    source = (ROOT / "tests" / "test_gpu_bad_input.py").read_text()
    classes = set(re.findall(r'^    "(\w+)": \(lambda', source, re.MULTILINE))
    rows = {param for path, _, param in NAMED if path == "tests/test_gpu_bad_input.py"}
    assert classes and classes == rows
