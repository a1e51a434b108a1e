import pytest

import pith


@pytest.fixture(autouse=True)
def no_leaked_tensors():
    """Every test leaves pith_live_tensors() where it found it."""
    import gc
    gc.collect()
    before = pith._C._live_tensors()
    yield
    gc.collect()
    assert pith._C._live_tensors() == before
