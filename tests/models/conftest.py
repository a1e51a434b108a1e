import os
import sys

# harness, _loader and programs are plain modules of this folder.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
