"""Tests of lethe.memory_profile against the real lethe-opt."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from lethe import memory_profile  # noqa: E402

# Two-op residual function: x (4x4xf32, 64 bytes) stays live until the add.
#   op 0 relu: x + %0          = 128
#   op 1 add:  x + %0 + %1     = 192
#   op 2 return: %1            =  64
RESIDUAL = """
func.func @residual(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = lethe.relu %x : tensor<4x4xf32>
  %1 = lethe.add %x, %0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
func.func private @declaration(tensor<4xf32>)
"""


class MemoryProfileTest(unittest.TestCase):
    def profile(self, source):
        with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as file:
            file.write(source)
        try:
            return memory_profile.profile_file(file.name)
        finally:
            os.unlink(file.name)

    def test_residual(self):
        (function,) = self.profile(RESIDUAL)
        self.assertEqual(function.name, "residual")
        self.assertEqual(function.ops, ["lethe.relu", "lethe.add", "func.return"])
        self.assertEqual(function.live_bytes, [128, 192, 64])
        self.assertEqual(function.peak_bytes, 192)
        self.assertEqual(function.peak_op, "lethe.add")
        x = function.tensors[0]
        self.assertEqual((x.name, x.type, x.size_bytes), ("%arg0", "tensor<4x4xf32>", 64))
        self.assertEqual((x.first_op, x.last_op), (0, 1))

    def test_invalid_ir_raises(self):
        with self.assertRaisesRegex(RuntimeError, "lethe-opt failed"):
            self.profile("func.func @f() { lethe.bogus }")

    def test_unexpected_text_raises(self):
        with self.assertRaises(memory_profile.ProfileFormatError):
            memory_profile.parse("memory profile of @f: 0 tensors, 0 ops\n  garbage\n")


if __name__ == "__main__":
    unittest.main()
