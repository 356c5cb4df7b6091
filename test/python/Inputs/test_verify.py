"""schedc.verify on each kind of input: its verdicts and its violations as
objects with kind, rank, position, step and message."""
import unittest

import schedc

# Rank 0 posts its receive of the gradient before it sends the activation:
# fine when a receive only posts (eager, PyTorch), a deadlock when each
# transfer completes with its match (rendezvous, NCCL).
RECV_FIRST = {
    0: ["0F0", "0RECV_B0", "0SEND_F0", "0B0"],
    1: ["1RECV_F0", "1F0", "1B0", "1SEND_B0"],
}


class Action:
    """Stands for torch.distributed.pipelining's _Action: str() is its
    CSV spelling."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


class VerifyTest(unittest.TestCase):
    def test_dependency_violation_names_rank_position_and_step(self) -> None:
        # Rank 1 idles at step 0, then runs B before F.
        report = schedc.verify({0: ["0F0", None, None, "0B0"],
                                1: [None, "1B0", "1F0"]})
        self.assertEqual(report.verdict, "violated")
        self.assertFalse(report)
        (violation,) = report.violations
        self.assertEqual(violation.kind, "dependency")
        self.assertEqual(violation.rank, 1)
        self.assertEqual(violation.position, 0)
        self.assertEqual(violation.step, 1)
        self.assertEqual(violation.action, "B(stage 1, mb 0)")
        self.assertEqual(violation.message, "B(stage 1, mb 0) runs before "
                         "F(stage 1, mb 0) on rank 1, but needs its output")
        self.assertEqual(violation.notes, ["F(stage 1, mb 0) runs here, later"])

    def test_csv_text_and_pipeline_order_give_the_same_report(self) -> None:
        csv = schedc.verify("0F0,,,0B0\n,1B0,1F0\n")
        order = schedc.verify({0: ["0F0", None, None, "0B0"],
                               1: [None, "1B0", "1F0"]})
        self.assertEqual([(v.kind, v.rank, v.position, v.step, v.message)
                          for v in csv.violations],
                         [(v.kind, v.rank, v.position, v.step, v.message)
                          for v in order.violations])

    def test_p2p_semantics_decide_the_deadlock(self) -> None:
        self.assertEqual(schedc.verify(RECV_FIRST).verdict, "verified")
        self.assertEqual(schedc.verify(RECV_FIRST, p2p="eager").verdict,
                         "verified")
        report = schedc.verify(RECV_FIRST, p2p="rendezvous")
        self.assertEqual(report.verdict, "violated")
        (violation,) = report.violations
        self.assertEqual((violation.kind, violation.rank, violation.position,
                          violation.step), ("deadlock", 0, 2, 2))
        self.assertIn("a cycle of 4 waits across 2 rank(s)", violation.message)
        self.assertEqual(len(violation.notes), 6)

    def test_memory_limit(self) -> None:
        schedule = schedc.generate("1f1b", pp=2, microbatches=4)
        self.assertEqual(schedc.verify(schedule, memory_limit=2).verdict,
                         "verified")
        report = schedc.verify(schedule, memory_limit=1)
        self.assertEqual(report.verdict, "violated")
        (violation,) = report.violations
        self.assertEqual((violation.kind, violation.rank), ("memory", 0))
        self.assertEqual(violation.step, -1)  # generated: no CSV cell
        self.assertIn("over the limit of 1 activation units", violation.message)
        self.assertEqual(report.peak_memory, [2, 1])

    def test_memory_limit_is_read_exactly(self) -> None:
        # A decimal string is read as schedc verify --memory-limit reads it:
        # 1.99999999999999999 units is under the peak of 2. As a float the
        # same literal is 2.0, and the schedule fits.
        schedule = schedc.generate("1f1b", pp=2, microbatches=4)
        self.assertEqual(
            schedc.verify(schedule, memory_limit="1.99999999999999999")
            .verdict, "violated")
        self.assertEqual(
            schedc.verify(schedule, memory_limit=1.99999999999999999)
            .verdict, "verified")
        self.assertEqual(schedc.verify(schedule, memory_limit="2").verdict,
                         "verified")
        with self.assertRaisesRegex(TypeError, "not bool"):
            schedc.verify(schedule, memory_limit=True)

    def test_torch_action_objects(self) -> None:
        order = {rank: [Action(a) for a in actions]
                 for rank, actions in RECV_FIRST.items()}
        self.assertEqual(schedc.verify(order, p2p="rendezvous").violations[0]
                         .kind, "deadlock")

    def test_missing_action(self) -> None:
        report = schedc.verify({0: ["0F0", "0SEND_F0", "0RECV_B0", "0B0"],
                                1: ["1RECV_F0", "1B0", "1SEND_B0"]})
        kinds = {v.kind for v in report.violations}
        self.assertIn("missing", kinds)

    def test_bad_options_raise(self) -> None:
        with self.assertRaisesRegex(ValueError, "unknown p2p semantics "
                                    "'maybe'; expected eager or rendezvous"):
            schedc.verify(RECV_FIRST, p2p="maybe")
        with self.assertRaisesRegex(ValueError, "memory limit '-1' is not "
                                    "a number >= 0"):
            schedc.verify(RECV_FIRST, memory_limit=-1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
