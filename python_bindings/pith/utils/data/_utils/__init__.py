"""What the DataLoader's main process and its workers share: the collate functions, the
fetchers, the worker loop, and the flags below. Mirrors torch.utils.data._utils."""
import atexit
import multiprocessing.util  # noqa: F401  (registers its exit handler before ours, below)

# How long a worker waits for a task before checking that its main process is alive, and
# how long shutdown waits for a worker to exit before terminating it (seconds).
MP_STATUS_CHECK_INTERVAL = 5.0

# True once the interpreter is exiting: iterators then leave their daemonic workers to
# multiprocessing's own exit handler, which terminates them, instead of shutting them down
# while the modules they need may already be gone. atexit runs handlers last registered
# first, so this flag is set before multiprocessing's handler runs.
python_exit_status = False


def _set_python_exit_flag():
    global python_exit_status
    python_exit_status = True


atexit.register(_set_python_exit_flag)

from . import collate, fetch, worker  # noqa: E402
