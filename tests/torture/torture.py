#!/usr/bin/env python3
"""Crash-consistency torture test: concurrent deltacpp processes killed at random.

    torture.py --cli build/deltacpp [--seconds S] [--workers N] [--dir PATH] [--seed K]

Several worker threads each run deltacpp commands as processes against one table, while a
killer thread sends SIGKILL to a random running command every 50-400 ms. A row's key is
(w, s, i): the worker, a sequence number of that worker (one per append or merge) and the row's
index in its batch. The commands:

  append      `write` of a small JSON Lines batch with txnAppId/txnVersion (the batch's group
              key); some of its rows are "doomed" (only deletes ever touch them)
  delete      `delete --where "doomed"` (or, without the delete command, an overwrite with
              replaceWhere "doomed" and no rows)
  update      `update --set "val = val + 1" --where "w = K"` (when the command exists)
  upsert      `merge` on the key of a source naming some existing rows, of any worker, and a
              batch of new ones: WHEN MATCHED UPDATE adds 1 to `val` and appends the merge's
              tag "w.s;" to `hist`, WHEN NOT MATCHED (and flagged new) INSERT (when the merge
              command exists)
  merge-del   `merge` whose source names rows to delete (WHEN MATCHED AND del DELETE), others
              to update as above and sometimes new rows to insert; a row is only ever named for
              deletion by one merge, and never the last row of its append
  checkpoint  `checkpoint`
  optimize    `optimize` (bin-packing; now and then `--zorder-by val` or `--purge`): rows
              never change, so every check below holds across it; a writer whose files it
              compacted meanwhile fails with a conflict
  vacuum      `vacuum` at the table's retention (7 days) after planting a few untracked files
              30 days old in the table (what crashed writers leave): every file the log names
              is fresh, so nothing a version needs may go; an acknowledged vacuum must have
              deleted every old orphan planted before it started

The test keeps its own ledger, built only from what each command was asked to do: for every
append and merge the rows it named and whether the process acknowledged the commit (exit 0),
and for a merge whether it failed with a commit conflict. After every kill and at the end it
checks, through `deltacpp read`:
  * the latest version reads, and so do the version before it and a sample of older ones
    (at the end: every version, or --final-versions of them spread over a long history);
  * no row appears twice, and every row belongs to an append or merge that was started, with
    the identity (doomed flag) it was written with;
  * each append's rows are all there or all absent (its doomed rows may be deleted as a whole,
    since one commit added them all; rows a merge deleted are absent exactly when that merge
    is there): atomicity;
  * each merge is all there or all absent: its inserted rows, its tag on every row it updated
    that is still there, and the absence of every row it deleted agree; a merge's tag is on no
    row it did not name and on none twice, and `val` counts at least the tags of its row;
  * every acknowledged append's kept rows and every acknowledged merge are there: durability;
    a merge that failed with a conflict is in no version;
  * from one version read to a later one no row disappears other than by a delete or merge
    that names it, none reappears, `val` never goes down and `hist` only grows at its end
    (no update or merge is lost);
  * nothing outside the table directory changed (a sentinel tree beside it is compared);
  * old orphans planted before an acknowledged vacuum are gone.
After the checks, a last phase restores the table to earlier versions (`restore`), killing
some of the restores at a random moment: the latest version then reads exactly as the version
before the restore or as the version restored, and every older version still reads.
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

import pyarrow.parquet as pq

# Error kinds of a commit that lost to a concurrent one: such a command must have no effect.
CONFLICTS = {"ConcurrentAppend", "ConcurrentDeleteRead", "ConcurrentDeleteDelete",
             "MetadataChanged", "ProtocolChanged", "ConcurrentTransaction"}

MERGE_ON = "target.w = source.w AND target.s = source.s AND target.i = source.i"
MERGE_UPDATE = "val = target.val + 1, hist = concat(target.hist, source.tag)"
MERGE_INSERT = ("AND source.new THEN w = source.w, s = source.s, i = source.i, "
                "doomed = false, val = 0, hist = ''")


class State:
    """What one read of the table holds, as the checks found it."""

    def __init__(self, label, rows, status):
        self.label = label
        self.rows = rows          # (w, s, i) -> (val, [merge tags in hist])
        self.status = status      # merge id -> True (there), False (absent), None (no evidence)


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
        # (w, s) -> {"rows": n, "doomed": d, "acked": bool, "merge": bool}: the rows of an
        # append, or the rows a merge inserts (never doomed, never deleted)
        self.groups = {}
        # (w, s) -> {"updates": keys, "deletes": keys, "inserts": n, "acked": bool,
        #            "conflict": bool}; a merge's id is the key of the group it inserts
        self.merges = {}
        self.reserved = {}         # row key -> the merge that names it for deletion
        self.targets = []          # acknowledged groups, merges may update their kept rows
        self.append_targets = []   # acknowledged appends, merges may delete their rows
        self.ops = {"append": 0, "delete": 0, "update": 0, "upsert": 0, "merge-del": 0,
                    "checkpoint": 0, "optimize": 0, "vacuum": 0, "restore": 0}
        self.orphans = 0           # old untracked files planted so far
        self.has_vacuum = self.command_exists("vacuum")
        self.has_optimize = self.command_exists("optimize")
        self.has_restore = self.command_exists("restore")
        self.failed_ops = {}       # clean (non-kill) failures by kind of error
        self.kills = 0
        self.versions_verified = 0
        self.checks = 0
        self.stop = threading.Event()
        self.errors = []
        self.has_delete = self.command_exists("delete")
        self.has_update = self.command_exists("update")
        self.has_merge = self.command_exists("merge")

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
                               "w int, s long, i int, doomed boolean, val long, hist string",
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
        """Counts a clean failure (crashes are errors); returns its error kind."""
        line = (err.strip().splitlines() or ["(no message)"])[-1]
        if "error:" not in line:
            self.errors.append(f"{kind} failed without a deltacpp error: {err.strip()[-500:]}")
        error_kind = line.split("error:")[-1].strip().split(" ")[0].rstrip(":")
        key = f"{kind}: {error_kind}"
        with self.lock:
            self.failed_ops[key] = self.failed_ops.get(key, 0) + 1
        return error_kind

    def append(self, w, s):
        n = self.rng.randint(1, 40)
        doomed = self.rng.randint(0, n // 3)
        lines = [json.dumps({"w": w, "s": s, "i": i, "doomed": i < doomed, "val": 0, "hist": ""})
                 for i in range(n)]
        with self.lock:
            self.groups[(w, s)] = {"rows": n, "doomed": doomed, "acked": False, "merge": False}
        rc, err, killed = self.run_command(
            ["write", self.table, "-", "--input-format", "json", "--txn-app-id", f"w{w}",
             "--txn-version", str(s)], "\n".join(lines) + "\n")
        if rc == 0:
            with self.lock:
                self.groups[(w, s)]["acked"] = True
                self.targets.append((w, s))
                self.append_targets.append((w, s))
        elif not killed:
            self.note_failure("append", err)

    def delete_doomed(self):
        if self.has_delete:
            args = ["delete", self.table, "--where", "doomed"]
            rc, err, killed = self.run_command(args)
        else:
            rc, err, killed = self.run_command(
                ["write", self.table, "-", "--input-format", "csv", "--mode", "overwrite",
                 "--replace-where", "doomed"], "w,s,i,doomed,val,hist\n")
        if rc != 0 and not killed:
            self.note_failure("delete", err)

    def update(self, w):
        rc, err, killed = self.run_command(
            ["update", self.table, "--set", "val = val + 1", "--where", f"w = {w}"])
        if rc != 0 and not killed:
            self.note_failure("update", err)

    def pick_rows(self, pool, count, deleting, exclude=()):
        """Up to `count` kept rows of one random group of `pool` (a list of acknowledged
        group keys), none of them in `exclude`; to delete, never the group's last row and
        never a row another merge names for deletion."""
        with self.lock:
            if not pool:
                return []
            w, s = self.rng.choice(pool)
            g = self.groups[(w, s)]
            keys = [(w, s, i) for i in range(g["doomed"], g["rows"] - (1 if deleting else 0))]
            keys = [k for k in keys if k not in exclude and not (deleting and k in self.reserved)]
        return self.rng.sample(keys, min(count, len(keys)))

    def merge(self, w, s, deleting):
        """An upsert (matched update + not-matched insert), or with `deleting` a merge that
        also deletes some matched rows; returns False when there was nothing to merge into."""
        deletes = []
        if deleting:
            for _ in range(self.rng.randint(1, 2)):
                deletes += self.pick_rows(self.append_targets, self.rng.randint(1, 4), True,
                                          set(deletes))
            if not deletes:
                return False
        updates = set()
        for _ in range(self.rng.randint(0 if deleting else 1, 2)):
            updates.update(self.pick_rows(self.targets, self.rng.randint(1, 5), False))
        updates -= set(deletes)
        if not deleting and not updates:
            return False
        inserts = self.rng.randint(0, 5) if deleting else self.rng.randint(1, 10)
        tag = f"{w}.{s};"
        lines = [json.dumps({"w": k[0], "s": k[1], "i": k[2], "tag": tag, "new": False,
                             "del": False}) for k in sorted(updates)]
        lines += [json.dumps({"w": k[0], "s": k[1], "i": k[2], "tag": tag, "new": False,
                              "del": True}) for k in deletes]
        lines += [json.dumps({"w": w, "s": s, "i": i, "tag": tag, "new": True, "del": False})
                  for i in range(inserts)]
        self.rng.shuffle(lines)
        with self.lock:
            for k in deletes:
                if k in self.reserved:      # taken by another merge meanwhile
                    return False
            for k in deletes:
                self.reserved[k] = (w, s)
            self.groups[(w, s)] = {"rows": inserts, "doomed": 0, "acked": False, "merge": True}
            self.merges[(w, s)] = {"updates": frozenset(updates), "deletes": tuple(deletes),
                                   "inserts": inserts, "acked": False, "conflict": False}
        args = ["merge", self.table, "--source", "-", "--source-format", "json",
                "--on", MERGE_ON]
        if deleting:
            args += ["--when-matched-delete", "source.del"]
        args += ["--when-matched-update", MERGE_UPDATE, "--when-not-matched-insert", MERGE_INSERT]
        rc, err, killed = self.run_command(args, "\n".join(lines) + "\n")
        if rc == 0:
            with self.lock:
                self.merges[(w, s)]["acked"] = True
                self.groups[(w, s)]["acked"] = True
                if inserts:
                    self.targets.append((w, s))
        elif not killed:
            kind = self.note_failure("merge-del" if deleting else "upsert", err)
            if kind in CONFLICTS:
                with self.lock:
                    self.merges[(w, s)]["conflict"] = True
        return True

    def checkpoint(self):
        rc, err, killed = self.run_command(["checkpoint", self.table])
        if rc != 0 and not killed:
            self.note_failure("checkpoint", err)

    def optimize(self):
        r = self.rng.random()
        args = ["optimize", self.table]
        if r < 0.2:
            args += ["--zorder-by", "val"]
        elif r < 0.35:
            args += ["--purge"]
        rc, err, killed = self.run_command(args)
        if rc != 0 and not killed:
            self.note_failure("optimize", err)

    def vacuum(self):
        """Plants old untracked files, then vacuums at the table's retention."""
        with self.lock:
            first = self.orphans
            self.orphans += 3
        old = time.time() - 30 * 24 * 3600
        planted = []
        for k in range(first, first + 3):
            p = os.path.join(self.table, f"orphan-{k:05d}.parquet")
            with open(p, "wb") as f:
                f.write(b"left by a crashed writer")
            os.utime(p, (old, old))
            planted.append(p)
        rc, err, killed = self.run_command(["vacuum", self.table])
        if rc == 0:
            left = [p for p in planted if os.path.exists(p)]
            if left:
                self.errors.append(f"an acknowledged vacuum left old orphans: {left}")
        elif not killed:
            self.note_failure("vacuum", err)

    def worker(self, w):
        s = 0
        while not self.stop.is_set():
            r = self.rng.random()
            kind = "append"
            if r < 0.5:
                pass
            elif r < 0.62:
                kind = "delete"
                self.delete_doomed()
            elif r < 0.74 and self.has_update:
                kind = "update"
                self.update(self.rng.randrange(self.workers))
            elif r < 0.9 and self.has_merge:
                kind = "upsert" if r < 0.83 else "merge-del"
                if not self.merge(w, s + 1, kind == "merge-del"):
                    kind = "append"
                else:
                    s += 1
            elif r < 0.93 or not (self.has_vacuum or self.has_optimize):
                kind = "checkpoint"
                self.checkpoint()
            elif r < 0.965 and self.has_optimize or not self.has_vacuum:
                kind = "optimize"
                self.optimize()
            else:
                kind = "vacuum"
                self.vacuum()
            if kind == "append":
                s += 1
                self.append(w, s)
            with self.lock:
                self.ops[kind] += 1

    def guarded(self, body, *args):
        """Runs a thread's body; an exception in it fails the test instead of ending the thread
        quietly."""
        try:
            body(*args)
        except Exception as e:      # noqa: BLE001 (any failure of the harness is a failure)
            self.errors.append(f"{body.__name__} thread failed: {e!r}")
            self.stop.set()

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

    def ledger(self):
        with self.lock:
            return ({k: dict(v) for k, v in self.groups.items()},
                    {k: dict(v) for k, v in self.merges.items()}, dict(self.reserved))

    @staticmethod
    def tags_of(hist, label, key):
        parts = hist.split(";")
        try:
            if parts[-1] != "":
                raise ValueError
            return [tuple(int(x) for x in p.split(".")) for p in parts[:-1]]
        except ValueError:
            raise AssertionError(f"{label}: row {key} has hist {hist!r}, not merge tags")

    def check_rows(self, t, label, prev=None):
        """Checks one read against the ledger (and against `prev`, the State of an earlier
        version, when given); returns its State."""
        groups, merges, reserved = self.ledger()
        rows = {}
        per_group = {}
        cols = [t[c].to_pylist() for c in ("w", "s", "i", "doomed", "val", "hist")]
        for w, s, i, d, v, h in zip(*cols):
            key = (w, s, i)
            if key in rows:
                raise AssertionError(f"{label}: row {key} appears twice")
            g = groups.get((w, s))
            if g is None or i is None or not 0 <= i < g["rows"]:
                raise AssertionError(f"{label}: row {key} belongs to no append or merge that "
                                     "was started")
            if d != (i < g["doomed"]):
                raise AssertionError(f"{label}: row {key} has doomed = {d}, written otherwise")
            if v is None or v < 0 or h is None:
                raise AssertionError(f"{label}: row {key} has val {v}, hist {h!r}")
            tags = self.tags_of(h, label, key)
            for m in tags:
                if m not in merges or key not in merges[m]["updates"]:
                    raise AssertionError(f"{label}: row {key} was changed by merge {m}, which "
                                         "did not name it for update")
            if len(set(tags)) != len(tags):
                raise AssertionError(f"{label}: row {key} has a merge applied twice: {h!r}")
            if v < len(tags):
                raise AssertionError(f"{label}: row {key} has val {v} after {len(tags)} merges")
            rows[key] = (v, tags)
            kept, gone = per_group.get((w, s), (0, 0))
            per_group[(w, s)] = (kept + (0 if d else 1), gone + (1 if d else 0))

        def anchored(w, s):     # an append's last row is kept and no merge deletes it
            return (w, s, groups[(w, s)]["rows"] - 1) in rows

        # Each merge is there or absent as a whole: every trace of it must agree.
        status = {}
        deleted = {}            # append -> its rows deleted by merges that are there
        for m, e in merges.items():
            there, absent = [], []
            if e["inserts"]:
                n = per_group.get(m, (0, 0))[0]
                if n not in (0, e["inserts"]):
                    raise AssertionError(f"{label}: merge {m} has {n} of its {e['inserts']} "
                                         "inserted rows")
                (there if n else absent).append("its inserted rows")
            for k in e["updates"]:
                if k in rows:
                    (there if m in rows[k][1] else absent).append(f"its update of row {k}")
            for k in e["deletes"]:
                if anchored(k[0], k[1]):
                    (absent if k in rows else there).append(f"its delete of row {k}")
            if there and absent:
                raise AssertionError(f"{label}: merge {m} is partial: {there[0]} is there, "
                                     f"{absent[0]} is not")
            status[m] = True if there else (False if absent else None)
            if status[m] and e["conflict"]:
                raise AssertionError(f"{label}: merge {m} failed with a conflict, yet "
                                     f"{there[0]} is there")
            if status[m]:
                for k in e["deletes"]:
                    deleted[k[:2]] = deleted.get(k[:2], 0) + 1

        for (w, s), g in groups.items():
            if g["merge"]:
                continue
            kept, doomed_present = per_group.get((w, s), (0, 0))
            if anchored(w, s):
                want_kept = g["rows"] - g["doomed"] - deleted.get((w, s), 0)
                if kept != want_kept:
                    raise AssertionError(f"{label}: append {(w, s)} has {kept} of its "
                                         f"{want_kept} kept rows (an append is all or nothing)")
            elif kept or doomed_present:
                raise AssertionError(f"{label}: append {(w, s)} lost its last row only")
            if doomed_present not in (0, g["doomed"]):
                raise AssertionError(f"{label}: append {(w, s)} has {doomed_present} of its "
                                     f"{g['doomed']} doomed rows (a delete takes all or none)")

        state = State(label, rows, status)
        if prev is not None:
            self.compare(prev, state, groups, reserved)
        return state

    @staticmethod
    def compare(a, b, groups, reserved):
        """Checks that version b, read later than version a, only moved forward from it
        (`groups` and `reserved`: the ledger as of the later of the two reads)."""
        for key, (v, tags) in a.rows.items():
            now = b.rows.get(key)
            if now is None:
                if key[2] >= groups[key[:2]]["doomed"] and key not in reserved:
                    raise AssertionError(f"row {key} of {a.label} is gone from {b.label}")
                continue
            if now[0] < v:
                raise AssertionError(f"row {key} has val {v} in {a.label} but {now[0]} in "
                                     f"{b.label} (an update was lost)")
            if now[1][:len(tags)] != tags:
                raise AssertionError(f"row {key} has merges {tags} in {a.label} but {now[1]} "
                                     f"in {b.label} (a merge was lost)")
        for key in b.rows.keys() - a.rows.keys():
            w, s = key[:2]
            if (w, s, groups[(w, s)]["rows"] - 1) in a.rows:
                raise AssertionError(f"row {key} is back in {b.label}, absent from {a.label} "
                                     "beside the rest of its append")
        for m, there in a.status.items():
            if there and b.status.get(m) is False:
                raise AssertionError(f"merge {m} is there in {a.label}, not in {b.label}")

    def verify(self, sample):
        try:
            # Appends and merges acknowledged before the read must be in it.
            with self.lock:
                acked = {k for k, g in self.groups.items() if g["acked"] and not g["merge"]}
                acked_merges = {k for k, e in self.merges.items() if e["acked"]}
            latest = self.latest_version()
            t = self.read_version()
            now = self.check_rows(t, "the latest version")
            with self.lock:
                last_row = {k: self.groups[k]["rows"] - 1 for k in acked}
            for key in acked:
                if (*key, last_row[key]) not in now.rows:
                    raise AssertionError(f"acknowledged append {key} is missing from the latest "
                                         "version")
            for m in acked_merges:
                if not now.status[m]:
                    raise AssertionError(f"acknowledged merge {m} is missing from the latest "
                                         "version")
            versions = {latest, max(latest - 1, 0)}
            versions.update(self.rng.randint(0, latest) for _ in range(sample))
            prev = None
            for v in sorted(versions):
                prev = self.check_rows(self.read_version(v), f"version {v}", prev)
            groups, _, reserved = self.ledger()
            self.compare(prev, now, groups, reserved)
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
        prev = None
        for v in versions:
            try:
                prev = self.check_rows(self.read_version(v), f"version {v}", prev)
                self.versions_verified += 1
            except AssertionError as e:
                self.errors.append(str(e))
                break
        return latest


    def rows_as_text(self, version=None):
        t = self.read_version(version)
        return sorted(json.dumps(r, sort_keys=True, default=str) for r in t.to_pylist())

    def restore_phase(self, rounds):
        """Restores to earlier versions, killing some restores midway: the latest version is
        then the one before the restore or the one restored, and nothing older is lost."""
        for _ in range(rounds):
            latest = self.latest_version()
            if latest < 2:
                return
            target = self.rng.randint(max(0, latest - 30), latest - 1)
            before = self.rows_as_text()
            wanted = self.rows_as_text(target)
            proc = subprocess.Popen([self.cli, "restore", self.table, "--version", str(target)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            kill = self.rng.random() < 0.6
            if kill:
                time.sleep(self.rng.uniform(0, 0.08))
                try:
                    proc.send_signal(signal.SIGKILL)
                except ProcessLookupError:
                    pass
            _, err = proc.communicate()
            killed = proc.returncode == -signal.SIGKILL
            self.ops["restore"] += 1
            if killed:
                self.kills += 1
            elif proc.returncode != 0:
                self.errors.append(f"restore to version {target} failed: {err.strip()[-300:]}")
                return
            try:
                now = self.rows_as_text()
                if now != wanted and (not killed or now != before):
                    self.errors.append(f"after a {'killed ' if killed else ''}restore to version "
                                       f"{target} the latest version has neither its rows nor "
                                       "the rows before")
                    return
                for v in {0, target, latest, self.rng.randint(0, latest)}:
                    self.read_version(v)
                    self.versions_verified += 1
            except AssertionError as e:
                self.errors.append(str(e))
                return


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
          f" update: {'yes' if t.has_update else 'no'},"
          f" merge: {'yes' if t.has_merge else 'no'})", flush=True)
    t.setup()
    threads = [threading.Thread(target=t.guarded, args=(t.worker, w))
               for w in range(args.workers)]
    threads.append(threading.Thread(target=t.guarded, args=(t.killer,)))
    for th in threads:
        th.start()
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline and not t.stop.is_set():
        time.sleep(0.2)
    t.stop.set()
    for th in threads:
        th.join()
    latest = t.final_check(args.final_versions) if not t.errors else -1
    if not t.errors and t.has_restore:
        t.restore_phase(rounds=8)
        latest = t.latest_version()
    acked = sum(1 for g in t.groups.values() if g["acked"] and not g["merge"])
    acked_merges = sum(1 for e in t.merges.values() if e["acked"])
    print(f"torture: {sum(t.ops.values())} operations {t.ops}, {t.kills} kills, "
          f"{acked} acknowledged appends, {acked_merges} acknowledged merges, "
          f"{latest + 1} versions, "
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
