"""Damaged and hostile checkpoints for the fuzz test, from real checkpoints of several models
(version 2 with and without fields, and version 1 files as the previous release wrote them):
truncated, bits flipped, bytes spliced, every manifest entry replaced by junk of every type,
parameters and aux values out of range or of the wrong type, another model's label, newer and
older versions, arrays of the wrong shape, dtype or content, pickled objects, NaN, extra,
missing, duplicated, encrypted or oddly compressed members, compression bombs (honest and
lying), lying zip sizes, and things that are not checkpoints at all.

Each case: {"surface": "checkpoint", "id", "kind", "path", "expect", "ref"}; expect "same"
(must load and equal the reference `ref`), "error" (a clean ParameterError), "same-or-error"
(a flipped bit: refused, or harmless and then equal) or "any" (a consistent forged file that
may load: it must then be a working simulation)."""
from __future__ import annotations

import copy
import json
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np

from . import corrupt

BASES = [("heat-1d", None, {"nx": 32}), ("euler-1d", None, {"nx": 32}),
         ("willmore", None, {"nx": 8}), ("chemotaxis", None, {"vertices": 64}),
         ("gray-scott", "tube", {"vertices": 64}), ("shallow-water", None, {"nx": 8, "ny": 6}),
         ("shallow-water", "bump-dambreak", {"cells": 32}), ("two-layer", None, {"cells": 32})]
JUNK = ["", "x", "1.5", 1.5, 0, -1, -1e300, 1e300, 10**30, 2**53 + 1, 2**64, True, False, None,
        [], [1, 2], {}, {"a": {"b": [1, None]}}, "nan", [[[[[]]]]], "é" * 3000, -0.0]
NONFINITE = ["NaN", "Infinity", "-Infinity"]  # JSON text that Python's json accepts


def _save_bases(folder: Path, steps: int = 3) -> list[dict]:
    from pdestudio import solvers
    out = []
    for model, scenario, params in BASES:
        sim = solvers.create(model, backend="numpy", scenario=scenario, **params)
        sim.step(steps)
        tag = f"{model}-{scenario or 'default'}"
        ref = folder / f"ref-{tag}.npz"
        fields = sim.fields()
        np.savez(ref, __t=np.array(sim.t), __steps=np.array(sim.steps), **fields)
        plain = folder / f"base-{tag}.npz"
        sim.save(plain)
        full = folder / f"full-{tag}.npz"
        sim.save(full, include_fields=True)
        v1 = folder / f"v1-{tag}.npz"
        meta = {"version": 1, "model": sim.model, "scenario": sim.scenario_name,
                "dtype": sim.dtype, "backend": sim.backend, "params": dict(sim.params),
                "t": sim.t, "steps": sim.steps, "aux": sim._aux_state()}
        with open(v1, "wb") as f:
            np.savez(f, __meta__=np.array(json.dumps(meta)),
                     **{f"state/{k}": np.asarray(v) for k, v in sim.state.items()})
        for path, version in ((plain, 2), (full, 2), (v1, 1)):
            out.append({"path": path, "ref": ref, "model": sim.model, "version": version,
                        "state": {k: (np.asarray(v).shape, str(np.asarray(v).dtype))
                                  for k, v in sim.state.items()}})
    return out


def _valid_edit(key: str, value, base_meta: dict) -> bool:
    """Whether `value` for manifest entry `key` is still a valid checkpoint (may load)."""
    num = isinstance(value, (int, float)) and not isinstance(value, bool)
    if key == "t":
        return num and value >= 0 and value < 1.7e308 and (isinstance(value, int) or
                                                            np.isfinite(value))
    if key == "steps":
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53
    if key == "backend":
        return isinstance(value, str) and 0 < len(value) <= 200
    if key == "params":
        return isinstance(value, dict)
    if key == "fields":
        return isinstance(value, dict) and all(
            isinstance(d, dict) and all(isinstance(x, str) and len(x) < 200 for x in d.values())
            for d in value.values())
    return value == base_meta.get(key)


