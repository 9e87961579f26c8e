// Fuzzes what softibd reads from a client and a client reads from softibd: the SIB1 fragment
// assembler and every payload decoder. Malformed input is a ParseError, never a crash; what
// decodes re-encodes to the same bytes.
#include <cstdint>

#include "base/assert.hpp"
#include "fuzz_target.hpp"
#include "ipc/protocol.hpp"

using namespace softib;
using namespace softib::ipc;

namespace {

template <class Decode>
void check(wire::ByteSpan in, Decode decode) {
  auto v = decode(in);
  if (!v) return;
  Writer w;
  encode(w, *v);
  SOFTIB_ASSERT_MSG(w.data().size() == in.size() && std::equal(w.data().begin(), w.data().end(), in.begin()),
                    "a decoded payload re-encodes to the same bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const wire::ByteSpan in(data + 1, size - 1);
  switch (data[0] % 7) {
    case 0: check(in, [](wire::ByteSpan b) { return decode_node_entry(b); }); break;
    case 1: check(in, [](wire::ByteSpan b) { return decode_port_state(b); }); break;
    case 2: check(in, [](wire::ByteSpan b) { return decode_register(b); }); break;
    case 3: check(in, [](wire::ByteSpan b) { return decode_mad(b); }); break;
    case 4: check(in, [](wire::ByteSpan b) { return decode_fabric_info(b); }); break;
    case 5: {
      auto batch = decode_mad_batch(in);
      if (batch) {
        Writer w;
        encode_batch(w, *batch);
        SOFTIB_ASSERT(w.data().size() == in.size());
      }
      break;
    }
    default: {
      // A stream of fragments, each prefixed by a one-byte length.
      Assembler a;
      size_t at = 0;
      while (at < in.size()) {
        const size_t n = std::min<size_t>(in[at], in.size() - at - 1);
        auto m = a.feed(in.subspan(at + 1, n));
        if (!m) break;
        at += 1 + n;
      }
      break;
    }
  }
  return 0;
}
