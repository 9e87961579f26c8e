#include "tools/discovery.hpp"

#include <deque>
#include <unordered_map>

#include <fmt/format.h>

#include "mad/codec.hpp"
#include "mad/node_description.hpp"
#include "mad/switch_info.hpp"

namespace softib::tools {

namespace {

constexpr uint16_t kAttrNodeDescription = 0x0010, kAttrNodeInfo = 0x0011, kAttrSwitchInfo = 0x0012, kAttrPortInfo = 0x0015;

uint64_t tid_of(const MadBytes& m) {
  uint64_t v = 0;
  for (size_t i = 8; i < 16; ++i) v = (v << 8) | m[i];
  return v;
}

enum class Kind : uint8_t { kNodeInfo, kNodeDesc, kSwitchInfo, kPortInfo };

struct Query {
  Kind kind;
  std::vector<uint8_t> path;
  int node = -1;         // NodeDesc/SwitchInfo/PortInfo: whose; NodeInfo: the node we came from
  uint8_t port = 0;      // PortInfo: which; NodeInfo: the port we left by
  uint64_t tid = 0;
  int tries = 0;
  TimePoint deadline{};
  bool answered = false;  // its answer waits in the ring (Engine::answers_)
  bool failed = false;
};

class Engine {
 public:
  Engine(MadRpc& rpc, const DiscoverOptions& o)
      : rpc_(rpc), options_(o), answers_(std::max<size_t>(o.window, 1)) {}

  Result<DiscoveredFabric> run() {
    push(Kind::kNodeInfo, {}, -1, 0);
    while (head_ < queue_.size()) {
      // Handle every answer that is next in line, then refill the window in one batch.
      while (head_ < next_ && (queue_[head_].answered || queue_[head_].failed)) {
        Query& q = queue_[head_];
        if (q.answered) SOFTIB_TRY(handle(q, answers_[head_ % answers_.size()]));
        else if (head_ == 0) return Status(Code::kTimeout, "discover failed: no answer from the local port");
        q.path.clear();
        q.path.shrink_to_fit();
        ++head_;
      }
      SOFTIB_TRY(launch());
      if (head_ < next_) SOFTIB_TRY(receive());
    }
    fabric_.mads = sent_;
    return std::move(fabric_);
  }

 private:
  void push(Kind k, std::vector<uint8_t> path, int node, uint8_t port) {
    queue_.push_back(Query{k, std::move(path), node, port, 0, 0, {}, false, false});
  }

  MadRequest request_of(const Query& q) const {
    MadRequest r;
    r.to = Destination::route(q.path);
    r.mgmt_class = 0x81;
    switch (q.kind) {
      case Kind::kNodeInfo: r.attribute_id = kAttrNodeInfo; break;
      case Kind::kNodeDesc: r.attribute_id = kAttrNodeDescription; break;
      case Kind::kSwitchInfo: r.attribute_id = kAttrSwitchInfo; break;
      case Kind::kPortInfo:
        r.attribute_id = kAttrPortInfo;
        r.attribute_modifier = q.port;
        break;
    }
    return r;
  }

  Result<void> launch() {
    const size_t window = answers_.size();
    const size_t first = next_;
    std::vector<MadRequest> batch;
    while (next_ + batch.size() < queue_.size() && next_ + batch.size() - head_ < window)
      batch.push_back(request_of(queue_[next_ + batch.size()]));
    if (batch.empty()) return {};
    auto tids = rpc_.send_requests(batch);
    if (!tids) return Err{tids.error()};
    const TimePoint deadline = clock_.now() + rpc_.options().timeout;
    for (size_t i = 0; i < batch.size(); ++i) {
      Query& q = queue_[first + i];
      q.tid = (*tids)[i];
      q.deadline = deadline;
      by_tid_[q.tid] = first + i;
    }
    next_ += batch.size();
    sent_ += static_cast<uint32_t>(batch.size());
    return {};
  }

