// Whether a channel's large RDMA WRITE bursts go by reference (one copy, process_vm_readv by
// the receiver) or through the ring (two copies, one by each core), chosen by the throughput
// each way gets (SOFTIB_SHM_CMA=auto; not yet the default: it is measured on middle vCPUs
// only). Which way wins depends on the two vCPUs' placement (far: the ring, 14.3 against 8.1
// GB/s at 64 KiB in an earlier session; middle: by reference, 21.9 against 14.9 at 64 KiB
// and the ring above 1 MiB), and that changes within minutes, so it measures, as CopyChooser
// does for the ring's stores.
//
// A WRITE burst's commit is timed from the commit of the one before it (bytes over busy time,
// in windows of kWindowBytes): by reference the bursts are paced by the QP's window of
// unacknowledged packets, so by the receiver's pulls; through the ring, by the ring's copies.
// After the first window the other way is tried for one window; the better one (by
// kSwitchMargin) is kept, and the other tried again after kExploreFirst windows, four times
// as long each time it loses, up to kExploreMax. After each change kSettleBytes are not
// counted (the window of unacknowledged packets fills or drains at the new way's pace).
//
// Thread: the link's (under the device lock).
#pragma once

#include <algorithm>
#include <cstdint>

namespace softib::link {

class RefChooser {
 public:
  static constexpr uint64_t kWindowBytes = uint64_t{8} << 20;
  static constexpr uint64_t kSettleBytes = uint64_t{4} << 20;
  static constexpr uint64_t kBusyGapTicks = 1'000'000;
  static constexpr uint32_t kExploreFirst = 8;
  static constexpr uint32_t kExploreMax = 256;
  static constexpr double kSwitchMargin = 1.05;

  bool by_reference() const { return ref_; }

  // A WRITE burst of `bytes` committed at `now` (ticks), the way by_reference() said.
  void sent(uint64_t now, uint64_t bytes, bool by_ref) {
    if (by_ref != ref_) return;  // decided before a change
    if (last_ != 0 && now - last_ < kBusyGapTicks) {
      ticks_ += now - last_;
      bytes_ += last_bytes_;
    }
    last_ = now;
    last_bytes_ = bytes;
    if (settle_ > 0) {
      settle_ -= std::min(settle_, bytes);
      if (settle_ == 0) ticks_ = bytes_ = 0;
      return;
    }
    if (bytes_ >= kWindowBytes && ticks_ > 0) end_window(static_cast<double>(bytes_) / static_cast<double>(ticks_));
  }

  uint32_t windows() const { return windows_; }
  uint32_t switches() const { return switches_; }

 private:
  void end_window(double rate) {
    ++windows_;
    ticks_ = bytes_ = 0;
    if (trying_) {
      trying_ = false;
      if (rate > home_rate_ * kSwitchMargin) {
        home_ = ref_;
        home_rate_ = rate;
        try_every_ = kExploreFirst;
        ++switches_;
      } else {
        ref_ = home_;
        try_every_ = std::min(try_every_ * 4, kExploreMax);
        settle_ = kSettleBytes;
      }
      since_try_ = 0;
      return;
    }
    home_rate_ = home_measured_ ? 0.75 * home_rate_ + 0.25 * rate : rate;
    home_measured_ = true;
    if (++since_try_ >= try_every_) {
      trying_ = true;
      ref_ = !home_;
      settle_ = kSettleBytes;
    }
  }

  bool ref_ = false;  // the way bursts go now
  bool home_ = false;
  bool trying_ = false;
  bool home_measured_ = false;
  double home_rate_ = 0;
  uint32_t since_try_ = 0;
  uint32_t try_every_ = 1;  // the first try comes after the first window
  uint64_t last_ = 0, last_bytes_ = 0, ticks_ = 0, bytes_ = 0, settle_ = 0;
  uint32_t windows_ = 0, switches_ = 0;
};

}  // namespace softib::link
