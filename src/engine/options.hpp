// EngineOptions: how an engine thread paces itself. Its own header so that what configures a
// device (provider::Options) can carry them without the engine's whole interface.
#pragma once

#include <chrono>

#include "base/clock.hpp"

namespace softib::engine {

struct EngineOptions {
  // How long an idle engine keeps polling before it sleeps: `spin` at first, up to
  // `max_spin` while it is rung soon after each sleep (AdaptiveSpin, engine/spin.hpp).
  Duration spin = std::chrono::microseconds(50);
  Duration max_spin = std::chrono::microseconds(200);
  // The scheduler slice the engine thread asks for (zero: the kernel's default): short, so
  // that once woken it pre-empts a thread spinning on its CPU (base/process.hpp request_slice).
  Duration slice = std::chrono::microseconds(100);
  // How often a sleeping engine looks for channels whose senders died (and, while an
  // application thread polls, maps the next spare channel: Engine::run).
  Duration housekeeping = std::chrono::milliseconds(500);
  // Whether a poller that idles gives its CPU up now and then (IdleYield, engine/spin.hpp):
  // an application thread's idle polls and the engine's spin. SOFTIB_IDLE_YIELD=0 turns it
  // off, to compare.
  bool idle_yield = true;
};

// SOFTIB_ENGINE_SPIN's value (`value`; nullptr: not set): the longest, in microseconds, an idle
// engine polls before it sleeps while it is rung soon after each sleep (max_spin); at or under
// `spin` it never polls longer. Returns false, leaving `o` as it was, when `value` is not a
// number of microseconds from 0 to 100000.
bool apply_spin_setting(EngineOptions& o, const char* value);

}  // namespace softib::engine
