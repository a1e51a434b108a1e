import os
import sys

# harness, _loader and programs are plain modules of this folder.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pytest_configure(config):
    # memory-efficient-attention-pytorch, trained, calls torch.utils.checkpoint without
    # use_reentrant, and torch warns about it: the package's code, which we do not edit.
    config.addinivalue_line("filterwarnings",
                            "ignore:torch.utils.checkpoint. the use_reentrant:UserWarning")
