"""schedc.plan: the planner of `schedc plan` from Python, on the
descriptions test/tools uses, and its errors."""
import json
import unittest
from pathlib import Path

import schedc

INPUTS = Path(__file__).resolve().parents[2] / "tools" / "Inputs"
MODEL = str(INPUTS / "plan-model.json")
CLUSTER = str(INPUTS / "plan-cluster.json")


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
        with self.assertRaisesRegex(ValueError, "precision must be bf16 or "
                                    "fp8, got 'fp4'"):
            schedc.plan(MODEL, CLUSTER, devices=8, precision="fp4")
        with self.assertRaisesRegex(ValueError, "layers: missing"):
            schedc.plan({"name": "x"}, CLUSTER, devices=8)
        with self.assertRaisesRegex(TypeError, "cluster must be a preset "
                                    "name, a path or a dict, not int"):
            schedc.plan(MODEL, 3, devices=8)


if __name__ == "__main__":
    unittest.main(verbosity=2)
