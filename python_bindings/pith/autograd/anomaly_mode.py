"""pith.autograd.anomaly_mode: detect_anomaly and set_detect_anomaly, as torch's.

The switch is libpith's (autograd/anomaly.c, Note [Anomaly mode]); the bindings keep the
forward's traceback with each node made while it is on and warn with it when that node
fails in backward (Note [Python anomaly records]).
"""
import warnings

from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly"]


def is_anomaly_enabled():
    """Whether anomaly detection is on (torch.is_anomaly_enabled)."""
    return _C._is_anomaly_enabled()


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection checks gradients for NaN (torch.is_anomaly_check_nan_enabled)."""
    return _C._is_anomaly_check_nan_enabled()


def set_anomaly_enabled(enabled, check_nan=True):
    """Turns anomaly detection on or off (torch.set_anomaly_enabled)."""
    _C._set_detect_anomaly(bool(enabled), bool(check_nan))


class detect_anomaly:
    """Context manager that turns anomaly detection on, as
    torch.autograd.detect_anomaly: backward names the forward call of a node that fails,
    and with check_nan a node that returns NaN gradients raises."""

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Turns anomaly detection on or off (a function, or a context manager that restores the
    previous state), as torch.autograd.set_detect_anomaly."""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)
