"""JSON runtime plans through the schedc module: what the plan format says
beyond the CSV (streams and events, shape exchanges, a recorded memory
limit) reaches the verifier, and what the CSV forms cannot say is refused
with the reason."""
import copy
import json
import unittest

import schedc


def plan(version, ranks, memory_limit=None):
    """A one- or two-stage plan of `ranks` (rank id -> instructions)."""
    stages = len(ranks)
    return {
        "format": "schedc-runtime-plan", "version": version,
        "name": "p",
        "verdict": {"memory_limit": memory_limit, "p2p": "rendezvous",
                    "status": "unverified"},
        "stages": stages, "microbatches": 1,
        "ranks": [{"rank": r, "instructions": ins}
                  for r, ins in sorted(ranks.items())],
    }


def op(name, **fields):
    return dict(op=name, **fields)


def transfer(name, stage, direction, peer, shape=False):
    fields = dict(stage=stage, microbatch=0, direction=direction, peer=peer)
    if shape:
        fields["payload"] = "shape"
    return op(name, **fields)


# One stage on streams: the backward on another stream than its forward.
RACE = plan(3, {0: [op("forward", stage=0, microbatch=0, stream="main"),
                    op("backward", stage=0, microbatch=0, stream="side"),
                    op("optimizer_step", stream="side")]})

# Two stages with a shape exchange before each transfer.
SHAPES = plan(4, {
    0: [op("forward", stage=0, microbatch=0),
        transfer("send", 0, "forward", 1, shape=True),
        transfer("send", 0, "forward", 1),
        transfer("recv", 0, "backward", 1, shape=True),
        transfer("recv", 0, "backward", 1),
        op("backward", stage=0, microbatch=0),
        op("optimizer_step")],
    1: [transfer("recv", 1, "forward", 0, shape=True),
        transfer("recv", 1, "forward", 0),
        op("forward", stage=1, microbatch=0),
        op("backward", stage=1, microbatch=0),
        transfer("send", 1, "backward", 0, shape=True),
        transfer("send", 1, "backward", 0),
        op("optimizer_step")]})


