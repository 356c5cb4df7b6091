//===- InterleavedOrder.cpp - the chunk order of interleaved schedules ----===//

#include "lib/Generate/InterleavedOrder.h"

#include <algorithm>

using namespace sched;

InterleavedOrder sched::interleavedOrder(const PipelineShape &shape) {
  const int32_t m = shape.microbatches;
  const int32_t groups = std::max(1, m / shape.pp);
  InterleavedOrder order;
  int32_t first = 0;
  for (int32_t g = 0; g < groups; ++g) {
    const int32_t size = m / groups + (g < m % groups ? 1 : 0);
    order.largestGroup = std::max(order.largestGroup, size);
    for (int32_t chunk = 0; chunk < shape.vpp; ++chunk)
      for (int32_t mb = first; mb < first + size; ++mb)
        order.forwards.push_back({chunk, mb});
    for (int32_t chunk = shape.vpp - 1; chunk >= 0; --chunk)
      for (int32_t mb = first; mb < first + size; ++mb)
        order.backwards.push_back({chunk, mb});
    first += size;
  }
  return order;
}
