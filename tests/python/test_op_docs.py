"""docs/python.md lists every op function and method, as scripts/gen_op_docs.py makes the
list from the op table's Python surface."""
import importlib.util
import pathlib

import pith

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "gen_op_docs.py"


def load_script():
    spec = importlib.util.spec_from_file_location("gen_op_docs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_ops_list_in_the_docs_is_current():
    gen = load_script()
    text = pathlib.Path(gen.DOC).read_text(encoding="utf-8")
    assert gen.render(text, pith) == text, "run scripts/gen_op_docs.py"