class PlanTest(unittest.TestCase):
    def test_streams_reach_the_verifier(self) -> None:
        report = schedc.verify(json.dumps(RACE))
        self.assertEqual(report.verdict, "violated")
        self.assertEqual(report.violations[0].kind, "dependency")
        self.assertIn("on stream side of rank 0 must wait for F(stage 0, "
                      "mb 0) on stream main", report.violations[0].message)
        fixed = copy.deepcopy(RACE)
        fixed["ranks"][0]["instructions"][0]["record_event"] = "f"
        fixed["ranks"][0]["instructions"][1]["wait_event"] = "f"
        self.assertEqual(schedc.verify(schedc.from_plan(json.dumps(fixed)))
                         .verdict, "verified")

    def test_shape_exchanges_reach_the_verifier(self) -> None:
        self.assertEqual(schedc.verify(json.dumps(SHAPES)).verdict,
                         "verified")
        crossed = copy.deepcopy(SHAPES)
        sends = crossed["ranks"][0]["instructions"]
        sends[1], sends[2] = sends[2], sends[1]
        report = schedc.verify(json.dumps(crossed))
        self.assertEqual(report.verdict, "violated")
        self.assertEqual(report.violations[0].kind, "transfer")
        self.assertIn("one carries", report.violations[0].message)

    def test_semantics_default_to_rendezvous(self) -> None:
        # Megatron-LM #5100 at pp 2: 1F1B with the shape exchanges one at a
        # time in _communicate_shapes's fixed order, so in the steady phase
        # both ranks send a shape first. A deadlock under rendezvous (a
        # plan's engines), verified under eager semantics.
        def mb(instruction, m):
            return dict(instruction, microbatch=m)

        def grouped(instruction, group):
            return dict(instruction, p2p_group=group)

        facing = plan(4, {
            0: [op("forward", stage=0, microbatch=0),
                transfer("send", 0, "forward", 1, shape=True),
                transfer("send", 0, "forward", 1),
                op("forward", stage=0, microbatch=1),
                mb(transfer("send", 0, "forward", 1, shape=True), 1),
                transfer("recv", 0, "backward", 1, shape=True),
                grouped(mb(transfer("send", 0, "forward", 1), 1), 0),
                grouped(transfer("recv", 0, "backward", 1), 0),
                op("backward", stage=0, microbatch=0),
                mb(transfer("recv", 0, "backward", 1, shape=True), 1),
                mb(transfer("recv", 0, "backward", 1), 1),
                op("backward", stage=0, microbatch=1),
                op("optimizer_step")],
            1: [transfer("recv", 1, "forward", 0, shape=True),
                transfer("recv", 1, "forward", 0),
                op("forward", stage=1, microbatch=0),
                op("backward", stage=1, microbatch=0),
                transfer("send", 1, "backward", 0, shape=True),
                mb(transfer("recv", 1, "forward", 0, shape=True), 1),
                grouped(transfer("send", 1, "backward", 0), 0),
                grouped(mb(transfer("recv", 1, "forward", 0), 1), 0),
                op("forward", stage=1, microbatch=1),
                op("backward", stage=1, microbatch=1),
                mb(transfer("send", 1, "backward", 0, shape=True), 1),
                mb(transfer("send", 1, "backward", 0), 1),
                op("optimizer_step")]})
        facing["microbatches"] = 2
        text = json.dumps(facing)
        report = schedc.verify(text)
        self.assertEqual(report.verdict, "violated")
        self.assertEqual(report.violations[0].kind, "deadlock")
        self.assertEqual(schedc.verify(text, p2p="eager").verdict, "verified")
        # Rank 1 (odd) receives first, as _p2p_ops orders it: verified.
        second = facing["ranks"][1]["instructions"]
        second[4], second[5] = second[5], second[4]
        self.assertEqual(schedc.verify(json.dumps(facing)).verdict,
                         "verified")

    def test_recorded_memory_limit(self) -> None:
        # One activation unit live at the peak: a recorded limit of half a
        # unit is broken unless the caller gives another.
        tight = plan(3, {0: RACE["ranks"][0]["instructions"][:1] + [
            op("backward", stage=0, microbatch=0, stream="main"),
            op("optimizer_step", stream="main")]}, memory_limit=0.5)
        report = schedc.verify(json.dumps(tight))
        self.assertEqual(report.verdict, "violated")
        self.assertEqual(report.violations[0].kind, "memory")
        self.assertEqual(schedc.verify(json.dumps(tight), memory_limit=2)
                         .verdict, "verified")

    def test_malformed_plans(self) -> None:
        v3 = copy.deepcopy(SHAPES)
        v3["version"] = 3
        with self.assertRaisesRegex(ValueError, r"plan.json:\d+:\d+: .*shape "
                                    r"exchanges \(\"payload\"\) need plan "
                                    r"version 4; this plan is version 3"):
            schedc.from_plan(json.dumps(v3))
        with self.assertRaisesRegex(ValueError, "malformed JSON"):
            schedc.verify("{oops")
        with self.assertRaisesRegex(TypeError, "plan text must be a str"):
            schedc.from_plan(b"{}")

    def test_csv_forms_refuse_what_they_cannot_say(self) -> None:
        with self.assertRaisesRegex(ValueError, "rank 0 runs actions on "
                                    "streams main and side; the PyTorch CSV "
                                    "has no streams or events"):
            schedc.pipeline_order(schedc.from_plan(json.dumps(RACE)))
        with self.assertRaisesRegex(ValueError, "rank 0 holds a shape "
                                    "exchange at action 1"):
            schedc.pipeline_order(schedc.from_plan(json.dumps(SHAPES)))


if __name__ == "__main__":
    unittest.main(verbosity=2)
