"""Loads a program of scripts/ (gen_ops.py, gen_stubs.py) as a module, for the tests that
check what it generates. Each call gives a fresh module object."""
import importlib.util
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def load_script(name):
    """The module of scripts/<name>.py."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, "scripts",
                                                                     name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
