"""The worker side of multi-process loading, as torch.utils.data._utils.worker: the loop a
worker process runs, its seeding, get_worker_info(), and the messages it sends back. The
main-process side is _MultiProcessingDataLoaderIter in dataloader.py."""
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler

import pith

from . import MP_STATUS_CHECK_INTERVAL

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What get_worker_info() returns inside a worker: its id (0 to num_workers - 1), the
    number of workers, the seed it was given (pith, `random` and NumPy are seeded from it)
    and this process's copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    """The WorkerInfo of the DataLoader worker this runs in, or None in the main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Persistent workers: start a new epoch (answered with itself)."""
    seed: object = None


class ExceptionWrapper:
    """An exception caught in a worker, with its formatted traceback, to be raised again in
    the main process by reraise(): "Caught ValueError in DataLoader worker process 1.",
    then the original traceback, as PyTorch's torch._utils.ExceptionWrapper."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        # The traceback itself is not kept: it would hold the worker's frames (and pickle
        # cannot carry it anyway).
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        try:
            pickle.dumps(self.exc_type)
        except Exception:
            # A class pickle cannot name (defined in a function, say) could not cross to
            # the main process: send a RuntimeError that names it instead.
            self.exc_msg = f"({self.exc_type.__qualname__}) {self.exc_msg}"
            self.exc_type = RuntimeError

    def reraise(self):
        # The exception is never a local of this frame: its traceback holds the frame, and
        # a cycle would keep the iterator (a local of the frames below) alive until the
        # next garbage collection instead of shutting its workers down when the exception
        # is dropped.
        raise self._exception()

    def _exception(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            # KeyError's str() is the repr() of its argument: keep the text readable.
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            return self.exc_type(message=msg)
        try:
            return self.exc_type(msg)
        except Exception:
            # The type takes other arguments than a message.
            return RuntimeError(msg)


class _KeyErrorMessage(str):
    """A str whose repr() is itself."""
    __slots__ = ()

    def __repr__(self):
        return self


# Note [Batches cross processes by value]
# A batch travels from a worker to the main process pickled: pith tensors pickle their
# values, dtype and shape (Note [Pickled tensors], pith/_tensor.py), so each batch is copied
# once into the pipe and once out of it. PyTorch instead collates into shared memory and
# sends a handle. The worker pickles the batch itself (_Pickled) before putting it on the
# result queue, rather than leaving it to the queue's feeder thread: a batch that cannot be
# pickled then becomes an error of that worker, raised in the main process, where the
# feeder thread would only print it and the main process would wait for the batch forever.

class _Pickled:
    """A message already pickled by the worker (see Note [Batches cross processes by
    value]); the main process calls load()."""
    __slots__ = ("payload",)

    def __init__(self, payload):
        self.payload = payload

    def __reduce__(self):
        return _Pickled, (self.payload,)

    def load(self):
        return ForkingPickler.loads(self.payload)


def _pickled(data, worker_id):
    try:
        return _Pickled(bytes(ForkingPickler.dumps(data)))
    except Exception:
        return ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")


class _ManagerWatchdog:
    """Whether the process that started this worker is still alive (a worker whose main
    process died is re-parented, so its parent pid changes)."""

    def __init__(self):
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self):
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _seed_worker(base_seed, worker_id):
    """Seeds `random`, pith and NumPy (when installed) in a worker, as PyTorch does: the
    first two with base_seed + worker_id, NumPy with four words hashed from both (NumPy's
    SeedSequence, which is PyTorch's _generate_state), so that NumPy's stream does not
    repeat `random`'s. Returns the seed."""
    seed = base_seed + worker_id
    random.seed(seed)
    pith.manual_seed(seed)
    try:
        import numpy
    except ImportError:
        return seed
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    numpy.random.seed(numpy.random.SeedSequence(entropy).generate_state(4))
    return seed


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers):
    """The body of a worker process: reads (task index, keys) from `index_queue` and puts
    (task index, batch or error) on `data_queue` until it reads None."""
    from ..dataloader import _DatasetKind
    global _worker_info
    try:
        pith.set_num_threads(1)
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                  collate_fn, drop_last)
        except Exception:
            # Reported as the answer to the first task, which is where the main process
            # is listening.
            init_exception = ExceptionWrapper(where=where)
        iteration_end = False
        watchdog = _ManagerWatchdog()
        while watchdog.is_alive():
            try:
                message = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(message, _ResumeIteration):
                data_queue.put((message, None))
                iteration_end = False
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                      collate_fn, drop_last)
                continue
            if message is None:
                break  # shut down (Note [Shutting the workers down], dataloader.py)
            if done_event.is_set() or iteration_end:
                continue  # shutting down, or nothing left to read: skip what was queued
            idx, index = message
            if init_exception is not None:
                data = init_exception  # every task fails as the worker's setup did
            else:
                try:
                    data = _pickled(fetcher.fetch(index), worker_id)
                except StopIteration:
                    if dataset_kind != _DatasetKind.Iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            data_queue.put((idx, data))
            del data, idx, index, message  # do not hold a batch while waiting for the next
    except KeyboardInterrupt:
        pass  # the main process was interrupted too, and shuts the workers down
    if done_event.is_set():
        # Do not wait at exit for results nobody will read.
        data_queue.cancel_join_thread()
        data_queue.close()
