#!/usr/bin/env python3
"""bench/instructions.py's reading of callgrind_annotate output (no valgrind run here)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from instructions import (inclusive_counts, messages, path_count, perftest_self, profiled_pid,  # noqa: E402
                          profiled_program, sides)

# The shape of `callgrind_annotate --inclusive=yes` output (trimmed from a real run).
SENDER = """\
Profiled target:  build/release/bench/bench_verbs rate --size 64 --iters 200000 (PID 3644, part 1)
Events recorded:  Ir
--------------------------------------------------------------------------------
191,433,114 (100.0%)  PROGRAM TOTALS
--------------------------------------------------------------------------------
140,800,000 (73.55%)  /work/main/src/api/verbs.cpp:softib::QueuePair::post_send(std::span<softib::verbs::SendWr const, 18446744073709551615ul>, unsigned long*) [clone .constprop.0]
102,300,000 (53.44%)  /work/main/src/rc/device.cpp:softib::rc::Device::progress(softib::rc::Device::AckPolicy)
 76,477,592 (39.95%)  src/rc/requester.cpp:softib::rc::Device::progress(softib::rc::Device::AckPolicy)
 18,040,000 ( 9.42%)  /work/main/src/link/shm_link.cpp:softib::link::ShmLink::reserve_frame(softib::rc::FrameAddr const&, softib::Qpn, unsigned long, bool)
 16,280,000 ( 8.50%)  /work/main/src/rc/responder.cpp:softib::rc::Device::receive(softib::rc::FrameAddr const&, std::span<unsigned char const, 18446744073709551615ul>, softib::rc::Burst const&)
"""
RECEIVER = """\
Profiled target:  build/release/bench/bench_verbs rate --size 64 --iters 200000 (PID 3646, part 1)
 128,920,000 (65.00%)  /work/main/src/rc/responder.cpp:softib::rc::Device::receive(softib::rc::FrameAddr const&, std::span<unsigned char const, 18446744073709551615ul>, softib::rc::Burst const&)
  26,180,000 (13.20%)  /work/main/src/packet/transport_frame.cpp:softib::packet::parse_transport_frame(std::span<unsigned char const, 18446744073709551615ul>, softib::packet::TransportFrame&)
   1,000,000 ( 0.50%)  /work/main/src/rc/device.cpp:softib::rc::Device::progress(softib::rc::Device::AckPolicy)
"""
DAEMON = "Profiled target:  /work/main/build/release/bench/../bin/softibd --fabric t1 (PID 3645, part 1)\n"


class Reading(unittest.TestCase):
    def test_the_largest_entry_of_a_function_is_its_inclusive_count(self):
        counts = inclusive_counts(SENDER)
        self.assertEqual(counts["Device::progress"], 102_300_000)  # not the requester.cpp part
        self.assertEqual(counts["QueuePair::post_send"], 140_800_000)
        self.assertEqual(counts["ShmLink::reserve"], 18_040_000)
        self.assertNotIn("Device::execute", counts)

    def test_only_bench_verbs_is_read(self):
        self.assertEqual(profiled_program(SENDER), "bench_verbs")
        self.assertEqual(profiled_program(DAEMON), "softibd")
        self.assertIsNone(profiled_program("no header\n"))

    def test_the_sender_is_the_side_that_progresses_more_than_it_receives(self):
        named = sides("rate", [(3646, inclusive_counts(RECEIVER)), (3644, inclusive_counts(SENDER))])
        self.assertEqual([n for n, _ in named], ["receiver", "sender"])
        self.assertEqual([n for n, _ in sides("lat", [(1, {}), (2, {})])], ["a", "b"])

    def test_the_critical_path_is_the_total_collected_on_the_answering_side(self):
        self.assertEqual(profiled_pid(SENDER), 3644)
        self.assertEqual(profiled_pid(RECEIVER), 3646)
        self.assertIsNone(profiled_pid("no header\n"))
        self.assertEqual(inclusive_counts(SENDER)["path"], 191_433_114)  # PROGRAM TOTALS
        self.assertNotIn("path", inclusive_counts(RECEIVER))  # this trimmed one has no totals line
        # bench_verbs forks the answering side: the later PID, whatever order the files came in.
        named = sides("critical", [(3646, {"path": 2}), (3644, {"path": 1})])
        self.assertEqual(named, [("answering", {"path": 2})])
        self.assertEqual(sides("critical", []), [])

    def test_the_paths_are_the_calls_of_the_marker(self):
        tree = """\
    21,793 ( 0.08%)  >   build/critpath/include/link/link/critical_path.hpp:softib_critical_path_begun (21,793x) [/w/bench_verbs]
    21,793 ( 0.08%)  => build/critpath/include/link/link/critical_path.hpp:softib_critical_path_begun (21,793x)
       100 ( 0.01%)  => /w/src/rc/device.cpp:softib::rc::Device::progress(softib::rc::Device::AckPolicy) (100x)