  Result<void> receive() {
    // Queries go out in order with the same timeout, so the oldest one still waiting has
    // the earliest deadline (a retried one's later deadline only delays the others' check).
    TimePoint earliest = TimePoint::max();
    for (size_t i = head_; i < next_; ++i)
      if (!queue_[i].answered && !queue_[i].failed) {
        earliest = queue_[i].deadline;
        break;
      }
    auto got = rpc_.next_response(earliest);
    if (!got) return Err{got.error()};
    if (*got) {
      auto it = by_tid_.find(tid_of(**got));
      if (it != by_tid_.end()) {
        answers_[it->second % answers_.size()] = **got;
        queue_[it->second].answered = true;
        by_tid_.erase(it);
      }
      return {};
    }
    const TimePoint now = clock_.now();
    for (size_t i = head_; i < next_; ++i) {
      Query& q = queue_[i];
      if (q.answered || q.failed || q.deadline > now) continue;
      if (q.tries < rpc_.options().retries) {
        ++q.tries;
        q.deadline = now + rpc_.options().timeout;
        SOFTIB_TRY(rpc_.resend(request_of(q), q.tid));
        ++sent_;
      } else {
        q.failed = true;
        by_tid_.erase(q.tid);
      }
    }
    return {};
  }

  // The answer's data, or nullopt for a MAD that carries an error status.
  static std::optional<std::span<const uint8_t>> data_of(const MadBytes& m) {
    const uint16_t status = static_cast<uint16_t>(((m[4] & 0x7F) << 8) | m[5]);
    if (status != 0) return std::nullopt;
    return std::span<const uint8_t>(m.data() + 64, 64);
  }

  Result<void> handle(const Query& q, const MadBytes& answer) {
    auto data = data_of(answer);
    if (!data) return {};
    switch (q.kind) {
      case Kind::kNodeInfo: return on_node_info(q, *data);
      case Kind::kNodeDesc: {
        auto d = mad::decode<mad::NodeDescription>(*data);
        if (d) fabric_.nodes[static_cast<size_t>(q.node)].description = d->text();
        return {};
      }
      case Kind::kSwitchInfo: {
        auto si = mad::decode<mad::SwitchInfo>(*data);
        if (si) fabric_.nodes[static_cast<size_t>(q.node)].enhanced_port0 = si->enhanced_port0;
        return {};
      }
      case Kind::kPortInfo: return on_port_info(q, *data);
    }
    return {};
  }

  Result<void> on_node_info(const Query& q, std::span<const uint8_t> data) {
    auto ni = mad::decode<mad::NodeInfo>(data);
    if (!ni) return {};  // a malformed answer: as if none came
    const uint64_t guid = ni->node_guid.value();
    auto known = guid_index_.find(guid);
    int idx = known == guid_index_.end() ? -1 : known->second;
    const bool is_new = idx < 0;
    if (is_new) {
      idx = static_cast<int>(fabric_.nodes.size());
      DiscoveredNode n;
      n.guid = guid;
      n.type = static_cast<uint8_t>(ni->node_type);
      n.num_ports = ni->num_ports;
      n.info = *ni;
      n.path = q.path;
      n.ports.resize(size_t{ni->num_ports} + 1);
      fabric_.nodes.push_back(std::move(n));
      guid_index_[guid] = idx;
      fabric_.max_hops = std::max<unsigned>(fabric_.max_hops, static_cast<unsigned>(q.path.size()));
    }
    DiscoveredNode& node = fabric_.nodes[static_cast<size_t>(idx)];
    const uint8_t pn = ni->local_port_num;
    if (pn > node.num_ports) return {};
    auto& port = node.ports[pn];
    if (!port) {
      port.emplace();
      port->num = pn;
    }
    port->guid = ni->port_guid.value();
    if (q.node < 0) {
      fabric_.from_node = idx;
      fabric_.from_port = pn;
    } else {
      auto& rp = fabric_.nodes[static_cast<size_t>(q.node)].ports[q.port];
      if (rp) {
        // Re-linking drops whatever either end was linked to before (libibnetdisc's rule).
        if (port->remote_node >= 0) {
          auto& old = fabric_.nodes[static_cast<size_t>(port->remote_node)].ports[port->remote_port];
          if (old) old->remote_node = -1;
        }
        if (rp->remote_node >= 0) {
          auto& old = fabric_.nodes[static_cast<size_t>(rp->remote_node)].ports[rp->remote_port];
          if (old) old->remote_node = -1;
        }
        port->remote_node = q.node;
        port->remote_port = q.port;
        rp->remote_node = idx;
        rp->remote_port = pn;
      }
    }
    if (is_new) {
      push(Kind::kNodeDesc, q.path, idx, 0);
      if (node.type == 2) {
        push(Kind::kSwitchInfo, q.path, idx, 0);
        push(Kind::kPortInfo, q.path, idx, 0);
      }
    }
    if (node.type != 2) push(Kind::kPortInfo, q.path, idx, pn);
    return {};
  }