def cases(rng, folder: Path, count: int) -> list[dict]:
    folder.mkdir(parents=True, exist_ok=True)
    bases = _save_bases(folder)
    out: list[dict] = []

    def add(kind, base, expect, path=None):
        out.append({"surface": "checkpoint", "id": f"checkpoint-{len(out)}", "kind": kind,
                    "path": str(path or base["path"]), "expect": expect,
                    "ref": str(base["ref"]) if base else None})

    def new(ext="npz"):
        return folder / f"c{len(out):05d}.{ext}"

    def mutate(base):
        """One random damage of `base` (adds a case)."""
        src, meta = base["path"], corrupt.meta_of(base["path"])
        how = rng.choice(["truncate", "flip", "flip8", "splice", "meta-junk", "meta-json",
                          "param", "param-unknown", "param-drop", "model", "version", "arrays",
                          "array", "members", "bomb", "lie", "nonfinite-text"])
        p = new()
        if how == "truncate":
            corrupt.truncate(src, p, int(rng.integers(0, src.stat().st_size)))
            add("truncated", base, "error", p)
        elif how in ("flip", "flip8"):
            data = bytearray(src.read_bytes())
            for _ in range(1 if how == "flip" else 8):
                data[int(rng.integers(len(data)))] ^= 1 << int(rng.integers(8))
            p.write_bytes(bytes(data))
            add(f"bit-{how}", base, "same-or-error", p)
        elif how == "splice":
            p.write_bytes(corrupt_splice(rng, src.read_bytes()))
            add("spliced", base, "same-or-error", p)
        elif how == "meta-junk":
            key = str(rng.choice(sorted(meta)))
            value = copy.deepcopy(JUNK[int(rng.integers(len(JUNK)))])
            meta[key] = value
            corrupt.with_meta(src, p, meta)
            add(f"meta-{key}={str(value)[:20]}", base,
                "any" if _valid_edit(key, value, corrupt.meta_of(src)) else "error", p)
        elif how == "meta-json":
            key = str(rng.choice(["t", "steps", "aux", "params"]))
            text = json.dumps(meta)
            junk = str(rng.choice(NONFINITE))
            if key == "aux":
                meta["aux"] = {k: "__X__" for k in meta.get("aux", {})} or {"dt": "__X__"}
            elif key == "params":
                k = str(rng.choice(sorted(meta["params"])))
                meta["params"][k] = "__X__"
            else:
                meta[key] = "__X__"
            text = json.dumps(meta).replace('"__X__"', junk)
            corrupt.with_meta(src, p, text)
            add(f"meta-{key}-{junk}", base, "error", p)
        elif how == "param":
            k = str(rng.choice(sorted(meta["params"])))
            v = meta["params"][k]
            choices = JUNK + ([v * 2, v + 1, -v] if isinstance(v, (int, float)) and
                              not isinstance(v, bool) else [])
            meta["params"][k] = copy.deepcopy(choices[int(rng.integers(len(choices)))])
            corrupt.with_meta(src, p, meta)
            add(f"param-{k}", base, "any", p)
        elif how == "param-unknown":
            meta["params"]["no_such_parameter"] = 1
            corrupt.with_meta(src, p, meta)
            add("param-unknown", base, "error", p)
        elif how == "param-drop":
            meta["params"].pop(str(rng.choice(sorted(meta["params"]))))
            corrupt.with_meta(src, p, meta)
            add("param-dropped", base, "any", p)
        elif how == "model":
            other = str(rng.choice(sorted({b["model"] for b in bases} - {base["model"]})))
            meta["model"] = other
            corrupt.with_meta(src, p, meta)
            same_state = any(b["model"] == other and b["state"] == base["state"] for b in bases)
            add(f"model-as-{other}", base, "any" if same_state else "error", p)
        elif how == "version":
            v = [3, 0, -1, "2", None, 1.0, 2**64, 1 if base["version"] == 2 else 2]
            meta["version"] = v[int(rng.integers(len(v)))]
            corrupt.with_meta(src, p, meta)
            add(f"version-{meta['version']}", base, "error", p)
        elif how == "arrays" and base["version"] == 2:
            name = str(rng.choice(sorted(meta["arrays"])))
            what = str(rng.choice(["shape", "dtype", "sha256", "drop", "extra", "junk"]))
            entry = meta["arrays"][name]
            if what == "shape":
                entry["shape"] = [int(n) + 1 for n in entry["shape"]] or [1]
            elif what == "dtype":
                entry["dtype"] = str(rng.choice([d for d in ("float32", "float64", "int64",
                                                              "object", "complex128")
                                                   if d != entry["dtype"]]))
            elif what == "sha256":
                entry["sha256"] = "0" * 64
            elif what == "drop":
                del meta["arrays"][name]
            elif what == "extra":
                meta["arrays"]["state/ghost"] = dict(entry)
            else:
                meta["arrays"][name] = JUNK[int(rng.integers(len(JUNK)))]
            corrupt.with_meta(src, p, meta)
            add(f"arrays-{what}", base, "error", p)
        elif how == "array":
            state = [n[:-4] for n in corrupt.members(src) if n.startswith("state/")]
            name = str(rng.choice(sorted(state)))
            a = np.load(src, allow_pickle=False)[name]
            what = str(rng.choice(["shape", "float32", "object", "nan", "values", "complex",
                                   "values-old-sha"]))
            fix = what != "values-old-sha"
            new_a = {"shape": lambda: np.zeros(a.size + 1), "float32": lambda: a.astype(np.float32),
                     "object": lambda: np.array([os.system] * 3, dtype=object),
                     "nan": lambda: np.where(np.arange(a.size).reshape(a.shape) == 0, np.nan, a),
                     "values": lambda: a + 1.0, "complex": lambda: a.astype(complex),
                     "values-old-sha": lambda: a * 2 + 1}[what]()
            corrupt.with_array(src, p, name, new_a, fix_manifest=fix)
            forged = (what == "values" and base["version"] == 2) or (
                what == "values-old-sha" and base["version"] == 1)  # consistent, just different
            add(f"array-{what}", base, "any" if forged else "error", p)
        elif how == "members":
            parts = corrupt.members(src)
            what = str(rng.choice(["extra", "missing", "duplicate", "bzip2", "encrypted"]))
            if what == "extra":
                parts["state/ghost.npy"] = corrupt.npy(np.zeros(3))
                corrupt.write_zip(p, parts)
            elif what == "missing":
                del parts[str(rng.choice([n for n in parts if n != "__meta__.npy"]))]
                corrupt.write_zip(p, parts)
            elif what == "duplicate":
                import warnings
                with warnings.catch_warnings(), zipfile.ZipFile(p, "w") as z:
                    warnings.simplefilter("ignore")
                    for n, d in parts.items():
                        z.writestr(n, d)
                    n = next(n for n in parts if n.startswith("state/"))
                    z.writestr(n, parts[n])
            elif what == "bzip2":
                with zipfile.ZipFile(p, "w", zipfile.ZIP_BZIP2) as z:
                    for n, d in parts.items():
                        z.writestr(n, d)
            else:
                data = bytearray(src.read_bytes())
                i = data.find(b"PK\x01\x02")
                while i >= 0:
                    data[i + 8] |= 1  # the "encrypted" flag in the central directory
                    i = data.find(b"PK\x01\x02", i + 4)
                p.write_bytes(bytes(data))
            add(f"members-{what}", base, "error", p)
        elif how == "bomb":
            name = next(n[:-4] for n in corrupt.members(src) if n.startswith("state/"))
            corrupt.bomb(src, p, name, int(rng.choice([16, 64, 256])) << 20,
                         honest=bool(rng.integers(2)))
            add("compression-bomb", base, "error", p)
        elif how == "lie":
            name = str(rng.choice(sorted(corrupt.members(src))))
            corrupt.lie_about_size(src, p, name, int(rng.choice([0, 1, 10**9, 2**32 - 1])))
            add("zip-size-lie", base, "error", p)
        else:
            text = json.dumps(meta).replace(json.dumps(meta["t"]), str(rng.choice(NONFINITE)), 1)
            corrupt.with_meta(src, p, text)
            add("t-nonfinite-text", base, "error", p)

    # the fixed set: valid files, things that are not checkpoints, special files
    for b in bases:
        add("valid", b, "same")
    junk = {"empty": b"", "text": b"hello\n", "pickle": pickle.dumps({"a": [1, 2]}),
            "pickle-reduce": b"cos\nsystem\n(S'true'\ntR.", "png": b"\x89PNG\r\n\x1a\n" + bytes(64),
            "npy": corrupt.npy(np.zeros(4)), "zip-of-text": None, "plain-npz": None}
    for kind, data in junk.items():
        p = new()
        if kind == "zip-of-text":
            corrupt.write_zip(p, {"readme.txt": b"hi"})
        elif kind == "plain-npz":
            np.savez(p, a=np.zeros(3))
        else:
            p.write_bytes(data)
        add(f"not-a-checkpoint-{kind}", None, "error", p)
    p = new()
    p.mkdir(exist_ok=True)
    add("directory", None, "error", p)
    p = new()
    if not p.exists():
        os.mkfifo(p)
    add("fifo", None, "error", p)
    p = new()
    if not p.is_symlink():
        os.symlink("/dev/zero", p)
    add("symlink-dev-zero", None, "error", p)
    add("missing-file", None, "error", folder / "no-such-file.npz")
    while len(out) < count:
        mutate(bases[int(rng.integers(len(bases)))])
    if len(out) > count:
        keep = sorted(int(i) for i in rng.choice(len(out), count, replace=False))
        out = [out[i] for i in keep]
    return out


def corrupt_splice(rng, data: bytes) -> bytes:
    i, j = sorted(int(x) for x in rng.integers(0, len(data), 2))
    return data[:i] + data[i:j] * int(rng.integers(0, 3)) + data[j:]