"""
        self.assertEqual(path_count(tree), 21_793)
        self.assertIsNone(path_count(SENDER))  # a build without the marks

    def test_the_drop_in_reads_perftests_server_and_its_own_slots(self):
        # --dropin: the shape of the ib_send_lat server's listings (trimmed from a real run).
        inclusive = """\
Profiled target:  ib_send_lat -s 2 -n 50000 -p 22458 (PID 10287, part 1)
102,809,773 (100.0%)  PROGRAM TOTALS
61,702,520 (60.02%)  /work/main/src/compat/verbs/datapath.cpp:softib::compat::(anonymous namespace)::poll_cq(ibv_cq*, int, ibv_wc*)
61,073,981 (59.40%)  src/compat/verbs/datapath.cpp:softib::compat::(anonymous namespace)::poll_cq(ibv_cq*, int, ibv_wc*) [/w/lib/libibverbs.so.1.14.44.0]
27,364,730 (26.62%)  /work/main/src/compat/verbs/datapath.cpp:softib::compat::(anonymous namespace)::post_send(ibv_qp*, ibv_send_wr*, ibv_send_wr**)
 9,114,270 ( 8.87%)  src/compat/verbs/datapath.cpp:softib::compat::(anonymous namespace)::post_recv(ibv_qp*, ibv_recv_wr*, ibv_recv_wr**) [/w/lib/libibverbs.so.1.14.44.0]
 8,900,320 ( 8.66%)  src/compat/verbs/datapath.cpp:int softib::compat::(anonymous namespace)::post_receives<softib::compat::(anonymous namespace)::post_recv(ibv_qp*, ibv_recv_wr*, ibv_recv_wr**)::{lambda(std::span<softib::verbs::RecvWr const, 18446744073709551615ul>, unsigned long*)#1}>(ibv_recv_wr*, ibv_recv_wr**, softib::compat::(anonymous namespace)::post_recv(ibv_qp*, ibv_recv_wr*, ibv_recv_wr**)::{lambda(std::span<softib::verbs::RecvWr const, 18446744073709551615ul>, unsigned long*)#1}) [/w/lib/libibverbs.so.1.14.44.0]
"""
        self.assertEqual(profiled_program(inclusive), "ib_send_lat")
        counts = inclusive_counts(inclusive)
        self.assertEqual(counts["path"], 102_809_773)
        self.assertEqual(counts["drop-in poll_cq"], 61_702_520)
        self.assertEqual(counts["drop-in post_send"], 27_364_730)
        # post_recv's own entry, not post_receives' (which names post_recv only inside it).
        self.assertEqual(counts["drop-in post_recv"], 9_114_270)
        self_costs = """\
4,628,253 ( 4.50%)  ???:0x0000000000023100 [/usr/bin/ib_send_lat]
3,157,907 ( 3.07%)  src/compat/verbs/datapath.cpp:softib::compat::(anonymous namespace)::post_send(ibv_qp*, ibv_send_wr*, ibv_send_wr**) [/w/lib/libibverbs.so.1.14.44.0]
   12,000 ( 0.01%)  ???:0x0000000000023400 [/usr/bin/ib_send_lat]
"""
        self.assertEqual(perftest_self(self_costs), 4_640_253)

    def test_messages_follow_bench_verbs_warm_up(self):
        self.assertEqual(messages("rate", 200000), 220000)
        self.assertEqual(messages("rate", 1000), 10016 + 1000)  # a 10,000 warm-up in whole batches of 32
        self.assertEqual(messages("lat", 20000), 22000)
        self.assertEqual(messages("lat", 500), 600)


if __name__ == "__main__":
    unittest.main()
