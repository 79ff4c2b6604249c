"""Runs the GPU benchmark on the device machine and prints its tables.

    python3 bench/gpu/run.py [--bundle .gpu-bench] [--device cuda|cpu]
        [--steps 5] [--warmup 2] [--parts lethe,profiles,lethe-largest,
        pytorch,pytorch-largest] [--models ...] [--deadline 540] [--out DIR]
        [--merge RESULTS.json]

Reads the folder bench/gpu/prepare wrote (manifest.json and the executables
in lethe.tar.xz) and measures, for each model at its benchmark batch:

- Lethe's executables at each budget, with and without offload: step time
  (the driver's time of each step, the median after --warmup steps) and peak
  device memory (the arena the driver reports; with NVML, also the process's
  whole device memory), beside the planner's predicted step time;
- the profile of each model's 100% plan (--profile), written to --out for
  `prepare --measured` to plan from measured op times, and printed as a
  table of where the step's time goes (ops grouped by name, against the
  planner's prediction for them);
- Lethe's largest batch: the executable prepare planned under the device's
  memory, run for two steps;
- PyTorch eager and PyTorch with torch.utils.checkpoint around every block:
  step time (CUDA events, the median of --steps after --warmup) and peak
  memory (torch.cuda.max_memory_allocated over the timed steps), and the
  largest batch each fits (doubling, then bisection, catching out-of-memory).

float32 everywhere, TF32 off unless --tf32 (NVIDIA_TF32_OVERRIDE=0 for the
executables, torch.backends flags for PyTorch). A Lethe executable that
fails, or PyTorch missing, is one line, and the run goes on. With --device
cpu (the tiny flow of `prepare --size tiny --target cpu`) everything runs
on the CPU and memory columns that need a GPU say n/a. Prints markdown
tables with the date, GPU, driver, CUDA and PyTorch versions; --out DIR also
gets results.md, results.json and profiles.tar.gz.
"""

import argparse
import datetime
import gc
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import suite  # noqa: E402

PARTS = ["lethe", "profiles", "lethe-largest", "pytorch", "pytorch-largest"]
STEP_LINE = re.compile(r"^step (\d+)  loss (\S+)  time (\S+) ms  peak device (\d+) bytes$", re.M)


def mib(value):
    return value / (1 << 20)


class Clock:
    """The run's deadline: parts that would start after it are skipped."""

    def __init__(self, seconds):
        self.start = time.monotonic()
        self.seconds = seconds

    def elapsed(self):
        return time.monotonic() - self.start

    def expired(self):
        return self.elapsed() > self.seconds


def log(clock, message):
    print(f"[{clock.elapsed():5.0f} s] {message}", flush=True)


# ---------------------------------------------------------------- environment


def command_output(command):
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def import_torch():
    try:
        import torch  # noqa: F401
    except ImportError as error:
        return None, str(error)
    return torch, None


