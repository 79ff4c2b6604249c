"""lethe-mem on every test model, unplanned and planned, in every form.

    models_test.py --bin BUILD/bin --models DIR

For the MLP, the CNN, the transformer block and the U-Net (the tiny f64
models that ctest's write-test-models fixture writes into DIR), as Adam
training steps: the unplanned step and the step planned for 80% of its peak
(greedy, materialized, with its arena) each go through the five forms. The
JSON must agree with --lethe-print-memory-profile (unplanned) or with the
plan's and the arena's attributes (planned), the Chrome trace must follow
the Trace Event Format, and the HTML page must render in headless Chromium.
Prints one line per model and form group; exits 1 on the first failure.
"""

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

MODELS = [
    ("mlp", "logits", "softmax_cross_entropy"),
    ("cnn", "logits", "softmax_cross_entropy"),
    ("transformer", "y", "mse"),
    ("unet", "y", "mse"),
]


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        print("FAILED: " + " ".join(command))
        print(result.stdout + result.stderr)
        sys.exit(1)
    return result


def check_forms(tools, step, work, name, agree):
    """Every form of lethe-mem on `step`; `agree` is the check_agree mode
    and file."""
    mem = os.path.join(tools, "lethe-mem")
    summary = run([mem, step]).stdout
    if "peak:" not in summary or "arena:" not in summary:
        print(f"FAILED: {name}: the summary lacks its peak or arena line")
        sys.exit(1)
    table = run([mem, step, "--format", "table"]).stdout
    if len(table.splitlines()) < 3:
        print(f"FAILED: {name}: the table has no rows")
        sys.exit(1)
    timeline = os.path.join(work, name + ".json")
    run([mem, step, "--format", "json", "-o", timeline])
    run([sys.executable, os.path.join(HERE, "check_agree.py"), timeline] +
        agree)
    trace = os.path.join(work, name + ".trace.json")
    run([mem, step, "--format", "chrome", "-o", trace])
    run([sys.executable, os.path.join(HERE, "check_chrome_trace.py"), trace])
    page = os.path.join(work, name + ".html")
    run([mem, step, "--format", "html", "--measured", timeline, "-o", page])
    run([sys.executable, os.path.join(HERE, "render_html.py"), page,
         "--expect-measured"])
    print(f"{name}: summary, table, json, chrome and html agree and render")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--models", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        for model, output, loss in MODELS:
            imported = run([os.path.join(args.bin, "lethe-translate"),
                            "--import-onnx",
                            os.path.join(args.models, model + ".onnx")]).stdout
            step = os.path.join(work, model + ".mlir")
            run([os.path.join(args.bin, "lethe-opt"),
                 f"--lethe-add-loss=output={output} kind={loss}",
                 "--lethe-autodiff", "--lethe-add-optimizer=kind=adam lr=0.01",
                 "-o", step], input=imported)
            profile = run([os.path.join(args.bin, "lethe-opt"), step,
                           "--lethe-print-memory-profile", "-o",
                           os.devnull]).stderr
            profile_path = os.path.join(work, model + ".profile.txt")
            with open(profile_path, "w") as handle:
                handle.write(profile)
            check_forms(args.bin, step, work, model + "-unplanned",
                        ["--profile", profile_path])
            planned = os.path.join(work, model + "-planned.mlir")
            run([os.path.join(args.bin, "lethe-opt"), step,
                 "--lethe-plan-memory=budget=0.8 strategy=greedy",
                 "--lethe-materialize-plan", "--lethe-assign-arena", "-o",
                 planned])
            check_forms(args.bin, planned, work, model + "-planned",
                        ["--plan", planned])


if __name__ == "__main__":
    main()
