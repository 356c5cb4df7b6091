"""Malformed input to the schedc module: a ValueError or TypeError with the
reason, never a crash."""
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
