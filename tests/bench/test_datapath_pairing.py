#!/usr/bin/env python3
"""bench/datapath.py's pairing of figures within a round (round_state, paired_ratios): the
vCPUs move between "near" and "far" within seconds, and a ratio must never pair a figure
taken in one state with an anchor taken in the other. Also which figures --only names."""
import argparse
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from datapath import (NEAR_NS, AnchorError, combined_states, paired_ratios, parse_only,  # noqa: E402
                      round_state)


def probe(ns):
    return {"one_way_ns_min": ns}


class RoundState(unittest.TestCase):
    def test_both_probes_agree(self):
        self.assertEqual(round_state(probe(40), probe(60)), "near")
        self.assertEqual(round_state(probe(220), probe(400)), "far")

    def test_probes_that_disagree_make_a_mixed_round(self):
        self.assertEqual(round_state(probe(50), probe(230)), "mixed")
        self.assertEqual(round_state(probe(230), probe(50)), "mixed")

    def test_the_threshold_is_near_ns(self):
        self.assertEqual(round_state(probe(NEAR_NS - 0.1), probe(NEAR_NS - 0.1)), "near")
        self.assertEqual(round_state(probe(NEAR_NS), probe(NEAR_NS)), "far")

    def test_a_missing_probe(self):
        self.assertEqual(round_state(probe(50), None), "near")  # the opening one decides
        self.assertIsNone(round_state(AnchorError("no probe"), probe(50)))


class PairedRatios(unittest.TestCase):
    def test_each_round_pairs_its_own_figures(self):
        # The case seen on 2026-11-26: UCX's best round began near, softib's rounds were far.
        ours = [{"value": 0.62}, {"value": 0.60}, {"value": 0.61}]
        ucx = [{"value": 0.148}, {"value": 0.60}, {"value": 0.61}]
        per_round, by_state = paired_ratios(ours, ucx, ["mixed", "far", "far"])
        self.assertEqual(per_round, [round(0.62 / 0.148, 4), 1.0, 1.0])
        self.assertEqual(by_state, {"far": 1.0})  # the mixed round is left out

    def test_medians_are_kept_apart_by_state(self):
        ours = [{"value": 2.0}, {"value": 4.0}, {"value": 3.0}, {"value": 9.0}]
        theirs = [{"value": 1.0}, {"value": 1.0}, {"value": 1.0}, {"value": 3.0}]
        _, by_state = paired_ratios(ours, theirs, ["far", "far", "near", "far"])
        self.assertEqual(by_state, {"far": 3.0, "near": 3.0})

    def test_a_round_without_a_figure_has_no_ratio(self):
        ours = [AnchorError("bench_verbs failed"), {"value": 1.0}, {"value": 1.0}]
        theirs = [{"value": 1.0}, {"value": None}, {"value": 2.0}]
        per_round, by_state = paired_ratios(ours, theirs, ["near", "near", None])
        self.assertEqual(per_round, [None, None, 0.5])
        self.assertEqual(by_state, {})

    def test_rounds_are_kept_apart_by_their_siblings_load(self):
        # anchor_issue_rate: ~12.5 adds/ns with idle hyperthread siblings, 5-7 with busy ones.
        states = combined_states(["near", "near", "near", "mixed", "far", None], [12.4, 6.1, 11.9, 12.0, 5.5, 12.0])
        self.assertEqual(states, ["near/idle", "near/busy", "near/idle", "mixed/idle", "far/busy", None])
        self.assertEqual(combined_states(["near"], [None]), [None])  # not measured
        ours = [{"value": 0.15}, {"value": 0.22}, {"value": 0.16}, {"value": 0.15}, {"value": 0.35}, {"value": 1.0}]
        ucx = [{"value": 0.15}, {"value": 0.18}, {"value": 0.16}, {"value": 0.09}, {"value": 0.60}, {"value": 1.0}]
        _, by_state = paired_ratios(ours, ucx, states)
        self.assertEqual(by_state, {"far/busy": round(0.35 / 0.60, 4), "near/busy": round(0.22 / 0.18, 4), "near/idle": 1.0})



class OnlyTest(unittest.TestCase):
    def test_the_figures_by_name(self):
        self.assertEqual(parse_only("lat, evlat,bw"), ["lat", "evlat", "bw"])
        self.assertEqual(parse_only("rate"), ["rate"])
        self.assertEqual(parse_only("onecpu,lat"), ["onecpu", "lat"])

    def test_an_unknown_figure_is_refused(self):
        with self.assertRaises(argparse.ArgumentTypeError):
            parse_only("lat,event")


if __name__ == "__main__":
    unittest.main()
