"""A pool of worker processes that survives crashes and hangs.

Each slot owns one `python -m qfuzz.worker` process. A case is sent as a JSON line;
the worker reports the phase it enters and then the result. When the process dies
(segfault, abort, a Rust panic that kills it) the case's outcome is "crash"; when it
does not answer within the timeout it is killed and the outcome is "timeout". Both
carry the phase (polars or ladle) and the tail of the worker's stderr. The slot
starts a fresh worker for its next case. A worker found dead before its next case
(it crashed after answering) is recorded in `late` with the id of its last case.
"""

from __future__ import annotations

import json
import os
import queue
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable

HERE = Path(__file__).resolve().parent


class Worker:
    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.buf = b""
        self.err = tempfile.TemporaryFile()
        self.started = 0
        self.last_id: Any = None  # the "id" of the last request sent
        self.late: list[dict[str, Any]] = []  # deaths noticed before the next request

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        paths = [str(HERE.parent)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(paths)
        env.setdefault("POLARS_MAX_THREADS", "2")
        env.pop("LADLE_RAISE_ON_FAIL", None)
        return env

    def start(self) -> None:
        self.err.seek(0)
        self.err.truncate()
        self.buf = b""
        self.proc = subprocess.Popen(
            [sys.executable, "-u", "-m", "qfuzz.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, env=self._env(),
        )
        self.started += 1
        msg = self._read(120.0)
        if msg is None or not msg.get("ready"):
            raise RuntimeError(f"qfuzz worker did not start: {self.stderr_tail()}")

    def stderr_tail(self, n: int = 3000) -> str:
        self.err.flush()
        self.err.seek(0, 2)
        size = self.err.tell()
        self.err.seek(max(0, size - n))
        return self.err.read().decode("utf-8", "replace")

    def _read(self, timeout: float) -> dict[str, Any] | None:
        """The next JSON line, or None on EOF or when `timeout` seconds pass ({"timeout": True})."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return {"timeout": True}
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)  # type: ignore[no-any-return]

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
        self.proc = None

    def run(self, req: dict[str, Any]) -> dict[str, Any]:
        if self.proc is not None and self.proc.poll() is not None:
            # it died after answering its last case (a background thread, a corrupted
            # heap noticed later): that case is the suspect
            rc = self.proc.returncode
            self.late.append({"id": self.last_id, "signal": signal.Signals(-rc).name if rc < 0 else f"exit {rc}",
                              "stderr": self.stderr_tail()})
            self.proc = None
        if self.proc is None:
            self.start()
        self.last_id = req.get("id")
        assert self.proc is not None and self.proc.stdin is not None
        t0 = time.monotonic()
        phase = "send"
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        deadline = t0 + self.timeout
        while True:
            msg = self._read(max(0.0, deadline - time.monotonic()))
            if msg is None:
                rc = self.proc.wait()
                tail = self.stderr_tail()
                self.proc = None
                sig = -rc if rc < 0 else None
                name = signal.Signals(sig).name if sig else f"exit {rc}"
                return {"outcome": "crash", "phase": phase, "signal": name, "stderr": tail,
                        "seconds": time.monotonic() - t0}
            if msg.get("timeout"):
                self.kill()
                return {"outcome": "timeout", "phase": phase, "stderr": self.stderr_tail(),
                        "seconds": time.monotonic() - t0}
            if "phase" in msg:
                phase = msg["phase"]
                continue
            msg["seconds"] = time.monotonic() - t0
            return msg

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
        self.proc = None
        self.err.close()


class Pool:
    """`jobs` workers; `map` runs requests and calls `done(key, result)` as each finishes."""

    def __init__(self, jobs: int, timeout: float = 30.0) -> None:
        self.workers = [Worker(timeout) for _ in range(jobs)]

    def run_one(self, req: dict[str, Any]) -> dict[str, Any]:
        return self.workers[0].run(req)

    def map(self, reqs: Iterable[tuple[Any, dict[str, Any]]], done: Callable[[Any, dict[str, Any]], None],
            stop: Callable[[], bool] = lambda: False) -> None:
        q: queue.Queue[tuple[Any, dict[str, Any]] | None] = queue.Queue(maxsize=2 * len(self.workers))
        lock = threading.Lock()
        errors: list[BaseException] = []

        def slot(w: Worker) -> None:
            while True:
                item = q.get()
                if item is None:
                    return
                key, req = item
                try:
                    res = w.run(req)
                except BaseException as e:  # noqa: BLE001
                    errors.append(e)
                    res = {"outcome": "harness_error", "error": {"type": type(e).__name__, "message": str(e)}}
                with lock:
                    done(key, res)

        threads = [threading.Thread(target=slot, args=(w,), daemon=True) for w in self.workers]
        for t in threads:
            t.start()
        try:
            for item in reqs:
                if stop():
                    break
                q.put(item)
        finally:
            for _ in threads:
                q.put(None)
            for t in threads:
                t.join()

    def late_crashes(self) -> list[dict[str, Any]]:
        """Workers that died after answering a case (each names that case's id)."""
        return [x for w in self.workers for x in w.late]

    def close(self) -> None:
        for w in self.workers:
            w.close()
