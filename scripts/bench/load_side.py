#!/usr/bin/env python3
"""The load-time step's helpers (scripts/bench-gpu.sh --steps load,load-diag; issue #13):

  load_side.py table WORK        one table from the cold-start JSON files in WORK: a row a phase,
                                 a column a run (the files in the order they were written)
  load_side.py rusage LABEL WORK VKCNN [VAR=VALUE ...]
                                 one cold start of /tmp/resnet50.onnx (`vkcnn bench --cold-only`,
                                 WORK/cache as the pipeline cache) with its page faults, context
                                 switches and CPU time (getrusage), as one line
"""
import glob, json, os, resource, subprocess, sys


def set_argv(argv):
    """The bodies below read their arguments from sys.argv[1:], as the scripts they came from."""
    sys.argv = [sys.argv[0]] + argv


def table(argv):
    """A row per phase, a column per run."""
    set_argv(argv)
    import glob, json, os, sys
    order = ["context", "context_wait", "read", "parse", "check", "import", "shape_inference", "optimize", "pack",
             "upload", "images", "load", "first_run", "pipelines", "total"]
    cols, data = [], {}
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json")), key=os.path.getmtime):
        name = os.path.basename(path)[:-5]
        try:
            j = json.load(open(path))
        except Exception as e:
            print(name, "unreadable:", e)
            continue
        cols.append(name)
        data[name] = j
    print("| ms | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for k in order:
        print(f"| {k} | " + " | ".join(f"{data[c].get('cold_' + k + '_ms', float('nan')):.1f}"
                                      for c in cols) + " |")
    print("| submissions | " + " | ".join(str(data[c].get("cold_upload_submissions", "")) for c in cols) + " |")


def rusage(argv):
    """One cold start with its getrusage figures."""
    set_argv(argv)
    import json, os, resource, subprocess, sys
    label, w, vkcnn, env = sys.argv[1], sys.argv[2], sys.argv[3], dict(os.environ)
    for kv in sys.argv[4:]:
        k, v = kv.split("=", 1); env[k] = v
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["timeout", "60", vkcnn, "bench", "/tmp/resnet50.onnx", "--cold-only", "--cache-dir",
                    w + "/cache", "--json", w + "/" + label + ".json"], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    j = json.load(open(w + "/" + label + ".json"))
    keys = ["context", "context_wait", "parse", "import", "pack", "upload", "load", "first_run", "total"]
    print(f"{label:14s}", " ".join(f"{k} {j.get('cold_' + k + '_ms', float('nan')):.1f}" for k in keys),
          f"| minflt {after.ru_minflt - before.ru_minflt} nvcsw {after.ru_nvcsw - before.ru_nvcsw}"
          f" nivcsw {after.ru_nivcsw - before.ru_nivcsw} user {after.ru_utime - before.ru_utime:.2f}s"
          f" sys {after.ru_stime - before.ru_stime:.2f}s")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command not in ("table", "rusage"):
        sys.exit(__doc__)
    {"table": table, "rusage": rusage}[command](sys.argv[2:])
