"""DataLoader, as torch.utils.data.dataloader: batches of a dataset read in the main process
or by worker processes. The loader validates its options and picks the samplers; each
`iter(loader)` is an iterator object below (single- or multi-process). The worker side of
multi-process loading is in _utils/worker.py."""
import itertools
import math
import multiprocessing
import os
import queue
import warnings
from multiprocessing import connection
from typing import Generic, TypeVar

from . import _random, _utils
from ._utils import MP_STATUS_CHECK_INTERVAL, collate as _collate, fetch as _fetch
from ._utils import worker as _worker
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

_T_co = TypeVar("_T_co", covariant=True)

default_collate = _collate.default_collate
default_convert = _collate.default_convert
get_worker_info = _worker.get_worker_info


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        fetcher = (_fetch._MapDatasetFetcher if kind == _DatasetKind.Map
                   else _fetch._IterableDatasetFetcher)
        return fetcher(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None forever (the dataset decides when to stop).
    It is infinite even when the dataset has a length, because each worker holds a copy
    of the dataset and a length would cut the stream of duplicates short."""

    def __iter__(self):
        while True:
            yield None


# The options that cannot change once a DataLoader is made (they fix its samplers).
_FROZEN_OPTIONS = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                   "persistent_workers")


class DataLoader(Generic[_T_co]):
    """Iterates over `dataset` in batches: map-style datasets through a sampler
    (sequential, shuffled, or given), iterable ones as their stream, collated by
    `collate_fn`, in the main process or in `num_workers` worker processes. PyTorch's
    options and defaults; `pin_memory` has nothing to pin to on the CPU (it warns, as
    PyTorch does without an accelerator)."""

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        prefetch_factor = _check_worker_options(num_workers, timeout, prefetch_factor,
                                                persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            _check_iterable_options(shuffle, sampler, batch_sampler)
        else:
            self._dataset_kind = _DatasetKind.Map
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None  # set by len() of an iterable dataset's loader
        self._iterator = None
        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(multiprocessing_context, str):
                methods = multiprocessing.get_all_start_methods()
                if multiprocessing_context not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={multiprocessing_context!r}")
                multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
            if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={multiprocessing_context}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in _FROZEN_OPTIONS:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        # Persistent workers live as long as the loader: its one iterator starts a new epoch.
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # What the fetchers read keys from: the batch sampler when batching.
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind != _DatasetKind.Iterable:
            return len(self._index_sampler)
        # The dataset's own length, in batches. The iterator warns if it yields more (a
        # dataset whose workers all read everything, say).
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = length // self.batch_size if self.drop_last else math.ceil(
                length / self.batch_size)
        return length

    def check_worker_number_rationality(self):
        """Warns when num_workers exceeds the CPUs this process may run on."""
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        suggested = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if suggested is not None and self.num_workers <= suggested:
            return
        if suggested is None:
            advice = ("DataLoader is not able to compute a suggested max number of worker in "
                      "current system.")
        else:
            advice = (f"Our suggested max number of worker in current system is {suggested}"
                      f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, "
                      "which is smaller than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                      f"total. {advice} Please be aware that excessive worker creation might "
                      "get DataLoader running slow or even freeze, lower the worker number to "
                      "avoid potential slowness/freeze if necessary.", stacklevel=2)


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    """Validates the worker options as PyTorch does; returns the prefetch factor (2 by
    default with workers)."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def _check_iterable_options(shuffle, sampler, batch_sampler):
    # An iterable dataset has no keys to sample or shuffle. shuffle=False is accepted: it
    # used to be the default.
    if shuffle not in {False, None}:
        raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                         f"option, but got shuffle={shuffle}")
    if sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                         f"option, but got sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler "
                         f"option, but got batch_sampler={batch_sampler}")


