#!/usr/bin/env python3
"""Crash-consistency torture test: concurrent deltacpp processes killed at random.

    torture.py --cli build/deltacpp [--seconds S] [--workers N] [--dir PATH] [--seed K]

Several worker threads each run deltacpp commands as processes against one table, while a
killer thread sends SIGKILL to a random running command every 50-400 ms. The commands:

  append      `write` of a small JSON Lines batch with txnAppId/txnVersion (the batch's group
              key); some of its rows are "doomed" (only deletes ever touch them)
  delete      `delete --where "doomed"` (or, without the delete command, an overwrite with
              replaceWhere "doomed" and no rows)
  update      `update --set "val = val + 1" --where "w = K"` (when the command exists)
  checkpoint  `checkpoint`

The test keeps its own ledger: for every append the rows it wrote and whether the process
acknowledged the commit (exit 0). After every kill and at the end it checks, through
`deltacpp read`:
  * the latest version reads, and so do the version before it and a sample of older ones
    (at the end: every version, or --final-versions of them spread over a long history);
  * no row appears twice, and every row belongs to an append that was started;
  * each append's rows are all there or all absent (its doomed rows may be deleted as a whole,
    since one commit added them all): atomicity;
  * every acknowledged append's kept rows are there: durability;
  * `val` never went below its written value and rows never change identity under UPDATE;
  * nothing outside the table directory changed (a sentinel tree beside it is compared).
Exit status 0 and a summary line (operations, kills, versions verified) when all hold.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pyarrow.compute as pc
import pyarrow.parquet as pq


class Torture:
    def __init__(self, cli, root, workers, seed):
        self.cli = cli
        self.root = root
        self.table = os.path.join(root, "table")
        self.sentinel = os.path.join(root, "sentinel")
        self.scratch = os.path.join(root, "scratch")
        self.workers = workers
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.running = {}          # pid -> Popen
        self.groups = {}           # (w, s) -> {"rows": n, "doomed": d, "acked": bool}
        self.ops = {"append": 0, "delete": 0, "update": 0, "checkpoint": 0}
        self.failed_ops = {}       # clean (non-kill) failures by kind of error
        self.kills = 0
        self.versions_verified = 0
        self.checks = 0
        self.stop = threading.Event()
        self.errors = []
        self.has_delete = self.command_exists("delete")
        self.has_update = self.command_exists("update")

    def command_exists(self, name):
        return subprocess.run([self.cli, name, "--help"], capture_output=True).returncode == 0

    # -- setup ---------------------------------------------------------------------------------
    def setup(self):
        os.makedirs(self.scratch, exist_ok=True)
        os.makedirs(os.path.join(self.sentinel, "sub"), exist_ok=True)
        for name, text in (("a.txt", "keep me"), ("sub/b.parquet", "not parquet"),
                           ("_delta_log", "a file named like a log")):
            with open(os.path.join(self.sentinel, name), "w") as f:
                f.write(text)
        self.sentinel_digest = self.tree_digest(self.sentinel)
        done = subprocess.run([self.cli, "create", self.table, "--schema",
                               "w int, s long, i int, doomed boolean, val long",
                               "--property", "delta.checkpointInterval=7"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"torture: create failed: {done.stderr}")

    @staticmethod
    def tree_digest(path):
        h = hashlib.sha256()
        for base, dirs, files in sorted(os.walk(path)):
            dirs.sort()
            for f in sorted(files):
                p = os.path.join(base, f)
                h.update(p.encode())
                with open(p, "rb") as fh:
                    h.update(fh.read())
        return h.hexdigest()

    # -- commands ------------------------------------------------------------------------------
    def run_command(self, args, stdin_text=None):
        """Runs one deltacpp command; returns (exit code, stderr, killed)."""
        proc = subprocess.Popen([self.cli, *args], stdin=subprocess.PIPE if stdin_text else None,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        with self.lock:
            self.running[proc.pid] = proc
        try:
            _, err = proc.communicate(stdin_text)
        finally:
            with self.lock:
                self.running.pop(proc.pid, None)
        return proc.returncode, err, proc.returncode == -signal.SIGKILL

    def note_failure(self, kind, err):
        # Clean failures (conflicts a retry loop gave up on, say) are allowed; crashes are not.
        line = (err.strip().splitlines() or ["(no message)"])[-1]
        if "error:" not in line:
            self.errors.append(f"{kind} failed without a deltacpp error: {err.strip()[-500:]}")
        key = f"{kind}: {line.split('error:')[-1].strip().split(' ')[0]}"
        with self.lock:
            self.failed_ops[key] = self.failed_ops.get(key, 0) + 1

    def append(self, w, s):
        n = self.rng.randint(1, 40)
        doomed = self.rng.randint(0, n // 3)
        lines = [json.dumps({"w": w, "s": s, "i": i, "doomed": i < doomed, "val": 0})
                 for i in range(n)]
        with self.lock:
            self.groups[(w, s)] = {"rows": n, "doomed": doomed, "acked": False}
        rc, err, killed = self.run_command(
            ["write", self.table, "-", "--input-format", "json", "--txn-app-id", f"w{w}",
             "--txn-version", str(s)], "\n".join(lines) + "\n")
        if rc == 0:
            with self.lock:
                self.groups[(w, s)]["acked"] = True
        elif not killed:
            self.note_failure("append", err)

    def delete_doomed(self):
        if self.has_delete:
            args = ["delete", self.table, "--where", "doomed"]
            rc, err, killed = self.run_command(args)
        else:
            rc, err, killed = self.run_command(
                ["write", self.table, "-", "--input-format", "csv", "--mode", "overwrite",
                 "--replace-where", "doomed"], "w,s,i,doomed,val\n")
        if rc != 0 and not killed:
            self.note_failure("delete", err)

    def update(self, w):
        rc, err, killed = self.run_command(
            ["update", self.table, "--set", "val = val + 1", "--where", f"w = {w}"])
        if rc != 0 and not killed:
            self.note_failure("update", err)

    def checkpoint(self):
        rc, err, killed = self.run_command(["checkpoint", self.table])
        if rc != 0 and not killed:
            self.note_failure("checkpoint", err)

    def worker(self, w):
        s = 0
        while not self.stop.is_set():
            r = self.rng.random()
            if r < 0.6:
                s += 1
                self.append(w, s)
                kind = "append"
            elif r < 0.75:
                self.delete_doomed()
                kind = "delete"
            elif r < 0.9 and self.has_update:
                self.update(self.rng.randrange(self.workers))
                kind = "update"
            else:
                self.checkpoint()
                kind = "checkpoint"
            with self.lock:
                self.ops[kind] += 1

    def killer(self):
        while not self.stop.is_set():
            time.sleep(self.rng.uniform(0.05, 0.4))
            with self.lock:
                victims = list(self.running.values())
            if not victims:
                continue
            victim = self.rng.choice(victims)
            try:
                victim.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                continue
            victim.wait()
            with self.lock:
                self.kills += 1
            self.verify(sample=3)

    # -- verification --------------------------------------------------------------------------
    def read_version(self, version=None):
        out = os.path.join(self.scratch, f"read-{threading.get_ident()}.parquet")
        args = [self.cli, "read", self.table, "--format", "parquet", "--output", out]
        if version is not None:
            args += ["--version", str(version)]
        done = subprocess.run(args, capture_output=True, text=True)
        if done.returncode != 0:
            raise AssertionError(f"version {version if version is not None else 'latest'} "
                                 f"does not read: {done.stderr.strip()}")
        t = pq.read_table(out)
        os.remove(out)
        return t

    def latest_version(self):
        names = [n for n in os.listdir(os.path.join(self.table, "_delta_log"))
                 if n.endswith(".json") and n[:20].isdigit()]
        return max(int(n[:20]) for n in names)

    def check_rows(self, t, label):
        with self.lock:
            groups = {k: dict(v) for k, v in self.groups.items()}
        ws = t["w"].to_pylist()
        ss = t["s"].to_pylist()
        iss = t["i"].to_pylist()
        doomed = t["doomed"].to_pylist()
        vals = t["val"].to_pylist()
        seen = set()
        per_group = {}
        for w, s, i, d, v in zip(ws, ss, iss, doomed, vals):
            key = (w, s, i)
            if key in seen:
                raise AssertionError(f"{label}: row {key} appears twice")
            seen.add(key)
            g = groups.get((w, s))
            if g is None:
                raise AssertionError(f"{label}: row {key} belongs to no append that was started")
            if v is None or v < 0:
                raise AssertionError(f"{label}: row {key} has val {v}")
            kept, gone = per_group.get((w, s), (0, 0))
            per_group[(w, s)] = (kept + (0 if d else 1), gone + (1 if d else 0))
        for key, g in groups.items():
            kept, doomed_present = per_group.get(key, (0, 0))
            want_kept = g["rows"] - g["doomed"]
            if kept not in (0, want_kept):
                raise AssertionError(f"{label}: append {key} has {kept} of its {want_kept} kept "
                                     "rows (an append is all or nothing)")
            if doomed_present not in (0, g["doomed"]):
                raise AssertionError(f"{label}: append {key} has {doomed_present} of its "
                                     f"{g['doomed']} doomed rows (a delete takes all or none)")
            if kept == 0 and doomed_present > 0:
                raise AssertionError(f"{label}: append {key} lost its kept rows only")
        return groups, per_group

    def verify(self, sample):
        try:
            # Appends acknowledged before the read must be in it.
            with self.lock:
                acked = {k for k, g in self.groups.items() if g["acked"]}
            latest = self.latest_version()
            t = self.read_version()
            groups, per_group = self.check_rows(t, "latest")
            for key, g in groups.items():
                if key in acked and g["rows"] > g["doomed"] and per_group.get(key, (0, 0))[0] == 0:
                    raise AssertionError(f"acknowledged append {key} is missing from the latest "
                                         "version")
            versions = {latest, max(latest - 1, 0)}
            versions.update(self.rng.randint(0, latest) for _ in range(sample))
            for v in sorted(versions):
                self.check_rows(self.read_version(v), f"version {v}")
            if self.tree_digest(self.sentinel) != self.sentinel_digest:
                raise AssertionError("files beside the table changed")
            stray = set(os.listdir(self.root)) - {"table", "sentinel", "scratch"}
            if stray:
                raise AssertionError(f"files appeared beside the table: {sorted(stray)}")
            with self.lock:
                self.versions_verified += len(versions)
                self.checks += 1
        except AssertionError as e:
            self.errors.append(str(e))
            self.stop.set()

    def final_check(self, max_versions):
        """Checks every version, or, on a long history, `max_versions` of them: the newest
        quarter of them and the rest spread evenly over the older versions."""
        latest = self.latest_version()
        self.verify(sample=0)
        versions = list(range(latest + 1))
        if len(versions) > max_versions:
            newest = max_versions // 4
            older = versions[:-newest]
            step = len(older) / (max_versions - newest)
            versions = sorted({older[int(i * step)] for i in range(max_versions - newest)}
                              | set(versions[-newest:]))
        for v in versions:
            try:
                self.check_rows(self.read_version(v), f"version {v}")
                self.versions_verified += 1
            except AssertionError as e:
                self.errors.append(str(e))
                break
        return latest


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--dir")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--final-versions", type=int, default=400,
                    help="versions read at the end (all of them when there are fewer)")
    args = ap.parse_args()
    root = args.dir or tempfile.mkdtemp(prefix="torture.")
    root = os.path.abspath(root)
    if os.path.exists(os.path.join(root, "table")):
        sys.exit(f"torture: {root} already holds a table; give an empty --dir")
    os.makedirs(root, exist_ok=True)
    t = Torture(os.path.abspath(args.cli), root, args.workers, args.seed)
    print(f"torture: seed {args.seed}, {args.workers} workers, {args.seconds:.0f} s, in {root}"
          f" (delete: {'command' if t.has_delete else 'replaceWhere'},"
          f" update: {'yes' if t.has_update else 'no'})", flush=True)
    t.setup()
    threads = [threading.Thread(target=t.worker, args=(w,)) for w in range(args.workers)]
    threads.append(threading.Thread(target=t.killer))
    for th in threads:
        th.start()
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline and not t.stop.is_set():
        time.sleep(0.2)
    t.stop.set()
    for th in threads:
        th.join()
    latest = t.final_check(args.final_versions) if not t.errors else -1
    acked = sum(1 for g in t.groups.values() if g["acked"])
    print(f"torture: {sum(t.ops.values())} operations {t.ops}, {t.kills} kills, "
          f"{acked} acknowledged appends, {latest + 1} versions, "
          f"{t.versions_verified} version reads verified in {t.checks} checks; "
          f"clean failures: {t.failed_ops or 'none'}")
    if t.errors:
        print("torture: FAILED (seed %d, table kept in %s):\n  %s"
              % (args.seed, root, "\n  ".join(t.errors[:10])), file=sys.stderr)
        sys.exit(1)
    if not args.dir:
        shutil.rmtree(root, ignore_errors=True)
    print("torture: OK")


if __name__ == "__main__":
    main()
