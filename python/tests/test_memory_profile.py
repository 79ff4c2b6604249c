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


# A convolution holds its im2col column buffer while it runs: (C/group) *
# prod(kernel) rows and prod(output spatial) columns of f32, 2 * 9 * 25 * 4 =
# 1800 bytes, at op 0 only.
#   op 0 conv:   x 200 + w 216 + %0 300 + workspace 1800 = 2516
#   op 1 return: %0 300
CONVOLUTION = """
func.func @conv(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32> {
  %0 = lethe.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  return %0 : tensor<1x3x5x5xf32>
}
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

    def test_workspace(self):
        (function,) = self.profile(CONVOLUTION)
        self.assertEqual(function.workspaces,
                         [memory_profile.Workspace(0, "lethe.conv", 1800)])
        self.assertEqual(function.live_bytes, [2516, 300])
        self.assertEqual(function.peak_bytes, 2516)

    def test_invalid_ir_raises(self):
        with self.assertRaisesRegex(RuntimeError, "lethe-opt failed"):
            self.profile("func.func @f() { lethe.bogus }")

    def test_unexpected_text_raises(self):
        with self.assertRaises(memory_profile.ProfileFormatError):
            memory_profile.parse("memory profile of @f: 0 tensors, 0 ops\n  garbage\n")


if __name__ == "__main__":
    unittest.main()