  Result<void> on_port_info(const Query& q, std::span<const uint8_t> data) {
    auto pi = mad::decode<mad::PortInfo>(data);
    if (!pi) return {};
    DiscoveredNode& node = fabric_.nodes[static_cast<size_t>(q.node)];
    if (q.port > node.num_ports) return {};
    auto& port = node.ports[q.port];
    if (!port) {
      port.emplace();
      port->num = q.port;
      port->guid = node.info.port_guid.value();
    }
    port->info = *pi;
    port->have_info = true;
    port->base_lid = pi->lid.value();
    port->lmc = pi->lmc;
    if (q.port == 0) {
      node.sma_lid = port->base_lid;
      node.sma_lmc = port->lmc;
    } else if (node.type == 2) {
      port->base_lid = node.sma_lid;
      port->lmc = node.sma_lmc;
    }
    const bool link_up = pi->port_physical_state == mad::PhysPortState::kLinkUp;
    if (q.port != 0 && link_up &&
        ((node.type == 2 && q.port != pi->local_port_num) ||
         (q.node == fabric_.from_node && q.port == fabric_.from_port))) {
      std::vector<uint8_t> path = q.path;
      bool go = false;
      if (node.type != 2 && q.node == fabric_.from_node && path.size() > 1) {
        path.pop_back();  // retracting from a CA given as the start
        go = true;
      } else if (node.type == 2 || path.empty()) {
        if (options_.max_hops == 0 || path.size() < options_.max_hops) {
          path.push_back(q.port);
          go = true;
        }
      }
      if (go) push(Kind::kNodeInfo, std::move(path), q.node, q.port);
    }
    if (q.port == 0)
      for (uint8_t p = 1; p <= node.num_ports; ++p) push(Kind::kPortInfo, q.path, q.node, p);
    return {};
  }

  MadRpc& rpc_;
  DiscoverOptions options_;
  SteadyClock clock_;
  std::deque<Query> queue_;
  std::vector<MadBytes> answers_;  // ring: query i's answer at i % size (size = the window)
  size_t head_ = 0, next_ = 0;
  std::unordered_map<uint64_t, size_t> by_tid_;
  std::unordered_map<uint64_t, int> guid_index_;
  DiscoveredFabric fabric_;
  uint32_t sent_ = 0;

};

}  // namespace

uint16_t DiscoveredNode::lid_of(uint8_t port) const {
  if (type == 2) return sma_lid;
  return port < ports.size() && ports[port] ? ports[port]->base_lid : 0;
}

int DiscoveredFabric::find_guid(uint64_t node_guid) const {
  for (size_t i = nodes.size(); i-- > 0;)
    if (nodes[i].guid == node_guid) return static_cast<int>(i);
  return -1;
}

std::vector<int> DiscoveredFabric::listing(uint8_t type) const {
  std::vector<int> out;
  for (size_t i = nodes.size(); i-- > 0;)
    if (type == 0 || nodes[i].type == type) out.push_back(static_cast<int>(i));
  return out;
}

Result<DiscoveredFabric> discover(MadRpc& rpc, const DiscoverOptions& options) {
  Engine e(rpc, options);
  return e.run();
}

}  // namespace softib::tools
