#include "link/copy_chooser.hpp"

namespace softib::link {

bool CopyChooser::cached(uint64_t now, size_t bytes, bool near, uint64_t ring_bytes, uint64_t times_full) {
  if (!started_ || near != near_) start_over(near, ring_bytes);
  const bool waited = times_full != last_full_;
  last_full_ = times_full;
  close(now, waited, ring_bytes);
  last_ = now;
  last_bytes_ = bytes;
  return cached_;
}

void CopyChooser::close(uint64_t now, bool waited, uint64_t ring_bytes) {
  // now <= last_: this thread moved to a CPU whose counter lags (base/clock.hpp ticks_since).
  // That copy is left out; counted (after a full ring), its unsigned gap wraps, and a window
  // that closes before later stamps make up for it measures nothing.
  if (last_ != 0 && now > last_ && (now - last_ <= kBusyGapTicks || waited)) {
    const bool was = cached_;
    if (settle_ != 0)
      settle(now - last_);
    else
      count(now - last_);
    if (cached_ != was) begin_settle(ring_bytes);
  }
  last_ = 0;
}

void CopyChooser::start_over(bool near, uint64_t ring_bytes) {
  started_ = true;
  near_ = near;
  cached_ = home_ = near;
  trying_ = false;
  measured_[0] = measured_[1] = false;
  since_try_ = 0;
  try_every_ = kExploreFirst;
  window_ticks_ = window_bytes_ = 0;
  begin_settle(ring_bytes);
  last_ = 0;  // a copy made the old way does not count in the new way's window
}

void CopyChooser::begin_settle(uint64_t ring_bytes) {
  settle_ = ring_bytes;
  settled_ticks_ = settled_bytes_ = 0;
}

void CopyChooser::settle(uint64_t ticks) {
  settle_ -= last_bytes_ < settle_ ? last_bytes_ : settle_;
  settled_ticks_ += ticks;
  settled_bytes_ += last_bytes_;
  // A try that loses by far even while the ring's fill favours it ends here.
  if (!quick_loss_ || !trying_ || settled_bytes_ < kQuickLossBytes) return;
  const double rate = static_cast<double>(settled_bytes_) / static_cast<double>(settled_ticks_ == 0 ? 1 : settled_ticks_);
  if (rate * kQuickLossFactor >= rate_[home_ ? 1 : 0]) return;
  rate_[cached_ ? 1 : 0] = rate;
  measured_[cached_ ? 1 : 0] = true;
  end_try(false);
}

void CopyChooser::count(uint64_t ticks) {
  window_ticks_ += ticks;
  window_bytes_ += last_bytes_;
  if (window_bytes_ < kWindowBytes) return;
  ++windows_;
  const int way = cached_ ? 1 : 0;
  const double rate = static_cast<double>(window_bytes_) / static_cast<double>(window_ticks_ == 0 ? 1 : window_ticks_);
  window_ticks_ = window_bytes_ = 0;
  // At home, an average of its recent windows (one window's rate varies by a third here); a
  // try stands on its own window: the way's older figure may come from another state.
  rate_[way] = trying_ || !measured_[way] ? rate : kHomeWeight * rate_[way] + (1 - kHomeWeight) * rate;
  measured_[way] = true;
  if (trying_) {
    end_try(rate_[way] > kSwitchMargin * rate_[home_ ? 1 : 0]);
  } else if (!measured_[home_ ? 0 : 1] || ++since_try_ >= try_every_) {
    trying_ = true;
    cached_ = !home_;
  }
}

void CopyChooser::end_try(bool won) {
  trying_ = false;
  if (won) {
    home_ = cached_;
    ++switches_;
    try_every_ = kExploreFirst;
  } else {
    try_every_ = try_every_ * 4 > kExploreMax ? kExploreMax : try_every_ * 4;
  }
  cached_ = home_;
  since_try_ = 0;
  window_ticks_ = window_bytes_ = 0;
}

}  // namespace softib::link
