// MadPort: the subnet manager's only way to reach a fabric — send a MAD, receive MADs — so
// the same SM code runs against the in-process simulated fabric (SimMadPort), softibd's
// socket, or real hardware through libibumad.
//
// Thread: a MadPort is used by the SM's thread only.
#pragma once

#include <optional>

#include "base/result.hpp"
#include "base/ring_queue.hpp"
#include "fabric/fabric.hpp"

namespace softib::sm {

using Mad = fabric::Mad;

class MadPort {
 public:
  virtual ~MadPort() = default;
  // Queues a MAD for sending. Errors: Unavailable when the port is gone.
  virtual Result<void> send(const Mad& mad) = 0;
  // The next MAD that arrived, if any. Never blocks.
  virtual std::optional<Mad> receive() = 0;
};

// A MadPort on a port of an in-process Fabric. MADs move when the fabric is pumped.
class SimMadPort final : public MadPort, public fabric::MadAgent {
 public:
  // Serves the SM's classes (SMInfo requests and traps, SA queries) on `port`.
  static Result<std::unique_ptr<SimMadPort>> attach(fabric::Fabric& fabric, fabric::PortRef port);
  ~SimMadPort() override;

  Result<void> send(const Mad& mad) override;
  std::optional<Mad> receive() override;
  void on_mad(fabric::PortRef at, const Mad& mad) override;

  fabric::PortRef port() const { return port_; }

 private:
  SimMadPort(fabric::Fabric& f, fabric::PortRef p) : fabric_(f), port_(p) {}
  fabric::Fabric& fabric_;
  fabric::PortRef port_;
  fabric::AgentId id_ = 0;
  RingQueue<Mad> inbox_;
};

}  // namespace softib::sm
