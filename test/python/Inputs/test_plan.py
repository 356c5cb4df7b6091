"""schedc.plan: the planner of `schedc plan` from Python, on the
descriptions test/tools uses, and its errors."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import schedc

INPUTS = Path(__file__).resolve().parents[2] / "tools" / "Inputs"
MODEL = str(INPUTS / "plan-model.json")
CLUSTER = str(INPUTS / "plan-cluster.json")
# The CLI beside the module (lit puts the build's bin/ on PATH).
SCHEDC = shutil.which("schedc") or os.environ.get("SCHEDC", "schedc")


class PlanTest(unittest.TestCase):
    def test_small_model_needs_no_pipeline(self) -> None:
        # As test/tools/schedc-plan.test: the model fits one device, so the
        # recommendation on 8 devices has pp = 1 and is proved.
        plan = schedc.plan(MODEL, CLUSTER, devices=8, top=3)
        self.assertEqual(len(plan.ranked), 3)
        best = plan.recommended
        self.assertIsNotNone(best)
        self.assertEqual((best.pp, best.strategy), (1, "no-pp"))
        self.assertEqual(best.dp * best.tp * best.pp * best.cp, 8)
        self.assertEqual(best.verdict, "verified")
        self.assertLessEqual(best.peak_memory, best.memory_limit)
        self.assertTrue(plan.reason.startswith("no PP: "), plan.reason)
        self.assertGreater(plan.best_with_pp.pp, 1)
        self.assertGreater(plan.considered, 0)
        # Best first (ties may differ in the last bits).
        steps = [c.step_time for c in plan.ranked]
        self.assertAlmostEqual(steps[0], min(steps), places=9)

    def test_descriptions_as_dicts_and_only_one_strategy(self) -> None:
        model = json.loads(Path(MODEL).read_text())
        cluster = json.loads(Path(CLUSTER).read_text())
        plan = schedc.plan(model, cluster, devices=8, top=2, strategy="1f1b")
        self.assertEqual(len(plan.ranked), 2)
        self.assertTrue(all(c.strategy == "1f1b" and c.pp > 1
                            for c in plan.ranked), plan.ranked)

    def test_bad_requests_raise_with_the_reason(self) -> None:
        with self.assertRaisesRegex(ValueError, "unknown model 'nope' "
                                    "\\(presets: llama3-8b"):
            schedc.plan("nope", CLUSTER, devices=8)
        with self.assertRaisesRegex(ValueError, "devices must be in "
                                    "\\[1, 2\\^24\\], got 0"):
            schedc.plan(MODEL, CLUSTER, devices=0)
        with self.assertRaisesRegex(ValueError, "precision must be bf16, "
                                    "fp8 or fp4, got 'fp16'"):
            schedc.plan(MODEL, CLUSTER, devices=8, precision="fp16")
        with self.assertRaisesRegex(ValueError, "has no fp4 peak"):
            schedc.plan(MODEL, CLUSTER, devices=8, precision="fp4")
        with self.assertRaisesRegex(ValueError, "layers: missing"):
            schedc.plan({"name": "x"}, CLUSTER, devices=8)
        with self.assertRaisesRegex(TypeError, "cluster must be a preset "
                                    "name, a path or a dict, not int"):
            schedc.plan(MODEL, 3, devices=8)

    def test_parity_with_the_cli(self) -> None:
        # The flags of `schedc plan` (issue 30): one layout with its ZeRO
        # stage, recomputation and microbatch size fixed, on a stack, and
        # the recommendation written; the same request on the CLI gives the
        # same candidate and the same runtime plan.
        with tempfile.TemporaryDirectory() as out:
            prefix = str(Path(out) / "py")
            plan = schedc.plan(MODEL, CLUSTER, devices=8, top=1,
                               layout="dp=4,pp=2", strategy="1f1b", zero=1,
                               recompute="full", microbatch_size=2,
                               stack="megatron-core", write_plan=prefix,
                               emit="mlir,json,svg,torch-csv")
            best = plan.recommended
            self.assertEqual((best.dp, best.pp, best.zero, best.recompute,
                              best.microbatch_size, best.strategy),
                             (4, 2, 1, "full", 2, "1f1b"))
            self.assertEqual(plan.written, [prefix + suffix for suffix in
                                            (".mlir", ".json", ".svg",
                                             ".csv")])
            self.assertEqual(plan.refused, [])
            cli = str(Path(out) / "cli")
            report = subprocess.run(
                [SCHEDC, "plan", "--model", MODEL, "--cluster", CLUSTER,
                 "--devices", "8", "--top", "1", "--layout", "dp=4,pp=2",
                 "--strategy", "1f1b", "--zero", "1", "--recompute", "full",
                 "--microbatch-size", "2", "--stack", "megatron-core",
                 "--json", "--write-plan", cli, "--emit", "json"],
                check=True, capture_output=True, text=True)
            step = json.loads(report.stdout)["recommended"]["step_time_s"]
            self.assertAlmostEqual(best.step_time, step, places=12)
            self.assertEqual(json.loads(Path(prefix + ".json").read_text()),
                             json.loads(Path(cli + ".json").read_text()))

    def test_nvfp4_and_sliding_window_presets(self) -> None:
        # NVFP4 on a Blackwell preset is faster than FP8 for the same
        # layout; GPT-OSS's windowed layers plan like any model.
        steps = {}
        for precision in ("fp8", "fp4"):
            plan = schedc.plan("llama3-70b", "gb200-nvl72", devices=64,
                               global_batch=256, seq_len=8192, top=1,
                               layout="dp=8,tp=2,pp=4,vpp=5",
                               strategy="interleaved-1f1b", zero=1,
                               recompute="none", microbatch_size=1,
                               precision=precision)
            steps[precision] = plan.recommended.step_time
        self.assertLess(steps["fp4"], steps["fp8"])
        oss = schedc.plan("gpt-oss-120b", "h100-ib", devices=64,
                          global_batch=512, seq_len=4096, top=1)
        self.assertIsNotNone(oss.recommended)
        self.assertEqual(oss.recommended.cp, 1)

    def test_parity_errors(self) -> None:
        with self.assertRaisesRegex(ValueError, "zero must be 0, 1, 2 or 3, "
                                    "got 5"):
            schedc.plan(MODEL, CLUSTER, devices=8, zero=5)
        with self.assertRaisesRegex(ValueError, "--layout: "):
            schedc.plan(MODEL, CLUSTER, devices=8, layout="dp=x")
        with self.assertRaisesRegex(ValueError, "emit: unknown form 'pdf'"):
            schedc.plan(MODEL, CLUSTER, devices=8, top=1, write_plan="/tmp/x",
                        emit="pdf")
        with self.assertRaisesRegex(ValueError, "stack megatron-core does "
                                    "not run dualpipe"):
            schedc.plan(MODEL, CLUSTER, devices=8, stack="megatron-core",
                        strategy="dualpipe")


if __name__ == "__main__":
    unittest.main(verbosity=2)
