"""Malformed input to the schedc module: a ValueError or TypeError with the
reason, never a crash."""
import os
import tempfile
import time
import unittest

import schedc


class InputErrorsTest(unittest.TestCase):
    def test_bad_csv_text(self) -> None:
        with self.assertRaisesRegex(ValueError, "schedule.csv:1:5: malformed "
                                    "cell 'zz': expected {stage}"):
            schedc.verify("0F0,zz\n")
        with self.assertRaisesRegex(ValueError, "schedule.csv:2:1: malformed "
                                    "cell '1Q0'"):
            schedc.from_csv("0F0\n1Q0\n")
        with self.assertRaisesRegex(TypeError, "CSV text must be a str"):
            schedc.from_csv(b"0F0\n")

    def test_bad_action_string(self) -> None:
        with self.assertRaisesRegex(ValueError, "rank 1, step 2: malformed "
                                    "cell '1X0'"):
            schedc.verify({0: ["0F0", "0B0"], 1: [None, "1F0", "1X0"]})
        with self.assertRaisesRegex(ValueError, "rank 0, step 1: action "
                                    "'0F0,0B0' holds a comma or a line break"):
            schedc.verify({0: ["0F0", "0F0,0B0"]})

    def test_bad_pipeline_order_shape(self) -> None:
        with self.assertRaisesRegex(ValueError, "pipeline_order key -1 is not "
                                    "a rank"):
            schedc.verify({-1: ["0F0"]})
        with self.assertRaisesRegex(ValueError, "pipeline_order key 'a' is not "
                                    "a rank"):
            schedc.verify({"a": ["0F0"]})
        with self.assertRaisesRegex(ValueError, "rank 0: actions must be a "
                                    "list, not str"):
            schedc.verify({0: "0F0"})
        with self.assertRaisesRegex(ValueError, "rank 1048576 is out of range"):
            schedc.verify({1 << 20: ["0F0"]})

    def test_counts_given_with_the_input(self) -> None:
        # A missing rank key is a rank that runs nothing.
        report = schedc.verify({1: ["1F0", "1B0"]}, stages=2)
        self.assertEqual(report.verdict, "violated")
        with self.assertRaisesRegex(ValueError, "must be at least 1"):
            schedc.verify("0F0,0B0\n", microbatches=0)

    def test_wrong_input_type(self) -> None:
        with self.assertRaisesRegex(TypeError, "expected a schedc.Schedule, "
                                    "CSV text or a pipeline_order dict, not int"):
            schedc.verify(42)

    def test_bad_descriptions(self) -> None:
        # 35,000 unclosed '[' overflowed the JSON parser's recursion and
        # killed the interpreter.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "deep.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write("[" * 35000)
            with self.assertRaisesRegex(ValueError, "deep.json: line 1, column "
                                        "513: brackets nest deeper than 512"):
                schedc.plan(path, "h100-ib", 8)
            # A key twice: JSON's last value won, silently.
            path = os.path.join(tmp, "twice.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write('{"layers": 32,\n "hidden": 4096, "layers": 2}')
            with self.assertRaisesRegex(ValueError, 'twice.json: line 2, '
                                        'column 18: key "layers" appears '
                                        'twice in one object \\(first on '
                                        'line 1\\)'):
                schedc.plan(path, "h100-ib", 8)
            with self.assertRaisesRegex(ValueError, '^line 1, column 15: key '
                                        '"name" appears twice'):
                schedc.plan("llama3-8b", '{"name": "a", "name": "b"}', 8)
        # A denormal efficiency gave a "verified" plan at 1,296,368% MFU.
        cluster = {"device": {"peak_flops": {"bf16": 1e15}, "hbm_bytes": 8e10,
                              "hbm_bandwidth": 3e12},
                   "domain_size": 8, "domain_bandwidth": 4e11,
                   "scale_out_bandwidth": 5e10,
                   "efficiency": {"matmul": 5e-324}}
        deep: dict = {}
        for _ in range(100000):
            deep = {"x": deep}
        with self.assertRaisesRegex(ValueError, "^model nests too deep"):
            schedc.plan(deep, "h100-ib", 8)
        with self.assertRaisesRegex(ValueError, "^cluster: Out of range float "
                                    "values are not JSON compliant"):
            schedc.plan("llama3-8b", {"latency_s": float("nan")}, 8)
        with self.assertRaisesRegex(ValueError, r"efficiency.matmul: expected "
                                    r"a number in \[0.001, 1\], got 4.94066e-324"):
            schedc.plan("llama3-8b", cluster, 8)

    def test_bad_arguments_are_one_line(self) -> None:
        # pybind's TypeError listed every argument: 4 MB with this cost.
        with self.assertRaises(ValueError) as caught:
            schedc.generate("1f1b", 1 << 70, 4, cost="f=1" * 1000000)
        self.assertEqual(str(caught.exception),
                         "pp is out of range (a 64-bit integer)")
        with self.assertRaisesRegex(TypeError, "^strategy must be a str, "
                                    "not bytes$"):
            schedc.generate(b"1f1b", 2, 4)
        with self.assertRaisesRegex(ValueError, "^seq_len is out of range"):
            schedc.plan("llama3-8b", "h100-ib", 8, seq_len=1 << 64)
        # Limits are read exactly, at any magnitude (docs/verifier.md): an
        # int past a double's range is a limit, not an error; what is not a
        # number is one line.
        self.assertEqual(schedc.verify("0F0,0B0\n",
                                       memory_limit=10 ** 400).verdict,
                         "verified")
        with self.assertRaisesRegex(ValueError, "^memory limit 'nan' is not "
                                    "a number >= 0"):
            schedc.verify("0F0,0B0\n", memory_limit=float("nan"))
        # An AttributeError before.
        with self.assertRaisesRegex(TypeError, "^schedule must be a "
                                    "schedc.Schedule, not NoneType$"):
            schedc.pipeline_order(None)

    def test_long_rows_read_in_linear_time(self) -> None:
        # Each cell's step counted the commas before it: 18.6 s for a row
        # of 180,000 cells (0.06 s on the CLI). The bound is on this
        # process's CPU time, which other processes on the machine do not
        # inflate as they do the clock (issue 31), and far above the
        # linear path's.
        cells = ([f"0F{m}" for m in range(90000)] +
                 [f"0B{m}" for m in range(90000)])
        started = time.process_time()
        report = schedc.verify(",".join(cells) + "\n")
        order = schedc.from_pipeline_order({0: cells})
        self.assertLess(time.process_time() - started, 5.0)
        self.assertEqual(report.verdict, "verified")
        self.assertEqual(schedc.pipeline_order(order)[0][-1], "0B89999")


if __name__ == "__main__":
    unittest.main(verbosity=2)
