#!/usr/bin/env python3
"""bench/setup.py's reading of ibv_*_pingpong output (no program runs here)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from datapath import AnchorError  # noqa: E402
from setup import usec_per_iter  # noqa: E402

# rdma-core's pp_*_pingpong prints, on both sides, after the addresses:
CLIENT = """\
  local address:  LID 0x0002, QPN 0x010011, PSN 0x7c2b3e, GID fe80::10:2
  remote address: LID 0x0001, QPN 0x000011, PSN 0x58ef21, GID fe80::10:1
10240 bytes in 0.00 seconds = 5.22 Mbit/sec
5 iters in 0.00 seconds = 204.80 usec/iter
"""


class Reading(unittest.TestCase):
    def test_the_usec_per_iter_figure_is_read(self):
        self.assertEqual(usec_per_iter(CLIENT), 204.8)

    def test_output_without_it_is_an_error(self):
        with self.assertRaises(AnchorError):
            usec_per_iter("Failed to modify QP to RTR\nCouldn't connect to remote QP\n")


if __name__ == "__main__":
    unittest.main()