def environment(device, torch):
    """What the tables' header says of the machine."""
    info = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "python": platform.python_version()}
    if device == "cuda":
        smi = command_output(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"]).strip().splitlines()
        if smi:
            name, driver, memory = [field.strip() for field in smi[0].split(",")]
            info.update(gpu=name, driver=driver, gpu_memory=memory)
        header = command_output(["nvidia-smi"])
        match = re.search(r"CUDA Version:\s*(\S+)", header)
        if match:
            info["driver_cuda"] = match.group(1)
    else:
        info["gpu"] = "CPU only (%s, %d cores)" % (platform.machine(), os.cpu_count())
    if torch is not None:
        info["pytorch"] = torch.__version__
        info["pytorch_cuda"] = torch.version.cuda
        if device == "cuda" and torch.cuda.is_available():
            info["cudnn"] = str(torch.backends.cudnn.version())
            info.setdefault("gpu", torch.cuda.get_device_name(0))
    return info


def library_path():
    """LD_LIBRARY_PATH for the executables: the CUDA libraries PyTorch's
    wheels bring (cuBLAS, cuDNN, the runtime), then the toolkit's."""
    folders = []
    for entry in sys.path:
        nvidia = os.path.join(entry, "nvidia")
        if os.path.isdir(nvidia):
            for package in sorted(os.listdir(nvidia)):
                lib = os.path.join(nvidia, package, "lib")
                if os.path.isdir(lib):
                    folders.append(lib)
    folders += ["/usr/local/cuda/lib64"]
    existing = os.environ.get("LD_LIBRARY_PATH")
    return ":".join(folders + ([existing] if existing else []))


# ---------------------------------------------------------------- Lethe


class NvmlPeak:
    """The most device memory NVML sees a process hold while it runs
    (polled; None where NVML is unavailable)."""

    def __init__(self, enabled):
        self.peak = None
        self.pid = None
        self.stop = threading.Event()
        self.thread = None
        if not enabled:
            return
        try:
            import pynvml

            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception:  # noqa: BLE001 - no NVML: the column says n/a
            return
        self.thread = threading.Thread(target=self.poll, daemon=True)

    def start(self, pid):
        self.pid = pid
        if self.thread:
            self.thread.start()

    def poll(self):
        while not self.stop.is_set():
            try:
                for process in self.nvml.nvmlDeviceGetComputeRunningProcesses(self.handle):
                    if process.pid == self.pid and process.usedGpuMemory:
                        self.peak = max(self.peak or 0, process.usedGpuMemory)
            except Exception:  # noqa: BLE001 - a failed poll is a missed sample
                pass
            self.stop.wait(0.02)

    def finish(self):
        self.stop.set()
        if self.thread and self.thread.is_alive():
            self.thread.join()
        return self.peak


def write_token_data(folder, inputs, vocabulary, seed):
    """--data for a model that reads token ids: every data and label input
    drawn uniformly from the vocabulary (the driver's own draw is below 10,
    which would crowd every update into ten rows of the embedding)."""
    import numpy as np

    types = {"i64": np.int64, "i32": np.int32}
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    for argument in inputs:
        if argument["dtype"] not in types:
            raise ValueError(f"input '{argument['name']}' is {argument['dtype']}, not token ids "
                             "(i64 or i32)")
        values = rng.integers(0, vocabulary, size=argument["shape"],
                              dtype=types[argument["dtype"]])
        np.save(os.path.join(folder, argument["name"].replace("/", "_") + ".npy"), values)
    return folder


def run_executable(path, arguments, timeout, env, nvml):
    """Runs a Lethe executable; returns its measurements or its failure."""
    try:
        process = subprocess.Popen([path] + arguments, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=env)
    except OSError as error:
        return {"status": "failed", "message": f"cannot start {path}: {error.strerror}"}
    monitor = NvmlPeak(nvml)
    monitor.start(process.pid)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        monitor.finish()
        return {"status": "failed", "message": f"timed out after {timeout:.0f} s"}
    process_peak = monitor.finish()
    if process.returncode != 0:
        lines = (err.strip() or out.strip() or f"exit {process.returncode}").splitlines()
        return {"status": "failed", "message": lines[-1]}
    steps = [(int(number), float(loss), float(ms) / 1e3, int(peak))
             for number, loss, ms, peak in STEP_LINE.findall(out)]
    if not steps:
        return {"status": "failed", "message": "printed no step lines"}
    return {"status": "ok", "steps": steps, "process_peak_bytes": process_peak,
            "final_loss": steps[-1][1], "peak_bytes": max(step[3] for step in steps)}


def timed(result, warmup):
    """`result` with the median step time after `warmup` steps (the last
    step's if there are no more)."""
    if result["status"] != "ok":
        return result
    times = [step[2] for step in result["steps"]]
    kept = times[warmup:] or times[-1:]
    result["step_seconds"] = statistics.median(kept)
    result["timed_steps"] = len(kept)
    return result


class LetheRunner:
    def __init__(self, args, bundle, folder, clock):
        self.args = args
        self.bundle = bundle
        self.folder = folder
        self.clock = clock
        self.env = dict(os.environ)
        if args.device == "cuda":
            self.env["LD_LIBRARY_PATH"] = library_path()
            if not args.tf32:
                self.env["NVIDIA_TF32_OVERRIDE"] = "0"
        self.data = {}

    def arguments(self, model, entry, row):
        arguments = ["--random-weights", "1", "--seed", "1"]
        vocabulary = suite.token_vocabulary(model, entry["size"])
        if vocabulary:
            key = (model, tuple(tuple(argument["shape"]) for argument in row["inputs"]))
            if key not in self.data:
                folder = os.path.join(self.folder, "data", f"{model}-{len(self.data)}")
                self.data[key] = write_token_data(folder, row["inputs"], vocabulary, 1)
            arguments += ["--data", self.data[key]]
        return arguments

    def run(self, model, entry, row, steps, extra=()):
        path = os.path.join(self.folder, "bin", row["exe"])
        try:
            arguments = self.arguments(model, entry, row)
        except (ValueError, OSError) as error:
            return {"status": "failed", "message": f"cannot write its data: {error}"}
        # Stopped 30 s past the deadline at the latest, so that the tables
        # still print inside the device tool's limit.
        timeout = min(self.args.timeout,
                      max(5.0, self.clock.seconds + 30 - self.clock.elapsed()))
        return run_executable(path, arguments + ["--steps", str(steps)] + list(extra), timeout,
                              self.env, self.args.device == "cuda")


def lethe_label(row):
    return "Lethe %d%%, %s" % (round(float(row["budget"]) * 100),
                               "recompute + offload" if row["offload"] else "recompute only")


def blocked(row, result, clock):
    """Fills `result` and says so when the plan cannot run: prepare has no
    executable for it, or the deadline has passed."""
    if row["status"] != "ok":
        result.update(status=row["status"], message=row.get("message", ""))
        return True
    if clock.expired():
        result.update(status="skipped", message="past the deadline")
        return True
    return False


def run_lethe(runner, models, results, clock):
    args = runner.args
    measured = {}  # rows whose plans are the same share one executable and one run
    for model in models:
        entry = runner.bundle["models"][model]
        for row in entry["plans"]:
            label = f"{model}: {lethe_label(row)}"
            result = {"label": lethe_label(row), "plan": row}
            results["lethe"].setdefault(model, []).append(result)
            if blocked(row, result, clock):
                continue
            if row["exe"] not in measured:
                measured[row["exe"]] = timed(runner.run(model, entry, row,
                                                        args.warmup + args.steps), args.warmup)
            result.update(measured[row["exe"]])
            if result["status"] == "ok":
                log(clock, f"{label}: {result['step_seconds'] * 1e3:.2f} ms/step, peak "
                    f"{mib(result['peak_bytes']):.0f} MiB")
            else:
                log(clock, f"{label}: FAILED: {result['message']}")


def steady_profile(long, short):
    """The profile of the steps a `long` run made after a `short` one's
    (two --profile documents of the same executable): each op's mean over
    those steps, so that the first step's one-time costs (loading cuBLAS
    and cuDNN, choosing algorithms) are left out."""
    steps = long["steps"] - short["steps"]
    profile = dict(long, steps=steps, step_seconds=(
        long["step_seconds"] * long["steps"] - short["step_seconds"] * short["steps"]) / steps)
    profile["ops"] = []
    for late, early in zip(long["ops"], short["ops"]):
        total = late["seconds"] * long["steps"] - early["seconds"] * short["steps"]
        profile["ops"].append(dict(late, seconds=max(0.0, total / steps),
                                   calls=late["calls"] - early["calls"]))
    return profile


def time_breakdown(profile, top=12):
    """Where a profiled step's time goes: its ops grouped by name (a
    recompute apart from the first computation), the copies' issue, the
    `top` groups that take the most time and the rest as one row, then the
    step's time outside every op (the driver's per-step work). A group's
    prediction is the manifest's, where each of its ops has one; none for
    copies, whose measured time is their issue only."""
    steps = max(profile["steps"], 1)
    groups = {}
    for op in profile["ops"]:
        if op["kind"] == "release":
            continue
        if op["kind"] in ("compute", "recompute"):
            label = op["op"] + (" (recompute)" if op["kind"] == "recompute" else "")
        else:
            label = op["kind"]
        group = groups.setdefault(label, {"label": label, "ops": 0, "calls_per_step": 0.0,
                                          "seconds": 0.0, "predicted_seconds": 0.0})
        group["ops"] += 1
        group["calls_per_step"] += op["calls"] / steps
        group["seconds"] += op["seconds"]
        predicted = op.get("predicted_seconds")
        if predicted is None or op["kind"] in ("offload", "prefetch") or \
                group["predicted_seconds"] is None:
            group["predicted_seconds"] = None
        else:
            group["predicted_seconds"] += predicted
    ordered = sorted(groups.values(), key=lambda group: -group["seconds"])
    rows = ordered[:top]
    rest = ordered[top:]
    if rest:
        predicted = [group["predicted_seconds"] for group in rest]
        rows.append({"label": f"{len(rest)} other kinds", "ops": sum(g["ops"] for g in rest),
                     "calls_per_step": sum(g["calls_per_step"] for g in rest),
                     "seconds": sum(g["seconds"] for g in rest),
                     "predicted_seconds": None if None in predicted else sum(predicted)})
    in_ops = sum(group["seconds"] for group in ordered)
    rows.append({"label": "outside the ops", "ops": 0, "calls_per_step": 0.0,
                 "seconds": max(0.0, profile["step_seconds"] - in_ops),
                 "predicted_seconds": None})
    return {"steps": profile["steps"], "step_seconds": profile["step_seconds"], "rows": rows}


def run_profiles(runner, models, results, out, clock):
    """Each model's 100% plan with --profile, for prepare --measured: run for
    one step and for 1 + --steps steps, and keep the difference."""
    for model in models:
        entry = runner.bundle["models"][model]
        rows = [row for row in entry["plans"] if row["status"] == "ok" and
                float(row["budget"]) == 1.0]
        if not rows:
            log(clock, f"{model}: no 100% plan to profile")
            continue
        documents = []
        for steps in (1, 1 + runner.args.steps):
            if clock.expired():
                break
            path = os.path.join(out, f"{model}-{steps}.json")
            result = runner.run(model, entry, rows[0], steps, ["--profile", path])
            if result["status"] != "ok":
                log(clock, f"{model}: profile FAILED: {result['message']}")
                break
            with open(path) as handle:
                documents.append(json.load(handle))
        if len(documents) < 2:
            if clock.expired():
                log(clock, f"{model}: profile skipped (past the deadline)")
            continue
        name = f"{model}-b{entry['batch']}.profile.json"
        steady = steady_profile(documents[1], documents[0])
        with open(os.path.join(out, name), "w") as handle:
            json.dump(steady, handle, indent=1)
        results["profiles"][model] = name
        results["breakdown"][model] = time_breakdown(steady)
        log(clock, f"{model}: wrote the profile {name}")


def run_lethe_largest(runner, models, results, clock):
    for model in models:
        entry = runner.bundle["models"][model]
        for mode, row in sorted(entry["largest"].items()):
            result = {"plan": row}
            results["lethe_largest"].setdefault(model, {})[mode] = result
            if blocked(row, result, clock):
                continue
            result.update(timed(runner.run(model, entry, row, 2), 1))
            what = f"{model}: Lethe's largest batch ({mode}), {row['batch']}"
            if result["status"] == "ok":
                log(clock, f"{what}: ran, {result['step_seconds'] * 1e3:.1f} ms/step, peak "
                    f"{mib(result['peak_bytes']):.0f} MiB")
            else:
                log(clock, f"{what}: FAILED: {result['message']}")


# ---------------------------------------------------------------- PyTorch


class TorchBench:
    def __init__(self, torch, device, args):
        self.torch = torch
        self.device = device
        self.args = args
        self.cuda = device == "cuda"
        if self.cuda:
            torch.backends.cuda.matmul.allow_tf32 = args.tf32
            torch.backends.cudnn.allow_tf32 = args.tf32
        import torch_models

        self.models = torch_models
        self.oom = getattr(torch.cuda, "OutOfMemoryError", RuntimeError)

    def setup(self, name, size):
        torch = self.torch
        torch.manual_seed(0)
        model = self.models.build(name, **size).to(self.device)
        model.train()
        optimizer = torch.optim.Adam(model.parameters(), lr=suite.LEARNING_RATE)
        return model, optimizer

    def steps(self, name, model, optimizer, batch, checkpoint, count):
        """`count` training steps at `batch`: their times and last loss."""
        torch = self.torch
        inputs = self.models.make_inputs(name, model.size, batch, self.device)
        times = []
        loss = None
        for _ in range(count):
            if self.cuda:
                start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
                start.record()
            else:
                begin = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            loss = model.loss(*inputs, checkpoint=checkpoint)
            loss.backward()
            optimizer.step()
            if self.cuda:
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
            else:
                times.append(time.perf_counter() - begin)
        return times, float(loss)

    def measure(self, name, model, optimizer, batch, checkpoint):
        torch = self.torch
        self.steps(name, model, optimizer, batch, checkpoint, self.args.warmup)
        if self.cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        times, loss = self.steps(name, model, optimizer, batch, checkpoint, self.args.steps)
        return {"status": "ok", "step_seconds": statistics.median(times),
                "timed_steps": len(times), "final_loss": loss,
                "peak_bytes": torch.cuda.max_memory_allocated() if self.cuda else None}

    def attempt(self, function, *arguments):
        """function(*arguments), or {"status": "oom"} when the device runs
        out of memory (the memory freed again)."""
        try:
            return function(*arguments)
        except self.oom:
            pass
        except RuntimeError as error:
            if "out of memory" not in str(error):
                raise
        self.release()
        return {"status": "oom", "message": "out of device memory"}

    def release(self):
        gc.collect()
        if self.cuda:
            self.torch.cuda.empty_cache()

    def fits(self, name, model, optimizer, batch, checkpoint):
        def train():
            self.steps(name, model, optimizer, batch, checkpoint, 2)
            return {"status": "ok"}

        result = self.attempt(train)
        for parameter in model.parameters():
            parameter.grad = None
        self.release()
        return result["status"] == "ok"

    def largest(self, name, model, optimizer, batch, checkpoint, clock):
        """The largest batch that trains two steps: doubling from `batch`
        (or halving, if it does not fit), then bisection, at most
        --search-probes probes and --max-batch-factor times `batch`."""
        cap = self.args.max_batch_factor * batch
        probes = 0
        good, bad = (batch, None) if self.fits(name, model, optimizer, batch, checkpoint) \
            else (0, batch)
        while probes < self.args.search_probes and not clock.expired():
            if bad is None:
                if good >= cap:
                    break
                trial = min(cap, 2 * good)
            elif good == 0:
                trial = bad // 2
                if trial == 0:
                    break
            else:
                if bad - good <= max(1, good // 32):
                    break
                trial = (good + bad) // 2
            probes += 1
            if self.fits(name, model, optimizer, trial, checkpoint):
                good = trial
            else:
                bad = trial
        return {"status": "ok", "batch": good, "capped": bad is None and good >= cap,
                "bound": bad, "exact": bad is not None and bad - good <= max(1, good // 32)}


def run_pytorch(bench, bundle, models, results, clock, largest):
    """PyTorch eager and checkpoint per block: timed at the benchmark batch,
    or, with `largest`, their largest batch."""
    for model in models:
        entry = bundle["models"][model]
        setup = bench.attempt(bench.setup, model, entry["size"])
        if isinstance(setup, dict):
            log(clock, f"{model}: PyTorch cannot even hold the model: {setup['message']}")
            continue
        network, optimizer = setup
        for checkpoint in (False, True):
            label = "PyTorch checkpoint per block" if checkpoint else "PyTorch eager"
            if clock.expired():
                result = {"status": "skipped", "message": "past the deadline"}
            elif largest:
                result = bench.largest(model, network, optimizer, entry["batch"], checkpoint,
                                       clock)
            else:
                result = bench.attempt(bench.measure, model, network, optimizer,
                                       entry["batch"], checkpoint)
            if largest:
                results["pytorch_largest"].setdefault(model, {})[label] = result
                log(clock, f"{model}: {label}: largest batch {format_largest(result)}")
                continue
            result["label"] = label
            results["pytorch"].setdefault(model, []).append(result)
            if result["status"] == "ok":
                peak = result["peak_bytes"]
                log(clock, f"{model}: {label}: {result['step_seconds'] * 1e3:.2f} ms/step" +
                    (f", peak {mib(peak):.0f} MiB" if peak is not None else ""))
            else:
                log(clock, f"{model}: {label}: {result['status']}: {result['message']}")
        del network, optimizer, setup
        bench.release()


# ---------------------------------------------------------------- tables


def format_ms(seconds):
    return "%.1f" % (seconds * 1e3) if seconds >= 0.01 else "%.3g" % (seconds * 1e3)


def format_largest(result):
    if result is None:
        return "-"
    if result.get("status") != "ok":
        return f"{result.get('status')}" + (f" ({result['message']})" if result.get("message")
                                            else "")
    if "plan" in result:  # a Lethe executable
        plan = result["plan"]
        if plan.get("capped"):
            return "≥ %d" % plan["batch"]
        bound = plan.get("bound")
        if bound and bound - plan["batch"] > max(1, plan["batch"] // 32):
            return "%d (< %d)" % (plan["batch"], bound)
        return "%d" % plan["batch"]
    if result["capped"]:
        return "≥ %d" % result["batch"]
    if result["batch"] == 0:
        return "none fits"
    return "%d" % result["batch"] if result["exact"] else \
        "%d (< %d)" % (result["batch"], result["bound"])


def model_table(model, entry, results, lines, notes):
    eager = next((row for row in results["pytorch"].get(model, [])
                  if row["label"] == "PyTorch eager" and row["status"] == "ok"), None)
    lines.append(f"#### {suite.describe(model, entry['size'])}, batch {entry['batch']}")
    lines.append("")
    lines.append("| variant | budget | plan | step ms | vs eager | peak MiB | vs eager | "
                 "process MiB | predicted ms | measured / predicted | recomputes | offloads |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = results["pytorch"].get(model, []) + results["lethe"].get(model, [])
    for row in rows:
        plan = row.get("plan")
        if plan is None:
            budget = "-"
        elif plan.get("budget_bytes"):
            budget = "%s (%.0f MiB)" % (plan["budget"], mib(plan["budget_bytes"]))
        else:
            budget = plan["budget"]
        if row["status"] != "ok":
            lines.append(f"| {row['label']} | {budget} | | {row['status']} | | | | | | | | |")
            if plan and plan.get("smallest_budget_bytes"):
                notes.append(f"{model}, {row['label']}: no plan within the budget; the smallest "
                             f"budget the planner meets is "
                             f"{mib(plan['smallest_budget_bytes']):.1f} MiB")
            else:
                notes.append(f"{model}, {row['label']}: {row.get('message') or row['status']}")
            continue
        step = row["step_seconds"]
        peak = row.get("peak_bytes")
        cells = [row["label"], budget, plan["strategy"] if plan else "", format_ms(step)]
        cells.append("%.2fx" % (step / eager["step_seconds"]) if eager else "")
        cells.append("%.0f" % mib(peak) if peak is not None else "n/a")
        cells.append("%.2fx" % (peak / eager["peak_bytes"])
                     if eager and peak is not None and eager["peak_bytes"] else "")
        process = row.get("process_peak_bytes")
        cells.append("%.0f" % mib(process) if process else ("n/a" if plan else ""))
        if plan:
            predicted = plan["predicted_seconds"]
            cells += [format_ms(predicted), "%.2f" % (step / predicted) if predicted else "",
                      str(plan["recomputes"]), str(plan["offloads"])]
        else:
            cells += ["", "", "", ""]
        lines.append("| " + " | ".join(cells) + " |")
        if plan and plan.get("fallback_from"):
            notes.append(f"{model}, {row['label']}: planned by {plan['strategy']}; prepare's "
                         f"--strategy found none: {plan['fallback_from']}")
    lines.append("")


def breakdown_table(model, breakdown, lines):
    lines.append(f"#### Where {model}'s 100% plan spends its step (--profile, "
                 f"{breakdown['steps']} steps, each op waited for)")
    lines.append("")
    lines.append("| op | ops | calls / step | ms / step | share | predicted ms | "
                 "measured / predicted |")
    lines.append("|---|---|---|---|---|---|---|")
    step = breakdown["step_seconds"]
    for row in breakdown["rows"]:
        predicted = row["predicted_seconds"]
        cells = [row["label"], str(row["ops"]) if row["ops"] else "",
                 "%g" % round(row["calls_per_step"], 2) if row["ops"] else "",
                 format_ms(row["seconds"]),
                 "%.1f%%" % (100 * row["seconds"] / step) if step else "",
                 format_ms(predicted) if predicted is not None else "",
                 "%.2f" % (row["seconds"] / predicted) if predicted else ""]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")


def criteria(bundle, models, results):
    """The issue's targets, checked on the numbers above (nothing when a
    number is missing)."""
    lines = []
    for model in models:
        torch_rows = {row["label"]: row for row in results["pytorch"].get(model, [])
                      if row["status"] == "ok"}
        lethe_rows = [row for row in results["lethe"].get(model, []) if row["status"] == "ok"]
        eager = torch_rows.get("PyTorch eager")
        checkpoint = torch_rows.get("PyTorch checkpoint per block")
        full = [row for row in lethe_rows if float(row["plan"]["budget"]) == 1.0]
        if eager and full:
            best = min(row["step_seconds"] for row in full) / eager["step_seconds"]
            lines.append(f"- {model}: 100% budget {best:.2f}x eager's step time "
                         f"({'within' if best <= 1.2 else 'NOT within'} 1.2x)")
        half = [row for row in lethe_rows if float(row["plan"]["budget"]) == 0.5]
        if checkpoint and half and checkpoint.get("peak_bytes") is not None:
            fitting = [row for row in half if row["peak_bytes"] <= checkpoint["peak_bytes"]]
            if fitting:
                best = min(fitting, key=lambda row: row["step_seconds"])
                verdict = "beats" if best["step_seconds"] < checkpoint["step_seconds"] else \
                    "does NOT beat"
                lines.append(f"- {model}: 50% budget ({best['label']}) {verdict} checkpoint per "
                             f"block: {format_ms(best['step_seconds'])} against "
                             f"{format_ms(checkpoint['step_seconds'])} ms, peak "
                             f"{mib(best['peak_bytes']):.0f} against "
                             f"{mib(checkpoint['peak_bytes']):.0f} MiB")
            else:
                lines.append(f"- {model}: no 50% plan ran at or below checkpoint per block's "
                             f"peak ({mib(checkpoint['peak_bytes']):.0f} MiB)")
        ratios = [row["step_seconds"] / row["plan"]["predicted_seconds"] for row in lethe_rows
                  if row["plan"]["predicted_seconds"]]
        if ratios:
            worst = max(ratios, key=lambda ratio: abs(ratio - 1))
            source = bundle["models"][model].get("prediction", "roofline")
            if source == "roofline":
                source += " (plan again with prepare --measured)"
            lines.append(f"- {model}: measured / predicted step time from {min(ratios):.2f} to "
                         f"{max(ratios):.2f} (worst {abs(worst - 1) * 100:.0f}% off; "
                         f"{'within' if abs(worst - 1) <= 0.1 else 'NOT within'} 10%), "
                         f"predicted from: {source}")
    return lines


def report(args, bundle, env, models, results):
    lines = []
    lines.append(f"### {env.get('gpu', 'unknown device')}, {env['date']}")
    lines.append("")
    versions = [f"device {env.get('gpu', 'unknown')}" +
                (f" ({env['gpu_memory']})" if env.get("gpu_memory") else ""),
                f"driver {env.get('driver', 'n/a')}" +
                (f" (CUDA {env['driver_cuda']})" if env.get("driver_cuda") else ""),
                f"PyTorch {env.get('pytorch', 'not installed')}" +
                (f" (CUDA {env['pytorch_cuda']}" if env.get("pytorch_cuda") else "") +
                (f", cuDNN {env['cudnn']})" if env.get("cudnn") else
                 (")" if env.get("pytorch_cuda") else "")),
                f"Python {env['python']}",
                f"Lethe {bundle['lethe_commit']} (lethec --target {bundle['target']}, profile "
                f"{bundle['profile']}, planned {bundle['created'][:10]}"
                + (", from measured op times" if bundle.get("measured") else "") + ")"]
    lines.append("- " + "; ".join(versions))
    lines.append(f"- float32, TF32 {'on' if args.tf32 else 'off'}, Adam (lr "
                 f"{suite.LEARNING_RATE}); step time: median of {args.steps} steps after "
                 f"{args.warmup} warm-up steps; Lethe budgets are fractions of its unplanned "
                 "peak")
    lines.append("")
    notes = []
    for model in models:
        model_table(model, bundle["models"][model], results, lines, notes)
    lines.append("#### Largest batch that fits in the device's memory")
    lines.append("")
    lines.append("| model | benchmark batch | PyTorch eager | PyTorch checkpoint per block | "
                 "Lethe, recompute only | Lethe, recompute + offload |")
    lines.append("|---|---|---|---|---|---|")
    for model in models:
        torch_largest = results["pytorch_largest"].get(model, {})
        lethe_largest = results["lethe_largest"].get(model, {})
        cells = [model, str(bundle["models"][model]["batch"]),
                 format_largest(torch_largest.get("PyTorch eager")),
                 format_largest(torch_largest.get("PyTorch checkpoint per block")),
                 format_largest(lethe_largest.get("off")), format_largest(lethe_largest.get("on"))]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for model in models:
        breakdown = results["breakdown"].get(model)
        if breakdown:
            breakdown_table(model, breakdown, lines)
    targets = criteria(bundle, models, results)
    if targets:
        lines.append("#### Against the issue's targets")
        lines.append("")
        lines += targets
        lines.append("")
    if notes:
        lines.append("Notes:")
        lines.append("")
        lines += [f"- {note}" for note in notes]
        lines.append("")
    return "\n".join(lines)


def bundle_identity(bundle):
    """What results.json records of the bundle: all but its models."""
    return {key: value for key, value in bundle.items() if key != "models"}


def read_merged_results(path, bundle):
    """The results of the results.json at `path` (run.py --out), which must
    have been measured on `bundle`; exits with one line otherwise."""
    try:
        with open(path) as handle:
            earlier = json.load(handle)
        measured, earlier_bundle = earlier["results"], earlier["bundle"]
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"run.py: error: cannot read the results to merge from {path} ({error})")
    if earlier_bundle != bundle_identity(bundle):
        sys.exit(f"run.py: error: {path} was measured on another bundle; merge only the "
                 "results of the same bench/gpu/prepare folder")
    return measured


def merge_results(results, measured, path, clock):
    """Fills, model by model, what this run left empty or skipped (but the
    profiles) from `measured`, the results read from `path`."""
    for part, models in measured.items():
        # Profiles name files of that run's own folder: not carried over.
        if part not in results or part == "profiles":
            continue
        for model, rows in models.items():
            if not skipped_everywhere(results[part].get(model)):
                continue
            results[part][model] = rows
            log(clock, f"{part}, {model}: from {path}")


def skipped_everywhere(rows):
    """Whether a model's rows of a part hold no measurement (none at all, or
    only rows skipped past the deadline)."""
    if not rows:
        return True
    values = rows if isinstance(rows, list) else list(rows.values())
    return all(isinstance(row, dict) and row.get("status") == "skipped" for row in values)


# ---------------------------------------------------------------- main


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="Run the GPU benchmark (bench/gpu/README.md).")
    parser.add_argument("--bundle", default=os.path.join(HERE, "..", "..", ".gpu-bench"),
                        help="the folder bench/gpu/prepare wrote (default .gpu-bench)")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--models", help="a subset of the bundle's models, comma-separated")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help="what to run, comma-separated: " + ", ".join(PARTS))
    parser.add_argument("--steps", type=int, default=5, help="timed steps (default 5)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up steps (default 2)")
    parser.add_argument("--timeout", type=float, default=180,
                        help="seconds one Lethe executable may run (default 180)")
    parser.add_argument("--deadline", type=float, default=480,
                        help="seconds after which nothing new starts, and by which a Lethe "
                        "executable started before is stopped (default 480)")
    parser.add_argument("--search-probes", type=int, default=6,
                        help="PyTorch's largest-batch search: probes per model and variant")
    parser.add_argument("--max-batch-factor", type=int, default=4,
                        help="PyTorch's largest-batch search stops at this many benchmark "
                        "batches")
    parser.add_argument("--tf32", action="store_true", help="allow TF32 in both")
    parser.add_argument("--out", help="write results.md, results.json and profiles.tar.gz here")
    parser.add_argument("--merge", metavar="RESULTS.json",
                        help="an earlier run's results.json (--out) whose parts fill the "
                        "tables where this run measured nothing: PyTorch in one process, say, "
                        "and Lethe in the next, each with its own deadline")
    args = parser.parse_args(argv)
    args.parts = [part for part in args.parts.split(",") if part]
    for part in args.parts:
        if part not in PARTS:
            parser.error(f"unknown part '{part}' (the parts are {', '.join(PARTS)})")
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be >= 1 and --warmup >= 0")
    return args


def load_bundle(path):
    manifest = os.path.join(path, "manifest.json")
    try:
        with open(manifest) as handle:
            bundle = json.load(handle)
    except (OSError, ValueError) as error:
        sys.exit(f"run.py: error: cannot read {manifest} ({error}); run bench/gpu/prepare "
                 "first and carry its folder")
    if bundle.get("format") != "lethe-gpu-bench" or bundle.get("version") != 1:
        sys.exit(f"run.py: error: {manifest} is not a bench/gpu/prepare manifest of version 1")
    return bundle


def main(argv):
    args = parse_arguments(argv)
    clock = Clock(args.deadline)
    bundle = load_bundle(args.bundle)
    # Checked before measuring anything, so that a wrong file costs no run.
    merged = read_merged_results(args.merge, bundle) if args.merge else None
    models = args.models.split(",") if args.models else list(bundle["models"])
    for model in models:
        if model not in bundle["models"]:
            sys.exit(f"run.py: error: the bundle has no model '{model}' (it has "
                     f"{', '.join(bundle['models'])})")
    if args.device == "cuda" and bundle["target"] != "cuda":
        log(clock, f"warning: the bundle's executables are for --target {bundle['target']}")
    if args.device == "cuda":
        gpu = command_output(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
        if gpu and bundle["profile"].lower() not in gpu.lower().replace(" ", ""):
            log(clock, f"warning: the plans are for the device profile {bundle['profile']}, "
                f"this is {gpu.strip()}: predicted times and the largest batches are that "
                "profile's")
    torch, missing = import_torch()
    results = {"lethe": {}, "lethe_largest": {}, "pytorch": {}, "pytorch_largest": {},
               "profiles": {}, "breakdown": {}}
    with tempfile.TemporaryDirectory(prefix="lethe-gpu-bench-") as folder:
        suite.extract_archive(os.path.join(args.bundle, "lethe.tar.xz"),
                              os.path.join(folder, "bin"))
        out = args.out or os.path.join(folder, "out")
        profiles = os.path.join(folder, "profiles")
        os.makedirs(out, exist_ok=True)
        os.makedirs(profiles)
        runner = LetheRunner(args, bundle, folder, clock)
        # Lethe first, before PyTorch holds a CUDA context and cached memory.
        if "lethe" in args.parts:
            run_lethe(runner, models, results, clock)
        if "profiles" in args.parts:
            run_profiles(runner, models, results, profiles, clock)
        if "lethe-largest" in args.parts:
            run_lethe_largest(runner, models, results, clock)
        if {"pytorch", "pytorch-largest"} & set(args.parts):
            if torch is None:
                log(clock, f"PyTorch: skipped ({missing})")
            elif args.device == "cuda" and not torch.cuda.is_available():
                log(clock, "PyTorch: skipped (torch.cuda.is_available() is False)")
            else:
                bench = TorchBench(torch, args.device, args)
                if "pytorch" in args.parts:
                    run_pytorch(bench, bundle, models, results, clock, largest=False)
                if "pytorch-largest" in args.parts:
                    if args.device == "cuda":
                        run_pytorch(bench, bundle, models, results, clock, largest=True)
                    else:
                        log(clock, "PyTorch's largest batch: skipped (needs a CUDA device to "
                            "run out of memory)")
        if args.merge:
            merge_results(results, merged, args.merge, clock)
        env = environment(args.device, torch)
        text = report(args, bundle, env, models, results)
        print()
        print(text)
        if args.out:
            with open(os.path.join(out, "results.md"), "w") as handle:
                handle.write(text)
            with open(os.path.join(out, "results.json"), "w") as handle:
                json.dump({"environment": env, "bundle": bundle_identity(bundle),
                           "results": results}, handle, indent=1, default=str)
            if results["profiles"]:
                with tarfile.open(os.path.join(out, "profiles.tar.gz"), "w:gz") as tar:
                    for name in sorted(results["profiles"].values()):
                        tar.add(os.path.join(profiles, name), arcname=name)
            log(clock, f"wrote {args.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
