"""Planned executables against the reference interpreter, on every test model
and every strategy.

    models_test.py --bin BUILD/bin --models DIR [--strategies a,b,...]

For the MLP, the CNN, the transformer block and the U-Net (the tiny f64
models that ctest's write-test-models fixture writes into DIR) as Adam
training steps, and for every strategy: lethec compiles the step planned for
a budget (the whole unplanned peak for `none`, 60% of it for the others, or
the smallest budget the strategy meets when that is more), the executable
trains 5 steps on random data, and lethe-run trains the same planned IR
(lethec --save-temps keeps it) on the same data. The losses must print the
same, the trained parameters and optimizer state must be the same bytes,
and every step's measured peak device bytes must equal the arena's size and
be within the budget. Prints one line per model and strategy; exits 1 on the
first failure.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

MODELS = [
    ("mlp", "logits", "softmax_cross_entropy"),
    ("cnn", "logits", "softmax_cross_entropy"),
    ("transformer", "y", "mse"),
    ("unet", "y", "mse"),
]
STRATEGIES = ["none", "sqrt", "chain", "chain-offload", "milp", "greedy",
              "auto"]
STEPS = 5
SEED = 7


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def run(command, check=True):
    result = subprocess.run(command, capture_output=True, text=True)
    if check and result.returncode != 0:
        fail(" ".join(command) + "\n" + result.stdout + result.stderr)
    return result


def compile_step(lethec, model, output, loss, strategy, name):
    """Runs lethec, at the smallest budget the strategy meets if 0.6 is too
    small; returns the budget it compiled for."""
    budget = "1.0" if strategy == "none" else "0.6"
    command = [lethec, model, "--loss", "output=%s kind=%s" % (output, loss),
               "--optimizer", "kind=adam lr=0.01", "--budget", budget,
               "--strategy", strategy, "--time-limit", "1", "--save-temps",
               "-o", name]
    result = run(command, check=False)
    if result.returncode != 0:
        match = re.search(r"smallest budget it can meet is .*?\((\d+) bytes\)",
                          result.stderr)
        if not match:
            fail(" ".join(command) + "\n" + result.stderr)
        budget = match.group(1)
        command[command.index("--budget") + 1] = budget
        run(command)
    return budget


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    args = parser.parse_args(argv[1:])
    lethec = os.path.join(args.bin, "lethec")
    lethe_run = os.path.join(args.bin, "lethe-run")
    with tempfile.TemporaryDirectory() as work:
        for model, output, loss in MODELS:
            for strategy in args.strategies.split(","):
                name = os.path.join(work, "%s-%s" % (model, strategy))
                budget = compile_step(lethec,
                                      os.path.join(args.models,
                                                   model + ".onnx"),
                                      output, loss, strategy, name)
                exe = run([name, "--steps", str(STEPS), "--seed", str(SEED),
                           "--save-weights", name + ".exe.weights"]).stdout
                ref = run([lethe_run, name + ".planned.mlir", "--steps",
                           str(STEPS), "--random-inputs", str(SEED),
                           "--save-weights", name + ".run.weights"]).stdout
                exe_losses = re.findall(r"^step \d+  loss (\S+)", exe, re.M)
                ref_losses = re.findall(r"^step \d+: loss (\S+)", ref, re.M)
                where = "%s/%s" % (model, strategy)
                if len(exe_losses) != STEPS or exe_losses != ref_losses:
                    fail("%s: losses %s, lethe-run's %s" %
                         (where, exe_losses, ref_losses))
                with open(name + ".exe.weights", "rb") as handle:
                    exe_weights = handle.read()
                with open(name + ".run.weights", "rb") as handle:
                    ref_weights = handle.read()
                if exe_weights != ref_weights:
                    fail("%s: the trained weights differ from lethe-run's" %
                         where)
                with open(name + ".manifest.json") as handle:
                    manifest = json.load(handle)
                arena = manifest["arena_bytes"]
                budget_bytes = manifest["plan"]["budget_bytes"]
                peaks = [int(p) for p in
                         re.findall(r"peak device (\d+) bytes", exe)]
                if not peaks or any(p != arena for p in peaks):
                    fail("%s: measured peaks %s, arena %d" %
                         (where, peaks, arena))
                if arena > budget_bytes:
                    fail("%s: arena %d over the budget %d" %
                         (where, arena, budget_bytes))
                print("%-12s %-14s budget %-6s %8d bytes  arena %8d  "
                      "%d steps bit-identical, final loss %s" %
                      (model, strategy, budget, budget_bytes, arena, STEPS,
                       exe_losses[-1]))
    print("all agree")


if __name__ == "__main__":
    main(sys.argv)
