"""schedc.generate and schedc.simulate, and what they refuse."""
import time
import unittest

import schedc


class GenerateTest(unittest.TestCase):
    def test_one_f_one_b_is_verified_with_its_metrics(self) -> None:
        schedule = schedc.generate("1f1b", pp=4, microbatches=8)
        self.assertEqual((schedule.num_ranks, schedule.num_stages,
                          schedule.num_microbatches), (4, 4, 8))
        report = schedc.verify(schedule)
        self.assertEqual(report.verdict, "verified")
        self.assertTrue(report)
        self.assertEqual(report.violations, [])
        # (M + P - 1) (F + I + W) with unit stage times.
        self.assertEqual(report.metrics.makespan, 33)
        self.assertEqual(report.metrics.peak_activations, [4, 3, 2, 1])
        self.assertEqual(report.peak_memory, [4, 3, 2, 1])
        self.assertEqual(report.memory_unit, "activations")

    def test_every_strategy_generates_a_verified_plan(self) -> None:
        self.assertIn("zb-v", schedc.strategies())
        for strategy in schedc.strategies():
            pp = 1 if strategy in ("no-pp", "combined-1f1b") else 2
            # The interleaved strategies take vpp >= 2 but default to 1.
            vpp = 2 if strategy in ("interleaved-1f1b", "looped-bfs",
                                    "interleaved-combined-1f1b") else None
            with self.subTest(strategy=strategy):
                schedule = schedc.generate(strategy, pp=pp, vpp=vpp,
                                           microbatches=4)
                self.assertEqual(schedc.verify(schedule).verdict, "verified")

    def test_pipeline_order_round_trip(self) -> None:
        schedule = schedc.generate("gpipe", pp=2, microbatches=2)
        order = schedc.pipeline_order(schedule)
        self.assertEqual(order[0], ["0F0", "0SEND_F0", "0F1", "0SEND_F1",
                                    "0RECV_B0", "0B0", "0RECV_B1", "0B1"])
        self.assertEqual(schedc.pipeline_order(schedule, comms=False)[1],
                         ["1F0", "1F1", "1B0", "1B1"])
        again = schedc.from_pipeline_order(order)
        self.assertEqual(again.to_csv(), schedule.to_csv())
        self.assertEqual(schedc.verify(again).verdict, "verified")

    def test_cost_changes_the_simulation(self) -> None:
        schedule = schedc.generate("gpipe", pp=2, microbatches=3,
                                   transfers=False)
        # (3 + 1) F + (3 + 1) B with F = 1, B = 2.
        self.assertEqual(schedc.simulate(schedule, cost="f=1,b=2").makespan, 12)
        metrics = schedc.simulate(schedule, cost="f=1,b=2,comm=0.5")
        self.assertGreater(metrics.makespan, 12)
        self.assertEqual(metrics.bubble_ratio[0], metrics.bubble_ratio[1])

    def test_bad_requests_raise_with_the_reason(self) -> None:
        with self.assertRaisesRegex(ValueError, "unknown strategy 'nope'; "
                                    "expected one of: gpipe, 1f1b"):
            schedc.generate("nope", pp=2, microbatches=2)
        with self.assertRaisesRegex(ValueError, "pp must be at least 1, got 0"):
            schedc.generate("1f1b", pp=0, microbatches=2)
        with self.assertRaisesRegex(ValueError, "needs vpp = 2"):
            schedc.generate("zb-v", pp=2, vpp=1, microbatches=2)
        with self.assertRaisesRegex(ValueError, "unknown --cost key 'q'"):
            schedc.generate("1f1b", pp=2, microbatches=2, cost="q=1")
        with self.assertRaisesRegex(ValueError, "working memory"):
            schedc.generate("gpipe", pp=1 << 20, microbatches=1 << 20)
        with self.assertRaisesRegex(TypeError, "pp must be an int, not str"):
            schedc.generate("1f1b", pp="2", microbatches=2)

    def test_limits_are_the_command_lines(self) -> None:
        # schedc generate's limits (the sched dialect's): more than 2^20
        # stages or 2^26 microbatches was generated here, refused there.
        with self.assertRaisesRegex(ValueError, "pipeline has 2097152 x 1 "
                                    "stages; at most 1048576 are supported"):
            schedc.generate("gpipe", pp=1 << 21, microbatches=1)
        with self.assertRaisesRegex(ValueError, "pipeline has 2 x 1048576 "
                                    "stages; at most 1048576"):
            schedc.generate("interleaved-1f1b", pp=2, vpp=1 << 20,
                            microbatches=2)
        with self.assertRaisesRegex(ValueError, "pipeline has 67108865 "
                                    "microbatches; at most 67108864"):
            schedc.generate("gpipe", pp=1, microbatches=(1 << 26) + 1)

    def test_dualpipe_v_is_linear_in_ranks(self) -> None:
        # Each rank's prefix grew with pp: quadratic in all, 714 MB at pp
        # 8,192 and "LLVM ERROR: out of memory" at 16,384, which killed the
        # interpreter. Two microbatches down and up the V: 6 actions a rank.
        # The bound is on CPU time, which load does not inflate (issue 31).
        started = time.process_time()
        schedule = schedc.generate("dualpipe-v", pp=16384, microbatches=2)
        self.assertLess(time.process_time() - started, 10.0)
        self.assertEqual((schedule.num_ranks, schedule.num_stages),
                         (16384, 32768))
        order = schedc.pipeline_order(schedule)
        self.assertIn("16384F0", order[16383])

    def test_a_schedule_that_cannot_finish_does_not_simulate(self) -> None:
        with self.assertRaisesRegex(ValueError, "cannot run to the end: rank 0 "
                                    "is stuck at action 0 \\(0B0\\)"):
            schedc.simulate({0: ["0B0", "0F0"], 1: ["1F0", "1B0"]})


if __name__ == "__main__":
    unittest.main(verbosity=2)