class _BaseDataLoaderIter:
    """One pass over a DataLoader (or, with persistent workers, one pass per _reset)."""

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be "
                          "used as the device,ignore "
                          f"pin_memory_device='{loader.pin_memory_device}'.", stacklevel=2)
        if loader.pin_memory:
            # pith runs on the CPU only: there is no pinned memory to copy batches into.
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=2)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # Drawn for every pass, with or without workers, so that the global generator is
        # consumed as in PyTorch (Note [Random draws of pith.utils.data]).
        self._base_seed = _random.seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        reported = self._IterableDataset_len_called
        if (self._dataset_kind == _DatasetKind.Iterable and reported is not None
                and self._num_yielded > reported):
            message = (f"Length of IterableDataset {self._dataset} was reported to be "
                       f"{reported}(when accessing len(dataloader)), but {self._num_yielded} "
                       "samples have been fetched. ")
            if self._num_workers > 0:
                message += ("For multiprocessing data-loading, this could be caused by not "
                            "properly configuring the IterableDataset replica at each worker "
                            "(see get_worker_info()).")
            warnings.warn(message, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        if self._num_workers != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires num_workers == 0")
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


# Note [Multi-process loading]
# As PyTorch does: each worker has its own index queue, and all share one result queue.
# Task i (one key, or one batch of keys, from the sampler) goes to the next active worker in
# round-robin order, as (i, keys); the worker answers (i, batch). At most prefetch_factor *
# num_workers tasks are outstanding. Answers that arrive early wait in _task_info until
# their turn, so batches come out in the sampler's order (unless in_order=False). A worker
# of an iterable dataset that runs out answers _IterableDatasetStopIteration and gets no
# more tasks; the pass ends when no task is outstanding. An exception in a worker comes
# back as its answer (an ExceptionWrapper naming the worker) and is raised when that
# answer's turn comes. The workers are seeded from base_seed + worker id (worker.py).
#
# Note [Waiting for workers]
# The main process waits on the result queue's read end and on the process sentinels of
# the active workers together (multiprocessing.connection.wait), so a worker that dies (a
# crash, os._exit, a signal) is reported at once as "DataLoader worker (pid(s) ...) exited
# unexpectedly", where PyTorch relies on a SIGCHLD handler installed from C. Only active
# workers are watched: a worker exits normally only after it was told to stop. The read end
# is the Queue's `_reader` connection, an attribute CPython's multiprocessing.Queue has
# always had; the main process is the queue's only reader, so once it is readable, get()
# reads the message that is arriving.
#
# Note [Shutting the workers down]
# At the end of a pass (unless the workers are persistent), and when the iterator is
# dropped: set done_event (workers skip the tasks still queued), send None to every worker
# (it leaves its loop), join each for MP_STATUS_CHECK_INTERVAL seconds, and terminate those
# still alive. The index queues do not wait at exit to flush tasks nobody will read, and a
# worker told to stop does not wait to flush its results. During interpreter exit nothing
# is done: the workers are daemonic, and multiprocessing's exit handler terminates them.
# Nor is anything done by the copy of an iterator that a process forked later (a worker of
# another loader) inherits: the workers are not that process's children.
#
# While its workers run, an iterator's queues, event and Process objects are also held by
# _RUNNING (keyed by the iterator's id). An iterator in a reference cycle is freed by the
# garbage collector, which clears the weak references to everything unreachable before it
# calls __del__; multiprocessing hangs cleanup on such weak references (a Queue's closes its
# feeder thread, a Process's closes its sentinel), so without _RUNNING the None sent by
# __del__ would never leave the main process, and each worker would wait out
# MP_STATUS_CHECK_INTERVAL before being terminated.
_RUNNING = {}


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Loading in worker processes. See Note [Multi-process loading]."""

    # Until __init__ starts workers there is nothing to shut down (__del__ runs even when
    # __init__ raised).
    _shutdown = True
    _workers = ()

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._num_workers <= 0:
            raise AssertionError("num_workers must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        context = loader.multiprocessing_context or multiprocessing
        self._worker_init_fn = loader.worker_init_fn
        self._workers = []
        self._index_queues = []
        self._workers_status = [True] * self._num_workers
        self._worker_result_queue = context.Queue()
        self._workers_done_event = context.Event()
        self._owner_pid = os.getpid()
        self._shutdown = False
        _RUNNING[id(self)] = (self._workers, self._index_queues, self._worker_result_queue,
                              self._workers_done_event)
        try:
            for worker_id in range(self._num_workers):
                self._start_worker(context, worker_id)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _start_worker(self, context, worker_id):
        index_queue = context.Queue()
        index_queue.cancel_join_thread()
        worker = context.Process(
            target=_worker._worker_loop,
            args=(self._dataset_kind, self._dataset, index_queue, self._worker_result_queue,
                  self._workers_done_event, self._auto_collation, self._collate_fn,
                  self._drop_last, self._base_seed, self._worker_init_fn, worker_id,
                  self._num_workers))
        worker.daemon = True
        self._index_queues.append(index_queue)
        worker.start()  # after the append: shutdown then finds its queue
        self._workers.append(worker)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the index of the next task to send
        self._rcvd_idx = 0  # the index of the next task whose answer __next__ returns
        self._task_info = {}  # task index -> (worker id,) or (worker id, answer)
        self._tasks_outstanding = 0  # tasks sent whose answer has not arrived
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers: start a new pass in each, and drop whatever answers of the
            # previous pass are still on their way.
            for index_queue in self._index_queues:
                index_queue.put(_worker._ResumeIteration())
            waiting = self._num_workers
            while waiting > 0:
                answer_idx, _ = self._get_data()
                if isinstance(answer_idx, _worker._ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout):
        """(True, message) from the result queue within `timeout` seconds (None: no limit),
        or (False, None). Raises RuntimeError when an active worker has died (Note [Waiting
        for workers])."""
        reader = self._worker_result_queue._reader
        active = [w.sentinel for i, w in enumerate(self._workers) if self._workers_status[i]]
        ready = connection.wait([reader] + active, timeout)
        if reader in ready:
            return True, self._worker_result_queue.get()
        dead = [i for i, w in enumerate(self._workers)
                if self._workers_status[i] and not w.is_alive()]
        if dead:
            pids = ", ".join(str(self._workers[i].pid) for i in dead)
            for worker_id in dead:
                self._mark_worker_as_unavailable(worker_id)
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly")
        return False, None

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if not success:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            success, data = self._try_get_data(None)
            if success:
                return data

    def _next_data(self):
        while True:
            # Skip the tasks of workers that stopped before answering (an iterable dataset
            # that ran out); stop when nothing is outstanding.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # its answer came early
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            if self._shutdown or self._tasks_outstanding <= 0:
                raise AssertionError("Invalid iterator state: shutdown or no outstanding "
                                     "tasks when fetching next data")
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if (self._dataset_kind == _DatasetKind.Iterable
                    and isinstance(data, _worker._IterableDatasetStopIteration)):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            if not self._in_order:
                worker_id = self._task_info.pop(idx)[0]
                return self._process_data(data, worker_id)
            self._task_info[idx] += (data,)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        if self._tasks_outstanding >= max_tasks:
            raise AssertionError("Number of outstanding tasks exceeded maximum allowed tasks")
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id] and (
                    self._in_order
                    or self._workers_num_tasks[worker_id] < max_tasks // sum(self._workers_status)):
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data.load()

    def _mark_worker_as_unavailable(self, worker_id):
        # Tells the worker to leave its loop; it gets no more tasks.
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        """See Note [Shutting the workers down]."""
        if _utils is None or _utils.python_exit_status or self._shutdown:
            return
        if os.getpid() != self._owner_pid:
            return  # a copy inherited by a forked process: the workers are not its children
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id)
            for worker in self._workers:
                worker.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for index_queue in self._index_queues:
                index_queue.cancel_join_thread()
                index_queue.close()
        finally:
            for worker in self._workers:
                if worker.is_alive():
                    worker.terminate()
                    worker.join(timeout=MP_STATUS_CHECK_INTERVAL)
            _RUNNING.pop(id(self), None)

    def __del__(self):
        self._shutdown_workers()
